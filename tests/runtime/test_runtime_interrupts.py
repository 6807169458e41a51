"""A stop request (SIGINT / SIGTERM) ends a run without failing it: nothing new starts, nothing is retried or
compensated, ``run.interrupted`` is recorded, and the run continues from its recorded outputs."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from alas_argo import interrupts
from alas_argo.runtime import MemoryJournal, NodeContext, Runtime
from tests.runtime.runtime_helpers import workflow


def _setup(stop_in: str, *, raise_after_stop: bool) -> tuple[Any, dict[str, Any], list[str], list[str]]:
    ran: list[str] = []
    undone: list[str] = []

    def write(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.append(ctx.node_id)
        if ctx.node_id == stop_in and ran.count(stop_in) == 1:  # the signal comes once
            interrupts.request_stop(signal.SIGTERM)
            if raise_after_stop:  # a node whose search was stopped raises in its own thread
                interrupts.check(f"the search of {ctx.node_id}")
        return {"wrote": ctx.node_id}

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        undone.append(next(iter(ctx.deps)))
        return {}

    nodes = [{"id": n, "role": "write", "sideEffect": "write", "compensation": f"undo_{n}", "policyRef": "p"}
             for n in "abc"]
    nodes += [{"id": f"undo_{n}", "role": "undo"} for n in "abc"]
    policy = {"retry": {"maxAttempts": 3}, "onFailure": "rollback", "idempotency": {"key": "{run}:{node}"}}
    wf = workflow(nodes, [("a", "b"), ("b", "c")], policies={"p": policy})
    return wf, {"write": write, "undo": undo}, ran, undone


@pytest.mark.parametrize("raise_after_stop", [True, False])
def test_a_stop_ends_the_run_without_retry_or_compensation(raise_after_stop: bool) -> None:
    wf, handlers, ran, undone = _setup("b", raise_after_stop=raise_after_stop)
    journal = MemoryJournal()
    with pytest.raises(interrupts.Interrupted) as stopped:
        Runtime(handlers, journal=journal).run(wf, run_id="r1")
    assert stopped.value.exit_code == 143
    assert ran == ["a", "b"] and undone == []  # b is not retried, c never starts, nothing is undone
    last = journal.events[-1]
    assert last["type"] == "run.interrupted" and last["payload"]["signal"] == "SIGTERM"
    if raise_after_stop:  # b stopped in flight: cancelled, named in the event and in the error
        assert last["payload"]["stopped"] == ["b"] and stopped.value.where == "b (the search of b)"
        assert last["payload"]["executed"] == ["a"]
        b_last = [e for e in journal.events if e["node_id"] == "b"][-1]
        assert b_last["type"] == "node.cancelled"
        assert b_last["payload"]["error"] == "Interrupted: interrupted by SIGTERM during the search of b"
    else:  # b finished before the runtime saw the request: its result stands
        assert last["payload"]["stopped"] == [] and last["payload"]["executed"] == ["a", "b"]
    # Resumed: what finished comes back from its record, the rest runs.
    interrupts.reset()
    result = Runtime(handlers, journal=journal).run(wf, run_id="r1")
    assert result.ok and ran == ["a", "b", *(["b"] if raise_after_stop else []), "c"] and undone == []
