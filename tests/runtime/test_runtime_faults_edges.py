"""Edges of workflow-level fault injection, called directly rather than through a run.

The run-level tests (test_runtime_faults.py) see a fault only as the run's outcome; a hang there is injected in a
forked child, so nothing in this process ever watches it. Here the wrapper is called on its own: which rule
applies when several are given, that the seed (given or default) decides, what each fault raises and where it
points, how a hang polls for its cancel and for its bound (on a fake clock, no real waiting), and that the real
handler gets the call's own context and input while a corrupter gets a copy of its output.
"""

from __future__ import annotations

import pickle
import random
import threading
from typing import Any

import pytest

import alas_argo.runtime.faults as faults_module
from alas_argo.errors import AlasError, ContractError, TransientError
from alas_argo.runtime import Fault, FaultKind, FaultPlan, NodeContext
from alas_argo.runtime.faults import FaultyHandler


def ctx(node: str = "p", attempt: int = 1, index: int | None = None,
        cancel_event: threading.Event | None = None) -> NodeContext:
    return NodeContext(node_id=node, role="plan", attempt=attempt, run_id="r", workflow="t", index=index,
                       cancel_event=cancel_event)


def good(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"makespan": 11, "ops": [1, 2, 3]}


def hits(plan: FaultPlan, n: int = 200) -> list[bool]:
    """Which of n map items (attempt 1 of node p) the plan faults."""
    return [plan.decide(ctx(index=i)) is not None for i in range(n)]


def raised(handler: FaultyHandler, c: NodeContext) -> AlasError:
    with pytest.raises(AlasError) as info:
        handler(c, {})
    return info.value


# --- which rule applies -------------------------------------------------------------------------------------


def test_a_rule_for_another_node_or_attempt_does_not_hide_a_later_rule() -> None:
    # decide() looks at every rule in order: one that does not match this call is skipped, not the end.
    plan = FaultPlan([Fault("q", FaultKind.PERMANENT), Fault("p", FaultKind.PERMANENT, attempts=(2,)),
                      Fault("p", FaultKind.TRANSIENT)])
    decided = plan.decide(ctx())
    assert decided is not None and decided[0] is plan.faults[2]


def test_a_rule_for_other_map_items_does_not_hide_a_later_rule() -> None:
    plan = FaultPlan([Fault("p", FaultKind.PERMANENT, items=(0,)), Fault("p", FaultKind.TRANSIENT, items=(1,))])
    first, second = plan.decide(ctx(index=0)), plan.decide(ctx(index=1))
    assert first is not None and first[0] is plan.faults[0]
    assert second is not None and second[0] is plan.faults[1]
    assert plan.decide(ctx(index=2)) is None


# --- the seed decides ---------------------------------------------------------------------------------------


def test_the_seed_changes_which_calls_are_faulted_and_defaults_to_zero() -> None:
    rules = [Fault("p", FaultKind.TRANSIENT, probability=0.5)]
    seeded = {seed: hits(FaultPlan(rules, seed=seed)) for seed in (0, 1, 2)}
    # A plan with another seed faults other calls (not the seed's text ignored); no seed is seed 0.
    assert seeded[0] != seeded[1] and seeded[1] != seeded[2]
    assert hits(FaultPlan(rules)) == seeded[0]


def test_spread_draws_nodes_and_kinds_from_its_seed_and_passes_on_the_corrupter() -> None:
    def shift(output: Any, rng: random.Random) -> Any:
        return output

    nodes, kinds = ["a", "b", "c"], [FaultKind.CORRUPT, FaultKind.TRANSIENT]
    plan = FaultPlan.spread(nodes, 30, kinds, seed=7, corrupter=shift)
    assert plan.seed == 7  # the plan's decisions use the same seed as its draw
    assert {f.node for f in plan.faults} == set(nodes) and {f.kind for f in plan.faults} == set(kinds)
    assert all(f.corrupter is shift and f.attempts == (1,) for f in plan.faults)
    # No seed is seed 0, for the draw and for the plan.
    default = FaultPlan.spread(nodes, 30, kinds)
    assert default.seed == 0 and default.faults == FaultPlan.spread(nodes, 30, kinds, seed=0).faults
    assert default.faults != FaultPlan.spread(nodes, 30, kinds, seed=1).faults


