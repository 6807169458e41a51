"""Timeouts really stop nodes: a forked attempt is killed, a thread attempt is abandoned on time."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from alas_argo.runtime import MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import FOREVER, pid_alive, workflow


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (zombies included: a child not reaped is still there)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def test_a_node_that_sleeps_forever_is_killed_within_its_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    def forever(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        pid_file.write_text(str(os.getpid()))
        time.sleep(FOREVER)
        return {}
    journal = MemoryJournal()
    # 1 s: at load 2.4 (the suite beside the repair probes) a child forked for a 0.3 s limit was killed before
    # it ran the handler's first line.
    wf = workflow([{"id": "a", "role": "f", "policyRef": "t"}], policies={"t": {"timeout": 1.0}})
    servers = _children(os.getpid())  # what fixtures of earlier tests started and keep running
    start = time.monotonic()
    result = Runtime({"f": forever}, journal=journal).run(wf)
    elapsed = time.monotonic() - start
    assert elapsed < 60  # stopped at its limit, not after the handler's FOREVER (a loaded machine forks slowly)
    assert result.states["a"] is NodeState.FAILED and result.errors["a"].startswith("Timeout:")
    assert "node.timed_out" in journal.types("a")
    # Killed and reaped, whether or not the slow fork got as far as the handler.
    assert _children(os.getpid()) <= servers
    if pid_file.exists():
        pid = int(pid_file.read_text())
        assert pid != os.getpid() and not pid_alive(pid)


def test_timeouts_are_retried_and_counted() -> None:
    def slow_once(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.attempt == 1:
            time.sleep(FOREVER)
        return {"attempt": ctx.attempt}
    journal = MemoryJournal()
    wf = workflow([{"id": "a", "role": "f", "policyRef": "t"}],
                  # 2 s: the second attempt returns at once, but forking it took over 0.2 s at load average 10.
                  policies={"t": {"timeout": 2.0, "retry": {"maxAttempts": 2, "backoff": {"initial": 0}}}})
    result = Runtime({"f": slow_once}, journal=journal).run(wf)
    assert result.ok and result.output("a") == {"attempt": 2} and result.attempts["a"] == 2
    assert journal.types("a").count("node.timed_out") == 1


def test_thread_mode_abandons_the_attempt_and_signals_cancellation() -> None:
    # The handler runs until the test releases it, after run() returned: a runtime that waited for it instead
    # of abandoning it would never return (the test's timeout). No wall-clock bound: a loaded machine is slow.
    release = threading.Event()
    observed: dict[str, bool] = {}

    def stubborn(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        while not release.is_set():
            time.sleep(0.005)
        observed["cancelled"] = ctx.cancelled()
        return {}
    wf = workflow([{"id": "a", "role": "f", "policyRef": "t"}], policies={"t": {"timeout": 0.1}})
    result = Runtime({"f": stubborn}, timeout_mode="thread").run(wf)
    assert result.states["a"] is NodeState.FAILED and "abandoned" in result.errors["a"]
    assert "cancelled" not in observed  # still running: abandoned, not awaited
    release.set()
    deadline = time.monotonic() + 20
    while "cancelled" not in observed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert observed["cancelled"] is True  # and told that its attempt was given up


def test_timed_handlers_return_outputs_and_errors_across_the_fork() -> None:
    def fine(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.params.get("fail"):
            raise KeyError("nope")
        return {"pid": os.getpid(), "x": inputs["x"]}
    wf = workflow([{"id": "a", "role": "f", "policyRef": "t", "params": {"x": 3}},
                   {"id": "b", "role": "f", "policyRef": "s", "params": {"fail": True}}],
                  policies={"t": {"timeout": 5}, "s": {"timeout": 5, "onFailure": "skip"}})
    result = Runtime({"f": fine}).run(wf)
    assert result.output("a")["x"] == 3 and result.output("a")["pid"] != os.getpid()
    assert result.errors["b"] == "KeyError: 'nope'"


def test_a_timed_any_of_loser_is_killed_when_it_loses(tmp_path: Path) -> None:
    pid_file = tmp_path / "loser"

    def cand(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.node_id == "slow":
            pid_file.write_text(str(os.getpid()))
            time.sleep(FOREVER)
        else:
            deadline = time.monotonic() + 2
            while not pid_file.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        return {"by": ctx.node_id}
    wf = workflow([{"id": "fast", "role": "c"}, {"id": "slow", "role": "c", "policyRef": "t"},
                   {"id": "pick", "role": "c", "join": "any_of"}], [("fast", "pick"), ("slow", "pick")],
                  policies={"t": {"timeout": 30}})
    start = time.monotonic()
    result = Runtime({"c": cand}).run(wf)
    # Well under the loser's 30 s timeout: it was stopped when it lost, not at its limit (not a speed bound: the
    # winner alone may wait 2 s for the loser to start on a loaded machine).
    assert time.monotonic() - start < 25
    assert result.ok and result.states["slow"] is NodeState.CANCELLED
    assert not pid_alive(int(pid_file.read_text()))


def test_thread_mode_retry_after_a_timeout_starts_uncancelled() -> None:
    def once_stuck(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.attempt == 1:
            while not ctx.cancelled():
                time.sleep(0.005)
            return {"late": True}
        return {"cancelled": ctx.cancelled()}
    wf = workflow([{"id": "a", "role": "f", "policyRef": "t"}],
                  policies={"t": {"timeout": 0.1, "retry": {"maxAttempts": 2, "backoff": {"initial": 0}}}})
    result = Runtime({"f": once_stuck}, timeout_mode="thread").run(wf)
    assert result.ok and result.output("a") == {"cancelled": False} and result.attempts["a"] == 2
