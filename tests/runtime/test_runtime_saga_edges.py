"""Saga edges: what a compensation handler is given, how each compensation is journaled (one wording on every
engine, docs/execution-log.md), and the committed nodes a compensation skips or cannot undo."""

from __future__ import annotations

from typing import Any

from alas_argo.runtime import Failure, MemoryJournal, NodeContext, NodeState, Runtime, Saga, compensation_key
from tests.runtime.runtime_helpers import workflow


def three_writes(roles: dict[str, str] | None = None) -> Any:
    """``a -> b -> c`` commit, each compensated by ``undo_<n>`` (role ``undo`` unless ``roles`` names another,
    params ``{"table": n}``); the run fails at ``d`` under ``rollback``. Version 3 of workflow ``t``."""
    nodes: list[dict[str, Any]] = [{"id": n, "role": "write", "sideEffect": "write", "compensation": f"undo_{n}"}
                                   for n in "abc"]
    nodes.append({"id": "d", "role": "boom", "policyRef": "f"})
    nodes += [{"id": f"undo_{n}", "role": (roles or {}).get(n, "undo"), "params": {"table": n}} for n in "abc"]
    return workflow(nodes, [("a", "b"), ("b", "c"), ("c", "d")], policies={"f": {"onFailure": "rollback"}},
                    version=3)


def write(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"wrote": ctx.node_id}


def boom(ctx: NodeContext, inputs: dict[str, Any]) -> None:
    raise RuntimeError("d broke")


def compensation_events(journal: MemoryJournal) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(e["type"], e["node_id"], e["payload"]) for e in journal.events
            if e["type"].startswith("compensation.")]


def test_a_compensation_handler_is_given_the_compensated_nodes_output_and_its_own_facts() -> None:
    seen: list[tuple[NodeContext, dict[str, Any]]] = []

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen.append((ctx, inputs))
        return {}
    result = Runtime({"write": write, "boom": boom, "undo": undo}).run(three_writes(), run_id="r7")
    assert result.compensated == ["c", "b", "a"]
    ctx, inputs = seen[0]
    assert ctx == NodeContext(node_id="undo_c", role="undo", attempt=1, run_id="r7", workflow="t",
                              plan_version=3, deps={"c": {"wrote": "c"}}, params={"table": "c"},
                              failure=Failure(error="", error_type="", message="run failed",
                                              output={"wrote": "c"}),
                              level="compensate")
    # The handler's inputs: the compensation node's params plus the compensated node's output under its id.
    assert inputs == {"table": "c", "c": {"wrote": "c"}}
    assert [(c.node_id, c.deps, i) for c, i in seen[1:]] == [
        ("undo_b", {"b": {"wrote": "b"}}, {"table": "b", "b": {"wrote": "b"}}),
        ("undo_a", {"a": {"wrote": "a"}}, {"table": "a", "a": {"wrote": "a"}})]


def test_each_compensation_is_journaled_under_the_compensation_node_ok_or_with_its_error() -> None:
    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        target = next(iter(ctx.deps))
        if target == "b":
            raise RuntimeError("undo broke")
        return {"undone": target}
    journal = MemoryJournal()
    result = Runtime({"write": write, "boom": boom, "undo": undo}, journal=journal).run(three_writes())
    assert compensation_events(journal) == [
        ("compensation.started", "undo_c", {"compensates": "c"}),
        ("compensation.finished", "undo_c", {"compensates": "c", "ok": True, "result": {"undone": "c"}}),
        ("compensation.started", "undo_b", {"compensates": "b"}),
        ("compensation.finished", "undo_b", {"compensates": "b", "ok": False,
                                             "error": "RuntimeError: undo broke"}),
        ("compensation.started", "undo_a", {"compensates": "a"}),
        ("compensation.finished", "undo_a", {"compensates": "a", "ok": True, "result": {"undone": "a"}}),
    ]
    assert result.compensated == ["c", "a"]
    # The failed compensation leaves no record: the next compensation of the run tries it again.
    assert journal.get_idempotent(compensation_key(result.run_id, "b")) is None
    assert journal.get_idempotent(compensation_key(result.run_id, "c")) == {"compensates": "c", "by": "undo_c"}


def test_a_failed_compensation_is_named_and_tried_again_by_the_next_compensation() -> None:
    broken = {"b"}

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        target = next(iter(ctx.deps))
        if target in broken:
            raise RuntimeError("undo broke")
        return {}
    handlers = {"write": write, "boom": boom, "undo": undo}
    journal = MemoryJournal()
    outputs = {n: {"wrote": n} for n in "abc"}
    saga = Saga(three_writes(), handlers, journal, "r1")
    assert saga.compensate(["a", "b", "c"], outputs) == ["c", "a"]
    assert saga.errors == {"b": "RuntimeError: undo broke"}
    broken.clear()
    again = Saga(three_writes(), handlers, journal, "r1")
    assert again.compensate(["a", "b", "c"], outputs) == ["b"]
    assert again.errors == {}


def test_a_compensation_role_without_a_handler_fails_that_compensation_only() -> None:
    undone: list[str] = []

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        undone.append(next(iter(ctx.deps)))
        return {}
    saga = Saga(three_writes({"b": "missing"}), {"undo": undo}, MemoryJournal(), "r1")
    assert saga.compensate(["a", "b", "c"], {n: {"wrote": n} for n in "abc"}) == ["c", "a"]
    assert undone == ["c", "a"] and saga.errors == {"b": "KeyError: 'missing'"}


def test_a_committed_node_without_a_compensation_is_passed_over_and_the_older_ones_still_undone() -> None:
    # Saga is public: a caller may hand it every committed node, some of which nothing compensates.
    nodes: list[dict[str, Any]] = [{"id": "a", "role": "write", "sideEffect": "write", "compensation": "undo_a"},
                                   {"id": "log", "role": "write"},
                                   {"id": "c", "role": "write", "sideEffect": "write", "compensation": "undo_c"},
                                   {"id": "undo_a", "role": "undo"}, {"id": "undo_c", "role": "undo"}]
    wf = workflow(nodes, [("a", "log"), ("log", "c")])
    undone: list[str] = []

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        undone.append(next(iter(ctx.deps)))
        return {}
    saga = Saga(wf, {"undo": undo}, MemoryJournal(), "r1")
    assert saga.compensate(["a", "log", "c"], {n: {} for n in ("a", "log", "c")}) == ["c", "a"]
    assert undone == ["c", "a"]


def test_the_failed_compensation_node_carries_the_error_and_the_others_executed() -> None:
    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if next(iter(ctx.deps)) == "b":
            raise RuntimeError("undo broke")
        return {}
    result = Runtime({"write": write, "boom": boom, "undo": undo}).run(three_writes())
    assert {n: result.states[n] for n in ("undo_a", "undo_b", "undo_c")} == {
        "undo_a": NodeState.EXECUTED, "undo_b": NodeState.FAILED, "undo_c": NodeState.EXECUTED}
    assert result.errors["undo_b"] == "WorkflowError: RuntimeError: undo broke (node undo_b)"
