"""Edges of alas_argo.interrupts left open by mutation testing: the repeater (a pending stop is repeated for a
registered search; a request forgotten while the repeater waits for the lock stops no search registered after
it; a forked process gets a repeater of its own), what :class:`Interrupted` says and carries, and what
`handling_signals` and `stoppable` undo when their block raises or runs off the main thread."""

from __future__ import annotations

import multiprocessing as mp
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection

import pytest

from alas_argo import interrupts


class Search:
    """A stand-in for a CP-SAT solver: counts the stop requests it got; ``repeated`` is set at the third."""

    def __init__(self) -> None:
        self.stops = 0
        self.repeated = threading.Event()

    def stop_search(self) -> None:
        self.stops += 1
        if self.stops >= 3:
            self.repeated.set()


def until(condition: Callable[[], bool], what: str) -> None:
    """Poll ``condition`` (at most 5,000 times, a millisecond apart)."""
    for _ in range(5_000):
        if condition():
            return
        time.sleep(0.001)
    pytest.fail(f"never {what}")


def the_repeater() -> threading.Thread:
    (repeater,) = [t for t in threading.enumerate() if t.name == "alas-restop"]
    return repeater


def in_stop_all(thread: threading.Thread) -> bool:
    """Whether ``thread`` is inside ``_stop_all`` (here: waiting for the lock)."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if "_stop_all" in frame.f_code.co_name:
            return True
        frame = frame.f_back
    return False


# -- the repeater -------------------------------------------------------------------------------------------


def test_a_pending_stop_is_repeated_for_a_registered_search() -> None:
    """CP-SAT drops a stop that comes before its native wrapper exists: the repeater asks again."""
    search = Search()
    with interrupts.handling_signals():
        with pytest.raises(interrupts.Interrupted), interrupts.stoppable(search, "a search"):
            interrupts.request_stop(signal.SIGTERM)
            assert search.repeated.wait(10), f"asked {search.stops} time(s)"
        assert the_repeater().is_alive()


def test_a_request_forgotten_while_the_repeater_waits_for_the_lock_stops_no_later_search() -> None:
    """The race `_stop_all(if_pending=True)` closes: the repeater woke for a request, the request is forgotten
    (the end of a command) and the next command's search registers before the repeater acts."""
    late = Search()
    with interrupts.handling_signals():
        repeater = the_repeater()
        interrupts._lock.acquire()
        try:
            interrupts.request_stop(signal.SIGINT)
            until(lambda: in_stop_all(repeater), "the repeater woke for the request")
            interrupts.reset()
            with interrupts.stoppable(late, "the next search"):
                interrupts._lock.release()
                until(lambda: not in_stop_all(repeater), "the repeater acted")
                assert late.stops == 0
        finally:
            if interrupts._lock._is_owned():  # type: ignore[attr-defined]
                interrupts._lock.release()
    assert late.stops == 0 and interrupts.stop_requested() is None


def _forked_child(conn: Connection) -> None:
    search = Search()
    repeated = False
    with interrupts.handling_signals():
        try:
            with interrupts.stoppable(search):
                interrupts.request_stop(signal.SIGTERM)
                repeated = search.repeated.wait(10)
        except interrupts.Interrupted:
            pass
    conn.send((repeated, search.stops))
    conn.close()


def test_a_process_forked_after_the_repeater_started_starts_its_own() -> None:
    """A thread does not survive a fork: the child's `handling_signals` must not take the parent's repeater,
    gone in the child, for its own (it did: a stop in the child was asked once and never repeated)."""
    with interrupts.handling_signals():
        assert the_repeater().is_alive()
    fork = mp.get_context("fork")
    receiver, sender = fork.Pipe(duplex=False)
    child = fork.Process(target=_forked_child, args=(sender,), daemon=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: a fork of a process with threads
        child.start()
    sender.close()
    try:
        assert receiver.poll(20), "the child did not answer"
        repeated, stops = receiver.recv()
    finally:
        receiver.close()
        child.join(20)
    assert repeated, f"the child's search was asked {stops} time(s)"
    assert child.exitcode == 0


# -- Interrupted --------------------------------------------------------------------------------------------


def test_interrupted_carries_the_signal_and_says_where_only_when_known() -> None:
    bare = interrupts.Interrupted(signal.SIGTERM)
    assert (bare.signum, bare.where, bare.summary) == (signal.SIGTERM, None, None)
    assert (bare.signal_name, bare.exit_code) == ("SIGTERM", 143)
    assert str(bare) == "interrupted by SIGTERM"
    assert str(interrupts.Interrupted(signal.SIGINT, "")) == "interrupted by SIGINT"
    assert str(interrupts.Interrupted(signal.SIGINT, "node optimize")) == "interrupted by SIGINT during node optimize"
    # Its arguments are the constructor's: a log line's %r and a pickled copy show both.
    assert repr(interrupts.Interrupted(int(signal.SIGTERM), "node repair_1")) == "Interrupted(15, 'node repair_1')"
    assert bare.args == (signal.SIGTERM, None)


def test_check_raises_only_while_a_stop_is_pending() -> None:
    interrupts.check("nothing asked")
    interrupts.request_stop(signal.SIGTERM)
    with pytest.raises(interrupts.Interrupted) as stopped:
        interrupts.check("node commit")
    assert (stopped.value.signum, stopped.value.where) == (signal.SIGTERM, "node commit")
    interrupts.reset()
    interrupts.check("forgotten")
    assert interrupts.stop_requested() is None


# -- handling_signals and stoppable -------------------------------------------------------------------------


def test_handlers_come_back_and_the_request_is_forgotten_when_the_block_raises() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(RuntimeError, match="the command failed"), interrupts.handling_signals():
        assert all(signal.getsignal(s) is not h for s, h in before.items())
        interrupts.request_stop(signal.SIGINT)
        raise RuntimeError("the command failed")
    assert {s: signal.getsignal(s) for s in before} == before
    assert not interrupts.handlers_installed() and interrupts.stop_requested() is None


def test_off_the_main_thread_handling_signals_installs_nothing_and_forgets_nothing() -> None:
    seen: dict[str, object] = {}

    def worker() -> None:
        with interrupts.handling_signals():
            seen["installed"] = interrupts.handlers_installed()
            interrupts.request_stop(signal.SIGTERM)
        seen["after"] = interrupts.stop_requested()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(60)
    assert seen == {"installed": False, "after": signal.SIGTERM}


def test_a_search_whose_block_raised_is_no_longer_stopped() -> None:
    search = Search()
    with pytest.raises(ValueError, match="the model is wrong"), interrupts.stoppable(search):
        raise ValueError("the model is wrong")
    interrupts.request_stop(signal.SIGTERM)
    assert search.stops == 0
