"""Stopping work when the process is asked to stop (SIGINT, SIGTERM), without raising through native code.

CP-SAT runs its search in native threads and calls back into Python (solution callbacks). An exception
raised by a signal handler lands in whatever Python frame the main thread is running, which can be such a
callback: the native caller then aborts the process (``std::bad_function_call``, SIGABRT). So the handler
installed here never raises. It records the signal and asks every registered search to stop
(``CpSolver.stop_search()``, the documented way to end a search early, safe from any thread); the code that
started the search then raises :class:`Interrupted` in its own, ordinary Python frame once the search has
returned, and the runtime stops dispatching nodes when it sees the request.

A search can only be stopped once CP-SAT has created its native wrapper, a few microseconds after
``solve`` is entered; a stop requested in between would be lost. A daemon thread therefore repeats the stop
for every registered search while a stop is pending, so no search outlives the request by more than
:data:`RESTOP_SECONDS`.

CP-SAT's own SIGINT handler (``catch_sigint_signal``, on by default) is the one that aborts; every solver
this project creates turns it off (:func:`alas_argo.jssp.searching.new_solver`).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Protocol

__all__ = [
    "RESTOP_SECONDS",
    "Interrupted",
    "Stoppable",
    "check",
    "handlers_installed",
    "handling_signals",
    "request_stop",
    "reset",
    "stop_requested",
    "stoppable",
]

#: How often a pending stop is repeated for every registered search (see the module docstring).
RESTOP_SECONDS = 0.02

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stoppable(Protocol):
    """Anything whose work can be asked to end early from another thread (a CP-SAT solver)."""

    def stop_search(self) -> None: ...


class Interrupted(BaseException):
    """The process was asked to stop (SIGINT or SIGTERM) and the work in progress stopped cleanly.

    A ``BaseException``, like ``KeyboardInterrupt``: no ``except Exception`` (a retry policy, a fallback, a
    replay that reports failures as drift) may swallow it or try the work again.

    Args:
        signum: The signal that asked for the stop.
        where: What was running when it stopped (a node, a solve).
    """

    def __init__(self, signum: int, where: str | None = None) -> None:
        super().__init__(signum, where)  # the constructor's arguments: it pickles across processes
        self.signum = signum
        self.where = where
        #: One line for people on what stopped and what was kept (set by the command that knows).
        self.summary: str | None = None

    @property
    def signal_name(self) -> str:
        """SIGINT or SIGTERM."""
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        """The shell convention: 128 + the signal number (130 for SIGINT, 143 for SIGTERM)."""
        return 128 + self.signum

    def __str__(self) -> str:
        return f"interrupted by {self.signal_name}" + (f" during {self.where}" if self.where else "")


_lock = threading.RLock()  # re-entrant: the handler runs on the main thread, which may hold it already
_registered: set[Stoppable] = set()
_pending = threading.Event()
_state: dict[str, int | None] = {"signum": None}
_restopper: list[threading.Thread] = []


def stop_requested() -> int | None:
    """The signal number of a pending stop request, or None."""
    return _state["signum"] if _pending.is_set() else None


def check(where: str | None = None) -> None:
    """Raise :class:`Interrupted` when a stop was requested (call it in ordinary Python frames only)."""
    signum = stop_requested()
    if signum is not None:
        raise Interrupted(signum, where)


def _stop_all(*, if_pending: bool = False) -> None:
    """Stop every registered search; with ``if_pending``, only while the request is still pending.

    The pending check and the list of searches are read together under the lock that :func:`reset` takes: the
    repeater wakes for a request, and when that request is forgotten before it stops anything, a search
    registered after the reset must not be stopped. Without the check the next command's (or test's) first
    solve could be stopped by the previous request and end without a solution (seen once in the suite:
    tests/jssp/test_searching.py, a search that never found its first solution).
    """
    with _lock:
        if if_pending and not _pending.is_set():
            return
        targets = list(_registered)
    for target in targets:
        target.stop_search()


def request_stop(signum: int = signal.SIGINT) -> None:
    """Ask every registered search, and every later one, to stop. Never raises (it runs in signal handlers).

    The first signal is the one reported; a second one only repeats the request.
    """
    if not _pending.is_set():
        _state["signum"] = signum
        _pending.set()
    _stop_all()


def reset() -> None:
    """Forget a stop request (the end of a command, or a test)."""
    # Under the lock: the repeater reads the request and the searches to stop in one step, so a search
    # registered after the request is forgotten is never stopped by it (see _stop_all).
    with _lock:
        _pending.clear()
        _state["signum"] = None


@contextmanager
def stoppable(target: Stoppable, where: str | None = None) -> Iterator[None]:
    """Register ``target`` for stop requests while the block runs.

    Raises:
        Interrupted: A stop was requested before the block started (it does not run) or while it ran
            (raised after the block, in the caller's frame).
    """
    check(where)
    with _lock:
        _registered.add(target)
    try:
        yield
    finally:
        with _lock:
            _registered.discard(target)
    check(where)


def _restop_loop() -> None:
    while True:
        _pending.wait()
        _stop_all(if_pending=True)
        time.sleep(RESTOP_SECONDS)


def _handler(signum: int, _frame: FrameType | None) -> None:
    request_stop(signum)


@contextmanager
def handling_signals() -> Iterator[None]:
    """Turn SIGINT and SIGTERM into stop requests while the block runs (main thread only; elsewhere a no-op).

    The previous handlers come back afterwards and the stop request is forgotten, so one process can run
    several commands (tests do).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # None started yet, or this process was forked from one that started it (a thread does not survive a fork).
    if not any(t.is_alive() for t in _restopper):
        thread = threading.Thread(target=_restop_loop, name="alas-restop", daemon=True)
        thread.start()
        _restopper[:] = [thread]
    previous = {s: signal.signal(s, _handler) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
        reset()


def handlers_installed() -> bool:
    """Whether SIGINT is currently turned into stop requests (so a main-thread search must stay stoppable)."""
    return signal.getsignal(signal.SIGINT) is _handler