def test_an_unpickled_plan_injects_and_keeps_its_own_record() -> None:
    plan = FaultPlan([Fault("p", FaultKind.TRANSIENT)], seed=4)
    copy = pickle.loads(pickle.dumps(plan))
    with pytest.raises(TransientError):
        FaultyHandler(good, copy)(ctx(), {})
    assert copy.injected == [{"node": "p", "kind": "transient", "attempt": 1, "index": None, "iteration": None}]
    assert plan.injected == [] and copy.seed == 4


# --- what a fault raises ------------------------------------------------------------------------------------


def test_transient_and_permanent_faults_name_the_attempt_and_point_at_the_node() -> None:
    transient = FaultyHandler(good, FaultPlan([Fault("p", FaultKind.TRANSIENT, attempts=(2,))]))
    error = raised(transient, ctx(attempt=2))
    assert isinstance(error, TransientError) and error.where == {"node": "p"}
    assert str(error) == "injected transient fault (attempt 2) (node p)"
    permanent = FaultyHandler(good, FaultPlan([Fault("p", FaultKind.PERMANENT, attempts=(3,))]))
    error = raised(permanent, ctx(attempt=3))
    assert isinstance(error, ContractError) and error.where == {"node": "p"}
    assert str(error) == "injected permanent fault (attempt 3) (node p)"


class PollCounter(threading.Event):
    """A cancel event that is set from its n-th poll on, counting the polls."""

    def __init__(self, set_on: int) -> None:
        super().__init__()
        self.set_on = set_on
        self.polls = 0

    def is_set(self) -> bool:
        self.polls += 1
        return self.polls >= self.set_on


class FakeTime:
    """Stands in for the module's ``time``: every sleep moves the clock one second on, and is recorded."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += 1.0


def test_a_hang_sleeps_in_short_slices_until_it_is_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeTime()
    monkeypatch.setattr(faults_module, "time", clock)
    cancel = PollCounter(set_on=4)
    handler = FaultyHandler(good, FaultPlan([Fault("p", FaultKind.HANG)]))  # bound: an hour
    error = raised(handler, ctx(cancel_event=cancel))
    # Polled before each slice; the fourth poll sees the cancel and ends the hang, without calling the handler.
    assert cancel.polls == 4 and clock.sleeps == [0.01, 0.01, 0.01]
    assert isinstance(error, TransientError) and error.where == {"node": "p"}
    assert str(error) == "injected hang ended (node p)"


def test_a_hang_that_is_never_cancelled_ends_at_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeTime()
    monkeypatch.setattr(faults_module, "time", clock)
    handler = FaultyHandler(good, FaultPlan([Fault("p", FaultKind.HANG, hang_seconds=3)]))
    error = raised(handler, ctx(cancel_event=threading.Event()))
    # Slices at 100, 101 and 102 s; at 103 s the bound is reached and the hang ends as a transient failure.
    assert len(clock.sleeps) == 3 and isinstance(error, TransientError)
    assert error.message == "injected hang ended"


# --- what the real handler and the corrupter get ------------------------------------------------------------


def test_the_real_handler_gets_the_calls_context_and_input_with_or_without_a_fault() -> None:
    seen: list[tuple[NodeContext, dict[str, Any]]] = []

    def record(c: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen.append((c, inputs))
        return {"a": 1, "b": 2}

    plan = FaultPlan([Fault("p", FaultKind.CORRUPT, items=(1,))])
    handler = FaultyHandler(record, plan)
    spared, faulted = ctx(index=0), ctx(index=1)
    assert handler(spared, {"x": 1}) == {"a": 1, "b": 2}
    assert len(handler(faulted, {"x": 2})) == 1  # one key dropped
    assert seen == [(spared, {"x": 1}), (faulted, {"x": 2})]
    assert seen[0][0] is spared and seen[1][0] is faulted


def test_a_corrupter_changes_a_copy_not_the_handlers_own_output() -> None:
    shared = {"makespan": 11, "ops": [1, 2, 3]}  # e.g. a cached answer the handler returns every time

    def cached(c: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return shared

    def drop_an_op(output: Any, rng: random.Random) -> Any:
        output["ops"].pop()
        return output

    handler = FaultyHandler(cached, FaultPlan([Fault("p", FaultKind.CORRUPT, corrupter=drop_an_op)]))
    assert handler(ctx(), {}) == {"makespan": 11, "ops": [1, 2]}
    assert shared == {"makespan": 11, "ops": [1, 2, 3]}  # the next, unfaulted call still gets the good answer
