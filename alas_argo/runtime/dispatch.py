"""Where a handler call actually runs, and how a timeout stops it.

Every node's life (attempts, backoff, loops) is driven by a thread of the runtime; the handler call
itself goes through a :class:`Dispatcher`:

- untimed calls run in that thread (``pool="thread"``) or in a worker of a process pool
  (``pool="process"``, for CPU-bound handlers: it sidesteps the GIL, so both cores work);
- timed calls (the node's policy has a ``timeout``) run in a dedicated child process forked for the
  call (``timeout_mode="process"``, the default). A thread cannot be killed, a process can: when the
  timeout passes, the child is terminated (SIGTERM, then SIGKILL) and the attempt fails with
  ``Timeout``. Forking is cheap on Linux and needs no pickling of the handler, so closures work. If the
  fork lands while another thread holds a lock the child needs, the child can only hang until its
  timeout kills it - a bounded, retried failure, never a stuck run. The price: a timed handler runs in a
  copy of the process, so what it changes in memory (an in-memory journal, a cache) is not seen by the
  parent - only its return value (and errors) come back. Handlers with in-memory side effects should
  use ``timeout_mode="thread"`` or write through durable storage.
- ``timeout_mode="thread"`` is the portable fallback: the call runs in a daemon thread, and on timeout
  the runtime sets ``ctx.cancel_event`` (cooperative handlers return early), abandons the thread and
  fails the attempt. The node is failed on time either way; only the process mode frees the CPU.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import pickle
import sys
import threading
import time
import warnings
from dataclasses import replace
from typing import Any, Literal

from alas_argo.errors import AlasError, TransientError
from alas_argo.runtime.context import Handler, NodeContext
from alas_argo.runtime.policies import NodeTimeout, RemoteError

__all__ = ["Dispatcher", "PoolKind", "TimeoutMode"]

PoolKind = Literal["thread", "process"]
TimeoutMode = Literal["process", "thread"]


def _portable_error(exc: BaseException) -> BaseException:
    """``exc`` itself if it survives pickling, else a RemoteError carrying its names."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        names = [c.__name__ for c in type(exc).__mro__ if c not in (object, BaseException)]
        return RemoteError(f"{type(exc).__name__}: {exc}", names, transient=isinstance(exc, TransientError))


def _invoke(handler: Handler, ctx: NodeContext, inputs: dict[str, Any]) -> Any:
    """Body of a process-pool call: errors are made portable before they cross back."""
    try:
        return handler(ctx, inputs)
    except Exception as e:
        raise _portable_error(e) from None


def _child(conn: Any, handler: Handler, ctx: NodeContext, inputs: dict[str, Any]) -> None:
    """Body of a forked timed call: send ("ok", output) or ("err", error) back through the pipe."""
    try:
        message: tuple[str, Any] = ("ok", handler(ctx, inputs))
    except BaseException as e:
        message = ("err", _portable_error(e))
    try:
        conn.send(message)
    except Exception as e:
        conn.send(("err", RemoteError(f"output cannot be sent back from the child: {e}", ["ContractError"],
                                      transient=False)))
    finally:
        conn.close()


def _pool_warmup() -> int:
    return 0


class Dispatcher:
    """Runs handler calls inline, on a process pool, or in a killable child when they have a timeout."""

    def __init__(self, pool: PoolKind = "thread", max_workers: int = 2,
                 timeout_mode: TimeoutMode = "process") -> None:
        self.pool_kind = pool
        self.timeout_mode = timeout_mode
        self._fork = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        self._pool: cf.ProcessPoolExecutor | None = None
        if pool == "process":
            # Workers are forked now, from the caller's thread, before the runtime starts its own
            # threads: a fork of a single-threaded parent cannot inherit a held lock.
            self._pool = cf.ProcessPoolExecutor(max_workers=max_workers, mp_context=self._fork)
            self._pool.submit(_pool_warmup).result()

    def close(self) -> None:
        """Shut the process pool down (idempotent)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def call(self, handler: Handler, ctx: NodeContext, inputs: dict[str, Any], timeout: float | None) -> Any:
        """Run one handler call; NodeTimeout if it outlives ``timeout`` seconds."""
        if timeout is not None:
            if self.timeout_mode == "process" and self._fork is not None:
                return self._call_forked(handler, ctx, inputs, timeout)
            return self._call_thread(handler, ctx, inputs, timeout)
        if self._pool is not None:
            return self._pool.submit(_invoke, handler, ctx.portable(), inputs).result()
        return handler(ctx, inputs)

    def _call_forked(self, handler: Handler, ctx: NodeContext, inputs: dict[str, Any], timeout: float) -> Any:
        assert self._fork is not None
        receiver, sender = self._fork.Pipe(duplex=False)
        proc = self._fork.Process(target=_child, args=(sender, handler, ctx.portable(), inputs), daemon=True)
        with warnings.catch_warnings():
            if sys.version_info >= (3, 12):
                # 3.12 warns on fork in a threaded process; the module docstring says why it is bounded.
                warnings.simplefilter("ignore", DeprecationWarning)
            proc.start()
        sender.close()
        try:
            if self._wait(receiver, ctx, timeout):
                try:
                    kind, value = receiver.recv()
                except EOFError:
                    proc.join()
                    raise AlasError(f"handler process died with exit code {proc.exitcode}",
                                    where={"node": ctx.node_id}) from None
                if kind == "err":
                    raise value
                return value
            if ctx.cancelled():
                raise AlasError("call stopped: the node was cancelled", where={"node": ctx.node_id})
            raise NodeTimeout(f"attempt {ctx.attempt} timed out after {timeout:g} s and was stopped",
                              where={"node": ctx.node_id})
        finally:
            receiver.close()
            if proc.is_alive():
                proc.terminate()
                proc.join(0.5)
                if proc.is_alive():
                    proc.kill()
            proc.join()

    @staticmethod
    def _wait(receiver: Any, ctx: NodeContext, timeout: float) -> bool:
        """Wait for the child's message; False on timeout or when the node is cancelled meanwhile (an
        any_of loser), so the child is killed at once instead of at its timeout."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or ctx.cancelled():
                return False
            if receiver.poll(min(left, 0.05)):
                return True

    def _call_thread(self, handler: Handler, ctx: NodeContext, inputs: dict[str, Any], timeout: float) -> Any:
        box: dict[str, Any] = {}
        # One event per call: setting it tells this call's handler to stop without poisoning the
        # node's next attempt.
        stop = threading.Event()
        call_ctx = replace(ctx, cancel_event=stop)

        def body() -> None:
            try:
                box["ok"] = handler(call_ctx, inputs)
            except BaseException as e:
                box["err"] = e

        t = threading.Thread(target=body, name=f"alas-node-{ctx.node_id}", daemon=True)
        t.start()
        deadline = time.monotonic() + timeout
        while t.is_alive() and time.monotonic() < deadline and not ctx.cancelled():
            t.join(min(deadline - time.monotonic(), 0.05))
        if t.is_alive():
            stop.set()
            if ctx.cancelled():
                raise AlasError("call abandoned: the node was cancelled", where={"node": ctx.node_id})
            raise NodeTimeout(f"attempt {ctx.attempt} timed out after {timeout:g} s; the thread was "
                              "abandoned", where={"node": ctx.node_id})
        if "err" in box:
            raise box["err"]
        return box["ok"]
