"""`ProgressLines` line by line on an injected clock: the timestamp's form, what `every` sums up and when the last
item always gets a line, the heartbeat's silence threshold, and the closing line of a finished or stopped piece of
work. The bench/run tests only look for fragments of these lines; these hold their exact text and boundaries."""

from __future__ import annotations

import io
import time

import pytest

from alas_argo.cli.progress import ProgressLines


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, start: float = 100.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def _quiet(what: str, clock: Clock, stream: io.StringIO, **kw: object) -> ProgressLines:
    # A heartbeat far away: the thread never speaks in these tests (it waits heartbeat/4 between looks).
    return ProgressLines(what, stream=stream, clock=clock, heartbeat=10_000.0, **kw)  # type: ignore[arg-type]


def test_lines_carry_the_seconds_since_the_start_and_the_command() -> None:
    clock, stream = Clock(), io.StringIO()
    with _quiet("alas bench static", clock, stream, total=2, every=0.0) as lines:
        clock.now = 112.34
        lines.done("ft06")
        clock.now = 1100.0
        lines.done("la01")
    assert _lines(stream) == [
        "[    0.0 s] alas bench static: started (2 items)",
        "[   12.3 s] alas bench static: 1/2 done, last: ft06",
        "[ 1000.0 s] alas bench static: 2/2 done, last: la01",
        "[ 1000.0 s] alas bench static: finished after 2/2 items",
    ]


def test_items_closer_than_every_are_summed_up_and_the_last_always_gets_a_line() -> None:
    clock, stream = Clock(0.0), io.StringIO()
    with _quiet("w", clock, stream, total=4, every=10.0) as lines:
        clock.now = 9.9
        lines.done("a")  # 9.9 s after "started": summed up
        clock.now = 10.0
        lines.done("b")  # exactly `every` after: a line
        clock.now = 15.0
        lines.done("c")  # 5 s after b's line: summed up
        clock.now = 16.0
        lines.done("d")  # the last of 4: a line, however soon
    assert [line.split("] ", 1)[1] for line in _lines(stream)] == [
        "w: started (4 items)", "w: 2/4 done, last: b", "w: 4/4 done, last: d", "w: finished after 4/4 items"]


def test_always_prints_now_and_an_unknown_total_counts_alone() -> None:
    clock, stream = Clock(0.0), io.StringIO()
    with _quiet("alas run r1", clock, stream, every=60.0) as lines:
        lines.done("plan")  # inside `every`, no total: no line
        lines.done("repair", always=True)
        lines.say("node x failed")
    assert [line.split("] ", 1)[1] for line in _lines(stream)] == [
        "alas run r1: started", "alas run r1: 2 done, last: repair", "alas run r1: node x failed",
        "alas run r1: finished after 2 items"]


def test_a_line_resets_the_every_window() -> None:
    """`say` and the item lines move the last-line time: the next item inside `every` of them is summed up."""
    clock, stream = Clock(0.0), io.StringIO()
    with _quiet("w", clock, stream, total=10, every=5.0) as lines:
        clock.now = 20.0
        lines.say("phase two")
        clock.now = 24.0
        lines.done("a")  # 4 s after the `say`: summed up
        clock.now = 25.0
        lines.done("b")
    assert [line.split("] ", 1)[1] for line in _lines(stream)] == [
        "w: started (10 items)", "w: phase two", "w: 2/10 done, last: b", "w: finished after 2/10 items"]


def test_an_exception_closes_with_stopped_and_is_not_swallowed() -> None:
    clock, stream = Clock(0.0), io.StringIO()
    with pytest.raises(KeyboardInterrupt), _quiet("w", clock, stream, total=3, every=0.0) as lines:
        lines.done("a")
        raise KeyboardInterrupt
    assert _lines(stream)[-1] == "[    0.0 s] w: stopped after 1/3 items"




def _wait_for(stream: io.StringIO, count: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while len(_lines(stream)) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def test_the_heartbeat_speaks_after_exactly_heartbeat_seconds_of_silence_and_says_what_without_a_label() -> None:
    # Times in quarters on a clock that does not start at 0: the differences are exact, so `>=` is what is tested.
    clock, stream = Clock(100.0), io.StringIO()
    with ProgressLines("w", total=2, heartbeat=0.25, stream=stream, clock=clock) as lines:
        clock.now = 100.2499  # less than `heartbeat` of silence: the thread looks (every 1/16 s) and keeps quiet
        time.sleep(0.3)
        assert len(_lines(stream)) == 1
        clock.now = 100.25  # exactly `heartbeat`: it speaks, and nothing is being worked on yet
        _wait_for(stream, 2)
        assert _lines(stream)[1] == "[    0.2 s] w: 0/2 done"
        # Its own line restarts the silence: no second beat while the clock stands still.
        time.sleep(0.3)
        assert len(_lines(stream)) == 2
        lines.working_on("ta01")
        clock.now = 100.5
        _wait_for(stream, 3)
    assert _lines(stream)[2] == "[    0.5 s] w: 0/2 done, working on ta01"
    assert _lines(stream)[-1] == "[    0.5 s] w: finished after 0/2 items"


def test_the_heartbeat_thread_is_a_named_daemon_and_ends_with_the_block() -> None:
    clock, stream = Clock(0.0), io.StringIO()
    with _quiet("w", clock, stream) as lines:
        thread = lines._thread
        assert thread is not None and thread.daemon and thread.name == "alas-progress" and thread.is_alive()
    assert not thread.is_alive()


def test_the_default_stream_is_stderr_at_the_time_of_writing(capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock(0.0)
    with ProgressLines("w", clock=clock, heartbeat=10_000.0, every=0.0) as lines:
        lines.done("a")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.splitlines() == [
        "[    0.0 s] w: started", "[    0.0 s] w: 1 done, last: a", "[    0.0 s] w: finished after 1 items"]


def test_by_default_items_are_summed_up_for_ten_seconds_and_the_heartbeat_waits_thirty() -> None:
    clock, stream = Clock(0.0), io.StringIO()
    lines = ProgressLines("w", stream=stream, clock=clock)
    assert lines.heartbeat == 30.0
    lines._write("started")  # as __enter__ does, without its heartbeat thread
    clock.now = 9.9
    lines.done("a")
    clock.now = 10.0
    lines.done("b")
    assert [line.split("] ", 1)[1] for line in _lines(stream)] == ["w: started", "w: 2 done, last: b"]


class StopAtOnce:
    """Stands in for the heartbeat's stop event: records how long the thread would wait, then says stop."""

    def __init__(self) -> None:
        self.waits: list[float | None] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        return True

    def set(self) -> None:
        pass


def test_the_heartbeat_looks_four_times_per_heartbeat() -> None:
    """A quarter of `heartbeat` between looks: a silence is said at most 1.25 heartbeats after the last line."""
    lines = ProgressLines("w", heartbeat=8.0, stream=io.StringIO(), clock=Clock(0.0))
    event = StopAtOnce()
    lines._stop = event  # type: ignore[assignment]
    with lines:
        pass
    assert event.waits == [2.0]
