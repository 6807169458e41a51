"""The process pool: CPU-bound nodes in worker processes; journal; exported names."""

from __future__ import annotations

import os
from typing import Any

import pytest

import alas_argo.runtime as rt
from alas_argo.errors import ContractError, TransientError
from alas_argo.runtime import FakeClock, MemoryJournal, NodeContext, Runtime
from tests.runtime.runtime_helpers import workflow


def pid_of(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    if ctx.params.get("fail") and ctx.attempt == 1:
        raise TransientError("first attempt fails")
    return {"pid": os.getpid(), "n": inputs.get("n")}


def test_process_pool_runs_nodes_in_worker_processes_and_retries_there() -> None:
    wf = workflow([{"id": f"n{i}", "role": "pid", "params": {"n": i, "fail": i == 0}, "policyRef": "r"}
                   for i in range(4)], policies={"r": {"retry": {"maxAttempts": 2, "backoff": {"initial": 0}}}})
    result = Runtime({"pid": pid_of}, pool="process", max_workers=2, clock=FakeClock()).run(wf)
    assert result.ok and result.attempts["n0"] == 2
    pids = {o["pid"] for o in result.outputs.values()}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2
    assert [result.output(f"n{i}")["n"] for i in range(4)] == [0, 1, 2, 3]


def test_memory_journal_rejects_types_outside_the_taxonomy() -> None:
    j = MemoryJournal()
    j.record("node.started", node_id="a", attempt=1)
    with pytest.raises(ContractError, match="unknown event type"):
        j.record("node.exploded")
    j.put_idempotent("k", {"v": 1})
    j.put_idempotent("k", {"v": 2})
    got = j.get_idempotent("k")
    assert got == {"v": 1}
    got["v"] = 3
    assert j.get_idempotent("k") == {"v": 1} and j.types() == ["node.started"]
    assert isinstance(j, rt.Journal)


def test_runtime_exports_are_pinned() -> None:
    assert sorted(rt.__all__) == sorted([
        "LEVELS", "TERMINAL", "TRANSITIONS", "Clock", "FakeClock", "Failure", "Fault", "FaultKind", "FaultPlan",
        "Handler", "IllegalTransition", "Journal", "Listener", "MemoryJournal", "NodeContext", "NodeState",
        "NodeStateMachine", "NodeTimeout", "RealClock", "RunResult", "RunStatus", "Runtime", "Saga",
        "StateChange", "base_delay", "compensation_key", "corrupt_output", "delay", "error_names", "evaluate",
        "matches", "render_key", "resolve"])
    for name in rt.__all__:
        assert hasattr(rt, name)
