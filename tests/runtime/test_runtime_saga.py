"""Saga: compensations of committed side-effecting nodes run in reverse commit order, once."""

from __future__ import annotations

from typing import Any

from alas_argo.errors import ContractError
from alas_argo.runtime import MemoryJournal, NodeContext, NodeState, Runtime, Saga, compensation_key
from tests.runtime.runtime_helpers import workflow


def setup(on_failure: str = "rollback", undo_fails: str | None = None) -> tuple[Any, dict[str, Any], list[str]]:
    undone: list[str] = []

    def write(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.params.get("fail"):
            raise ContractError("cannot write")
        return {"wrote": ctx.node_id}

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        target = next(iter(ctx.deps))
        assert ctx.level == "compensate" and inputs[target] == {"wrote": target}
        if target == undo_fails:
            raise RuntimeError("undo broke")
        undone.append(target)
        return {}
    nodes: list[dict[str, Any]] = [{"id": n, "role": "write", "sideEffect": "write", "compensation": f"undo_{n}"}
                                   for n in "abc"]
    nodes.append({"id": "d", "role": "write", "params": {"fail": True}, "policyRef": "f"})
    nodes += [{"id": f"undo_{n}", "role": "undo"} for n in "abc"]
    wf = workflow(nodes, [("a", "b"), ("b", "c"), ("c", "d")], policies={"f": {"onFailure": on_failure}})
    return wf, {"write": write, "undo": undo}, undone


def test_compensations_run_in_reverse_commit_order() -> None:
    wf, handlers, undone = setup()
    journal = MemoryJournal()
    result = Runtime(handlers, journal=journal).run(wf)
    assert not result.ok and result.failed_node == "d"
    assert undone == ["c", "b", "a"] and result.compensated == ["c", "b", "a"]
    assert result.states["undo_a"] is NodeState.EXECUTED
    started = [e["payload"]["compensates"] for e in journal.events if e["type"] == "compensation.started"]
    assert started == ["c", "b", "a"]
    assert journal.types()[-1] == "run.failed"


def test_compensating_twice_is_harmless() -> None:
    wf, handlers, undone = setup()
    journal = MemoryJournal()
    result = Runtime(handlers, journal=journal).run(wf)
    saga = Saga(wf, handlers, journal, result.run_id)
    assert saga.compensate(["a", "b", "c"], result.outputs) == []
    assert undone == ["c", "b", "a"]
    assert journal.get_idempotent(compensation_key(result.run_id, "b")) == {"compensates": "b", "by": "undo_b"}


def test_a_half_done_rollback_resumes_where_it_stopped() -> None:
    wf, handlers, undone = setup()
    journal = MemoryJournal()
    journal.put_idempotent(compensation_key("r1", "c"), {"compensates": "c", "by": "undo_c"})
    outputs = {n: {"wrote": n} for n in "abc"}
    assert Saga(wf, handlers, journal, "r1").compensate(["a", "b", "c"], outputs) == ["b", "a"]
    assert undone == ["b", "a"]


def test_a_failing_compensation_does_not_stop_the_others() -> None:
    wf, handlers, undone = setup(undo_fails="b")
    result = Runtime(handlers).run(wf)
    assert undone == ["c", "a"] and result.compensated == ["c", "a"]
    assert result.states["undo_b"] is NodeState.FAILED


def test_stop_leaves_committed_effects_alone() -> None:
    wf, handlers, undone = setup(on_failure="stop")
    result = Runtime(handlers).run(wf)
    assert not result.ok and undone == [] and result.compensated == []
    assert result.states["undo_a"] is NodeState.CANCELLED


def test_a_successful_run_compensates_nothing() -> None:
    wf, handlers, undone = setup(on_failure="skip")
    result = Runtime(handlers).run(wf)
    assert result.ok and undone == [] and result.states["undo_c"] is NodeState.SKIPPED
