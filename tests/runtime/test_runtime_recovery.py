"""Recovery escalates retry -> patch -> replan, never skipping a level."""

from __future__ import annotations

from typing import Any

from alas_argo.errors import TransientError
from alas_argo.runtime import LEVELS, FakeClock, MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import Calls, workflow

OUT = {"type": "object", "required": ["plan"]}


def handlers(calls: Calls, patch_ok: bool, replan_ok: bool = True) -> dict[str, Any]:
    def solve(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.add(ctx)
        raise TransientError("solver crashed")

    def patch(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.add(ctx)
        assert ctx.failure is not None and ctx.failure.error == "TransientError"
        return {"plan": "patched"} if patch_ok else {"broken": True}

    def replan(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.add(ctx)
        if not replan_ok:
            raise ValueError("no plan")
        return {"plan": "replanned"}
    return {"solve": solve, "patch": patch, "replan": replan}


def wf(replan: bool = True, max_patches: int = 1) -> Any:
    repair: dict[str, Any] = {"patch": "patch", "maxPatches": max_patches}
    if replan:
        repair["replan"] = "replan"
    return workflow([{"id": "s", "role": "solve", "policyRef": "p", "output": OUT, "repair": repair}],
                    policies={"p": {"retry": {"maxAttempts": 2, "backoff": {"initial": 0}},
                                    "onFailure": "retry"}})


def test_levels() -> None:
    assert LEVELS == ("retry", "patch", "replan")


def test_patch_runs_only_after_retries_are_spent_and_stops_the_ladder() -> None:
    calls, journal = Calls(), MemoryJournal()
    result = Runtime(handlers(calls, patch_ok=True), clock=FakeClock(), journal=journal).run(wf())
    assert result.ok and result.output("s") == {"plan": "patched"}
    assert calls.log == [("s", "run", 1), ("s", "run", 2), ("s", "patch", 2)]
    assert result.escalations == [("s", "patch")] and len(result.plan_versions) == 1
    escalated = [e["payload"] for e in journal.events if e["type"] == "recovery.escalated"]
    assert [(p["from"], p["to"]) for p in escalated] == [("retry", "patch")]


def test_replan_runs_only_after_every_patch_failed_and_makes_a_new_plan_version() -> None:
    calls, journal = Calls(), MemoryJournal()
    result = Runtime(handlers(calls, patch_ok=False), clock=FakeClock(), journal=journal).run(wf(max_patches=2))
    assert result.ok and result.output("s") == {"plan": "replanned"}
    assert [c[1] for c in calls.log] == ["run", "run", "patch", "patch", "replan"]
    assert result.escalations == [("s", "patch"), ("s", "replan")]
    escalated = [e["payload"] for e in journal.events if e["type"] == "recovery.escalated"]
    assert [(p["from"], p["to"]) for p in escalated] == [("retry", "patch"), ("patch", "replan")]
    v1, v2 = result.plan_versions
    assert (v2.version, v2.parent, v2.reason) == (2, v1.hash, "replan of s")
    assert v2.content == {"node": "s", "output": {"plan": "replanned"}}
    assert [str(s) for s in result.history("s")] == [
        "pending", "ready", "running", "failed_retryable", "running",  # the retry level
        "failed_retryable", "running", "failed_retryable", "running",  # two patches
        "failed_retryable", "running", "executed"]  # the replan


def test_the_node_fails_when_the_ladder_is_exhausted() -> None:
    calls = Calls()
    result = Runtime(handlers(calls, patch_ok=False, replan_ok=False), clock=FakeClock()).run(wf())
    assert not result.ok and result.states["s"] is NodeState.FAILED
    assert [c[1] for c in calls.log] == ["run", "run", "patch", "replan"]
    assert result.errors["s"] == "ValueError: no plan"


def test_without_a_replan_handler_the_ladder_ends_at_patch() -> None:
    calls = Calls()
    result = Runtime(handlers(calls, patch_ok=False), clock=FakeClock()).run(wf(replan=False))
    assert not result.ok and [c[1] for c in calls.log] == ["run", "run", "patch"]
    assert result.escalations == [("s", "patch")] and "ContractError" in result.errors["s"]


def test_patch_sees_the_last_faulty_output() -> None:
    seen: dict[str, Any] = {}

    def bad(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {"plan": 7}

    def patch(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        assert ctx.failure is not None
        seen["output"], seen["error"] = ctx.failure.output, ctx.failure.error
        return {"plan": str(ctx.failure.output["plan"])}
    w = workflow([{"id": "s", "role": "bad", "output": {"properties": {"plan": {"type": "string"}}},
                   "repair": {"patch": "patch"}}])
    result = Runtime({"bad": bad, "patch": patch}).run(w)
    assert result.ok and result.output("s") == {"plan": "7"}
    assert seen == {"output": {"plan": 7}, "error": "ContractError"}
