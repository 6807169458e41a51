"""The recovery ladder's edges: what it journals, what each repair handler is given, what a repaired node
commits (idempotency record, saga commit), and the error a node fails with when the ladder is exhausted."""

from __future__ import annotations

import signal
from typing import Any

import pytest

from alas_argo import interrupts
from alas_argo.errors import TransientError
from alas_argo.runtime import MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import workflow

OUT = {"type": "object", "required": ["plan"]}
#: The message of a patch output without ``plan`` (as the contract checker words it).
BROKEN = ("ContractError: patch output breaks its contract at (root): 'plan' is a required property "
          "(node s)")



def _crash(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    raise TransientError("solver crashed")


def _repaired(node: dict[str, Any], **policy: Any) -> Any:
    """A two-attempt solve ``s`` after a node ``a`` whose output it reads, with ``node``'s fields added."""
    return workflow([{"id": "a", "role": "give"},
                     {"id": "s", "role": "solve", "policyRef": "p", "output": OUT, "params": {"k": 1}, **node}],
                    [("a", "s")],
                    policies={"p": {"retry": {"maxAttempts": 2, "backoff": {"initial": 0}}, **policy}})


def _give(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"jobs": 3}


def _events(journal: MemoryJournal, node_id: str) -> list[tuple[str, int | None, dict[str, Any]]]:
    return [(e["type"], e["attempt"], e["payload"]) for e in journal.events if e["node_id"] == node_id]


def test_every_step_of_the_ladder_is_journaled_with_its_node_level_and_error() -> None:
    journal = MemoryJournal()
    handlers = {"give": _give, "solve": _crash, "fix": lambda ctx, doc: {"broken": True},
                "plan": lambda ctx, doc: {"plan": "new"}}
    wf = _repaired({"repair": {"patch": "fix", "replan": "plan"}})
    result = Runtime(handlers, journal=journal).run(wf)
    assert result.ok and result.output("s") == {"plan": "new"}
    crashed = "TransientError: solver crashed"
    assert _events(journal, "s") == [
        ("node.ready", None, {}),
        ("node.started", 1, {}),
        ("node.retrying", 1, {"delay": 0.0, "error": crashed}),
        ("node.started", 2, {}),
        ("node.retrying", 2, {"error": crashed}),  # the retries are spent
        ("recovery.escalated", 2, {"from": "retry", "to": "patch", "error": crashed}),
        ("node.started", 2, {}),
        ("node.retrying", 2, {"level": "patch", "error": BROKEN}),
        ("recovery.escalated", 2, {"from": "patch", "to": "replan", "error": BROKEN}),
        ("node.started", 2, {}),
        ("plan.proposed", 2, {"version": 2, "reason": "replan"}),
        ("node.succeeded", 2, {}),
    ]


def test_each_replan_proposes_the_next_plan_version() -> None:
    journal = MemoryJournal()
    wf = workflow([{"id": n, "role": "solve", "output": OUT, "repair": {"patch": "fix", "replan": "plan"}}
                   for n in ("s", "t")], [("s", "t")])
    handlers = {"solve": _crash, "fix": lambda ctx, doc: {}, "plan": lambda ctx, doc: {"plan": ctx.node_id}}
    result = Runtime(handlers, journal=journal).run(wf)
    assert result.ok and [v.version for v in result.plan_versions] == [1, 2, 3]
    proposed = [(e["node_id"], e["payload"]) for e in journal.events if e["type"] == "plan.proposed"]
    assert proposed == [("s", {"version": 2, "reason": "replan"}), ("t", {"version": 3, "reason": "replan"})]


def test_each_patch_is_given_the_document_the_deps_and_the_failure_before_it() -> None:
    seen: list[tuple[str | None, str, dict[str, Any], dict[str, Any], Any]] = []

    def fix(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        seen.append((ctx.role, ctx.level, dict(ctx.deps), doc, ctx.failure))
        return {"try": len(seen)}  # never a plan: each patch breaks the contract
    wf = _repaired({"repair": {"patch": "fix", "maxPatches": 2}})
    result = Runtime({"give": _give, "solve": _crash, "fix": fix}).run(wf)
    assert not result.ok and result.errors["s"] == BROKEN
    first, second = seen
    assert first[:4] == second[:4] == ("fix", "patch", {"a": {"jobs": 3}}, {"k": 1, "a": {"jobs": 3}})
    crash, broken = first[4], second[4]
    assert (crash.error, crash.error_type, crash.message, crash.output) == (
        "TransientError", "TransientError", "solver crashed", None)
    # The second patch is told about the first patch's failure, and sees the output that broke the contract.
    assert (broken.error, broken.error_type, broken.output) == ("ContractError", "ContractError", {"try": 1})
    assert broken.message == BROKEN.removeprefix("ContractError: ")


def test_a_patch_role_without_a_handler_fails_the_node_naming_role_and_node_in_the_journal_too() -> None:
    wf = _repaired({"repair": {"patch": "ghost"}})
    journal = MemoryJournal()
    result = Runtime({"give": _give, "solve": _crash}, journal=journal).run(wf)
    error = "WorkflowError: no handler registered for role 'ghost' (node s)"
    assert result.states["s"] is NodeState.FAILED and result.errors["s"] == error
    assert _events(journal, "s")[-3:] == [("node.started", 2, {}),
                                          ("node.retrying", 2, {"level": "patch", "error": error}),
                                          ("node.failed", 2, {"error": error})]


def test_a_patch_is_held_to_the_node_timeout() -> None:
    def stuck(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        if ctx.level == "run":
            raise TransientError("solver crashed")
        assert ctx.cancel_event is not None
        # Returns once the runtime gives the call up; without a timeout, after 5 s with a plan.
        return {"plan": "late", "cancelled": ctx.cancel_event.wait(5)}
    wf = _repaired({"repair": {"patch": "solve"}}, timeout=0.1)
    result = Runtime({"give": _give, "solve": stuck}, timeout_mode="thread").run(wf)
    assert result.states["s"] is NodeState.FAILED and result.errors["s"].startswith("Timeout:")


def test_a_patched_node_records_its_idempotency_key_and_a_resumed_run_reuses_the_patch() -> None:
    journal, calls = MemoryJournal(), []

    def fix(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        calls.append(ctx.run_id)
        return {"plan": "patched"}
    wf = _repaired({"repair": {"patch": "fix"}}, idempotency={"key": "{run}-{node}"})
    handlers = {"give": _give, "solve": _crash, "fix": fix}
    first = Runtime(handlers, journal=journal).run(wf, run_id="r1")
    assert first.ok and journal.idempotency["r1-s"] == {"output": {"plan": "patched"}}
    again = Runtime(handlers, journal=journal).run(wf, run_id="r1")
    assert again.ok and again.output("s") == {"plan": "patched"} and calls == ["r1"]
    assert "node.idempotent_hit" in [t for t, _, _ in _events(journal, "s")]


def test_a_patched_write_is_a_commit_that_a_failing_run_compensates() -> None:
    undone: list[str] = []

    def undo(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        undone.append(next(iter(ctx.deps)))
        return {}

    def fail(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("downstream broke")
    wf = workflow([{"id": "s", "role": "solve", "sideEffect": "write", "compensation": "u", "output": OUT,
                    "repair": {"patch": "fix"}},
                   {"id": "u", "role": "undo"}, {"id": "d", "role": "fail", "policyRef": "r"}],
                  [("s", "d")], policies={"r": {"onFailure": "rollback"}})
    handlers = {"solve": _crash, "fix": lambda ctx, doc: {"plan": "patched"}, "undo": undo, "fail": fail}
    result = Runtime(handlers).run(wf)
    assert not result.ok and result.failed_node == "d"
    assert undone == ["s"] and result.compensated == ["s"] and result.states["u"] is NodeState.EXECUTED


def test_a_node_whose_ladder_is_exhausted_is_caught_by_the_last_error() -> None:
    seen: dict[str, Any] = {}

    def handle(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        seen["failure"] = ctx.failure
        return {"handled": True}

    def no_plan(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("no plan")
    wf = workflow([{"id": "s", "role": "solve", "policyRef": "c", "output": OUT,
                    "repair": {"patch": "fix", "replan": "plan"}}, {"id": "h", "role": "handle"}],
                  policies={"c": {"catch": [{"errors": ["ValueError"], "next": "h"}]}})
    handlers = {"solve": _crash, "fix": lambda ctx, doc: {}, "plan": no_plan, "handle": handle}
    result = Runtime(handlers).run(wf)
    assert result.ok and result.states == {"s": "failed", "h": "executed"}
    assert (seen["failure"].error, seen["failure"].error_type, seen["failure"].message) == (
        "ValueError", "ValueError", "no plan")



@pytest.mark.parametrize(("max_attempts", "stop_in", "where"),
                         [(1, 1, "node s patch"), (2, 2, "node s patch"), (2, 1, "node s")])
def test_a_stop_request_ends_the_ladder_as_it_ends_the_retries(max_attempts: int, stop_in: int, where: str) -> None:
    # A stop during an attempt: neither a retry nor a patch or replan starts after it; the node is stopped, not
    # failed, and resuming the run by its id runs the node again, through its ladder.
    levels: list[str] = []
    signalled: list[bool] = []

    def solve(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        levels.append(ctx.level)
        if ctx.level == "patch":
            return {"plan": "patched"}
        if ctx.attempt == stop_in and not signalled:  # the signal comes once
            signalled.append(True)
            interrupts.request_stop(signal.SIGTERM)
        raise TransientError("solver crashed")
    journal = MemoryJournal()
    wf = _repaired({"repair": {"patch": "solve", "replan": "solve"}},
                   retry={"maxAttempts": max_attempts, "backoff": {"initial": 0}})
    with pytest.raises(interrupts.Interrupted) as stopped:
        Runtime({"give": _give, "solve": solve}, journal=journal).run(wf, run_id="r1")
    assert levels == ["run"] * stop_in and stopped.value.where == f"s ({where})"
    last = journal.events[-1]
    assert last["type"] == "run.interrupted"
    assert (last["payload"]["stopped"], last["payload"]["executed"]) == (["s"], ["a"])
    interrupts.reset()
    result = Runtime({"give": _give, "solve": solve}, journal=journal).run(wf, run_id="r1")
    assert result.ok and result.output("s") == {"plan": "patched"}
    assert levels == ["run"] * stop_in + ["run"] * max_attempts + ["patch"]
