"""The dispatcher at its edges: what a handler call sends back across a process boundary (an error that cannot be
pickled becomes a RemoteError that keeps its names; an output that cannot be sent back is a ContractError), how a
timed call is stopped in a forked child (a daemon, SIGKILL after SIGTERM, a dead child named with its exit code)
or abandoned in a daemon thread, what a cancelled node's call answers, and the process pool's shutdown.

The child-side bodies (``_child``, ``_invoke``, ``_portable_error``) are also called here in this process: run in a
fork or a pool worker, they are invisible to coverage and to mutation testing."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from alas_argo.errors import AlasError, TransientError
from alas_argo.runtime import FakeClock, NodeContext, NodeTimeout, Runtime
from alas_argo.runtime.dispatch import Dispatcher, _child, _invoke, _portable_error
from alas_argo.runtime.policies import RemoteError
from tests.runtime.runtime_helpers import FOREVER, pid_alive, workflow


class Unsendable(TransientError):
    """A transient error that cannot be pickled (it holds a lock)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


class BadValue(ValueError):
    """A permanent error that cannot be pickled."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


def context(cancelled: bool = False) -> NodeContext:
    event = threading.Event()
    if cancelled:
        event.set()
    return NodeContext(node_id="a", role="f", attempt=1, run_id="r", workflow="t", cancel_event=event)


def echo(ctx: NodeContext, inputs: dict[str, Any]) -> Any:
    return [ctx.node_id, inputs]


def test_a_picklable_error_crosses_as_itself_and_another_as_a_remote_error_with_its_names() -> None:
    plain = KeyError("k")
    assert _portable_error(plain) is plain
    remote = _portable_error(Unsendable("boom"))
    assert isinstance(remote, RemoteError) and remote.message == "Unsendable: boom"
    assert remote.type_names == ("Unsendable", "TransientError", "AlasError", "Exception")
    assert remote.transient is True
    permanent = _portable_error(BadValue("bad"))
    assert isinstance(permanent, RemoteError) and permanent.message == "BadValue: bad"
    assert permanent.type_names == ("BadValue", "ValueError", "Exception") and permanent.transient is False


def test_a_pool_call_returns_the_output_and_raises_a_portable_error() -> None:
    assert _invoke(echo, context(), {"x": 1}) == ["a", {"x": 1}]

    def unsendable(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        raise Unsendable("boom")
    with pytest.raises(RemoteError) as raised:
        _invoke(unsendable, context(), {})
    assert raised.value.type_names[0] == "Unsendable" and raised.value.__suppress_context__


def _sent(handler: Any, inputs: dict[str, Any]) -> Any:
    receiver, sender = mp.Pipe(duplex=False)
    _child(sender, handler, context(), inputs)
    assert sender.closed
    message = receiver.recv()
    receiver.close()
    return message


def test_a_forked_call_sends_back_its_output_or_its_error() -> None:
    assert _sent(echo, {"x": 1}) == ("ok", ["a", {"x": 1}])

    def fails(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        raise KeyError("nope")
    kind, error = _sent(fails, {})
    assert kind == "err" and isinstance(error, KeyError) and error.args == ("nope",)

    def unsendable(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        raise Unsendable("boom")
    kind, error = _sent(unsendable, {})
    assert kind == "err" and isinstance(error, RemoteError) and error.transient is True


def test_an_output_that_cannot_be_sent_back_is_a_permanent_contract_error() -> None:
    def lock(ctx: NodeContext, inputs: dict[str, Any]) -> Any:
        return threading.Lock()
    kind, error = _sent(lock, {})
    assert kind == "err" and isinstance(error, RemoteError)
    assert error.message == "output cannot be sent back from the child: cannot pickle '_thread.lock' object"
    assert error.type_names == ("ContractError",) and error.transient is False


def test_the_default_dispatcher_runs_a_timed_call_in_a_forked_daemon_child() -> None:
    def where(ctx: NodeContext, inputs: dict[str, Any]) -> Any:
        return [os.getpid(), mp.current_process().daemon, inputs]
    pid, daemon, inputs = Dispatcher().call(where, context(), {"x": 1}, 30)
    assert pid != os.getpid() and daemon is True and inputs == {"x": 1}


def test_a_child_that_dies_is_named_with_its_exit_code() -> None:
    parent = os.getpid()

    def dies(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        if os.getpid() == parent:  # not forked: exiting would end the test run itself
            raise RuntimeError("the timed call was not forked")
        os._exit(7)
    with pytest.raises(AlasError) as died:
        Dispatcher().call(dies, context(), {}, 30)
    assert str(died.value) == "handler process died with exit code 7 (node a)"


def test_a_child_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    def stubborn(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pid_file.write_text(str(os.getpid()))
        # Not forever: a dispatcher that waited for it would leave a process nothing can SIGTERM (one that
        # outlived a mutation run kept the run's output pipe open); after 20 s it says it was not killed.
        time.sleep(20)
        (tmp_path / "woke").touch()
    with pytest.raises(NodeTimeout) as stopped:
        Dispatcher().call(stubborn, context(), {}, 1.0)
    assert str(stopped.value) == "attempt 1 timed out after 1 s and was stopped (node a)"
    assert not (tmp_path / "woke").exists()
    if pid_file.exists():  # a slow fork may be stopped before the handler's first line
        assert not pid_alive(int(pid_file.read_text()))


def test_a_forked_call_of_a_cancelled_node_is_stopped() -> None:
    def forever(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        time.sleep(FOREVER)
    with pytest.raises(AlasError) as stopped:
        Dispatcher().call(forever, context(cancelled=True), {}, 30)
    assert str(stopped.value) == "call stopped: the node was cancelled (node a)"


class Receiver:
    """The parent's end of the pipe, as ``_wait`` sees it: ``poll`` answers ``ready`` and, on its
    ``cancel_at``-th call, cancels the node."""

    def __init__(self, ctx: NodeContext, *, ready: bool, cancel_at: int = 0) -> None:
        self.ctx, self.ready, self.cancel_at = ctx, ready, cancel_at
        self.polls: list[float] = []

    def poll(self, seconds: float) -> bool:
        self.polls.append(seconds)
        if len(self.polls) == self.cancel_at and self.ctx.cancel_event is not None:
            self.ctx.cancel_event.set()
        return self.ready


def test_waiting_for_a_child_ends_with_its_message_or_soon_after_a_cancellation() -> None:
    ctx = context()
    assert Dispatcher._wait(Receiver(ctx, ready=True), ctx, 0.5) is True
    receiver = Receiver(ctx, ready=False, cancel_at=3)
    assert Dispatcher._wait(receiver, ctx, 30) is False
    # Polled in short slices, so a cancelled node's child is killed at once, not at its 30 s limit.
    assert len(receiver.polls) == 3 and max(receiver.polls) <= 0.05


def test_a_timed_call_in_a_thread_returns_the_output_or_raises_the_handlers_error() -> None:
    dispatcher = Dispatcher("thread", 1, "thread")

    def slow_echo(ctx: NodeContext, inputs: dict[str, Any]) -> Any:
        threading.Event().wait(0.1)  # still running when the dispatcher first looks
        return inputs
    assert dispatcher.call(slow_echo, context(), {"x": 1}, 30) == {"x": 1}
    error = KeyError("nope")

    def fails(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        raise error
    with pytest.raises(KeyError) as raised:
        dispatcher.call(fails, context(), {}, 30)
    assert raised.value is error


def test_an_abandoned_call_runs_on_in_a_daemon_thread_named_for_its_node() -> None:
    seen: list[threading.Thread] = []

    def stuck(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        seen.append(threading.current_thread())
        deadline = time.monotonic() + 10
        while not ctx.cancelled() and time.monotonic() < deadline:
            time.sleep(0.005)
    with pytest.raises(NodeTimeout) as stopped:
        Dispatcher("thread", 1, "thread").call(stuck, context(), {}, 0.1)
    assert str(stopped.value) == "attempt 1 timed out after 0.1 s; the thread was abandoned (node a)"
    [thread] = seen
    # A daemon: a handler that never returns cannot keep the process from exiting.
    assert thread.daemon is True and thread.name == "alas-node-a"
    thread.join(10)


def test_a_thread_call_of_a_cancelled_node_is_abandoned() -> None:
    def stuck(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        deadline = time.monotonic() + 10
        while not ctx.cancelled() and time.monotonic() < deadline:
            time.sleep(0.005)
    with pytest.raises(AlasError) as stopped:
        Dispatcher("thread", 1, "thread").call(stuck, context(cancelled=True), {}, 30)
    assert str(stopped.value) == "call abandoned: the node was cancelled (node a)"


def pid(ctx: NodeContext, inputs: dict[str, Any]) -> int:
    return os.getpid()


def test_closing_the_process_pool_ends_its_workers_and_closing_twice_is_harmless() -> None:
    dispatcher = Dispatcher("process", 1)
    worker = dispatcher.call(pid, context(), {}, None)
    assert worker != os.getpid() and pid_alive(worker)
    dispatcher.close()
    dispatcher.close()
    assert not pid_alive(worker)  # joined, not left running or unreaped


def unsendable_once(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    if ctx.attempt == 1:
        raise Unsendable("first attempt")
    return {"attempt": ctx.attempt}


def test_an_unpicklable_transient_error_in_a_pool_worker_is_still_retried() -> None:
    wf = workflow([{"id": "a", "role": "f", "policyRef": "r"}],
                  policies={"r": {"retry": {"maxAttempts": 2, "backoff": {"initial": 0}}}})
    result = Runtime({"f": unsendable_once}, pool="process", max_workers=1, clock=FakeClock()).run(wf)
    assert result.ok and result.output("a") == {"attempt": 2}
