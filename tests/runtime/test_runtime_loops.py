"""Loops with an until condition under their guard (max_iters and deadline)."""

from __future__ import annotations

from typing import Any

from alas_argo.runtime import FakeClock, MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import workflow


def repairer(valid_at: int, clock: FakeClock | None = None) -> Any:
    def handler(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if clock is not None:
            clock.advance(1.0)
        prev = inputs["previous"]
        assert prev == ctx.previous
        n = 1 if prev is None else prev["n"] + 1
        assert n == ctx.iteration
        return {"n": n, "valid": n >= valid_at}
    return handler


def loop_wf(guard: dict[str, Any]) -> Any:
    return workflow([{"id": "fix", "role": "r", "policyRef": "g", "output": {"required": ["valid"]},
                      "loop": {"until": {"path": "output.valid", "op": "eq", "value": True}}},
                     {"id": "next", "role": "done"}], [("fix", "next")], policies={"g": {"loopGuard": guard}})


def done(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"saw": inputs["fix"]["n"]}


def test_loop_runs_until_its_condition_holds() -> None:
    result = Runtime({"r": repairer(3), "done": done}).run(loop_wf({"maxIters": 5}))
    assert result.ok and result.output("fix") == {"n": 3, "valid": True} and result.output("next") == {"saw": 3}


def test_max_iters_trips_the_guard() -> None:
    journal = MemoryJournal()
    result = Runtime({"r": repairer(99), "done": done}, journal=journal).run(loop_wf({"maxIters": 4}))
    assert not result.ok and result.states["fix"] is NodeState.FAILED
    assert result.errors["fix"].startswith("LoopGuardTripped: loop stopped by its guard (max_iters) after 4")
    tripped = [e for e in journal.events if e["type"] == "loop.guard_tripped"]
    assert len(tripped) == 1 and tripped[0]["payload"] == {"reason": "max_iters", "iterations": 4}


def test_deadline_trips_the_guard() -> None:
    clock = FakeClock()
    result = Runtime({"r": repairer(99, clock), "done": done}, clock=clock).run(
        loop_wf({"maxIters": 100, "deadline": 2.5}))
    assert "(deadline) after 3 iterations" in result.errors["fix"]


def test_a_tripped_guard_can_be_caught_with_the_last_output() -> None:
    seen: dict[str, Any] = {}

    def best(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        assert ctx.failure is not None
        seen["last"] = ctx.failure.output
        return {"kept": ctx.failure.output["n"]}
    wf = workflow([{"id": "fix", "role": "r", "policyRef": "g",
                    "loop": {"until": {"path": "output.valid", "op": "truthy"}}},
                   {"id": "keep_best", "role": "best"}],
                  policies={"g": {"loopGuard": {"maxIters": 2},
                                  "catch": [{"errors": ["LoopGuardTripped"], "next": "keep_best"}]}})
    result = Runtime({"r": repairer(99), "best": best}).run(wf)
    assert result.ok and result.output("keep_best") == {"kept": 2} and seen["last"]["n"] == 2
