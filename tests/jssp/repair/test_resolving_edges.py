"""The edges of the global re-solves (alas_argo.jssp.repair.resolving): every field of the request
``disrupted_request`` builds (the one place LCRP's subproblems come from too), and what ``full`` and
``full_stable`` hand it: the AOR hint, the seed, the workers, the clock, and for full-stable the least total
shift as its second phase. The solver is not needed to read a request, so most tests look at the request
itself; the last one solves ft06 to show what full-stable's second phase buys."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, StabilityObjective
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair import resolving
from alas_argo.jssp.repair.metrics import total_start_shift
from alas_argo.jssp.repair.resolving import disrupted_request, full, full_stable
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.searching import SearchClock

#: ft06's MWKR plan has job 1's step 1 running on machine 2 from 8 to 13: a breakdown of that machine at 10
#: interrupts it, so it must restart after the downtime (18), and 7 operations have started and stay frozen.
INTERRUPTED = (1, 1)


@pytest.fixture(scope="module")
def state() -> ExecutionState:
    inst = get_instance("ft06")
    plan = dispatch(inst, "mwkr")
    return ExecutionState.at(inst, plan, Disruption(time=10, events=[MachineBreakdown(machine=2, start=10,
                                                                                       duration=8)]))


def test_the_request_pins_the_frozen_operations_and_restarts_the_interrupted_one_after_its_downtime(
        state: ExecutionState) -> None:
    hint = aor(state)
    request = disrupted_request(state, pins={}, hint=hint, time_limit=0.4)
    assert request.instance is state.instance and request.hint is hint and request.time_limit == 0.4
    assert dict(request.fixed) == state.frozen_starts() and len(request.fixed) == 7
    assert dict(request.min_starts) == {INTERRUPTED: 18} and request.release == state.time == 10
    assert request.durations == state.durations and request.downtimes == state.downtimes
    # The documented defaults: seed 0, 2 workers, no stability objective (so no reference), half the budget
    # for a second phase, no makespan limit or extra precedences, deterministic limits with no clock.
    assert (request.seed, request.workers) == (0, 2)
    assert request.stability is StabilityObjective.NONE and request.reference is None
    assert request.stability_time_fraction == 0.5
    assert request.makespan_limit is None and tuple(request.precedences) == ()
    assert request.deterministic is True and request.clock is None


def test_a_pinned_operation_is_fixed_and_has_no_earliest_start(state: ExecutionState) -> None:
    request = disrupted_request(state, pins={INTERRUPTED: 20}, hint=None, time_limit=0.0)
    assert dict(request.fixed) == {**state.frozen_starts(), INTERRUPTED: 20}
    assert dict(request.min_starts) == {}
    assert request.time_limit == 0.01  # never a zero budget


def test_every_knob_reaches_the_request(state: ExecutionState) -> None:
    wall = SearchClock(deterministic=False)
    order = [((0, 2), (3, 1))]
    request = disrupted_request(state, pins={}, hint=None, time_limit=1.0, seed=9, workers=3,
                                stability=StabilityObjective.TOTAL_SHIFT, makespan_limit=70,
                                stability_time_fraction=0.25, precedences=order, clock=wall)
    assert (request.seed, request.workers, request.makespan_limit) == (9, 3, 70)
    assert request.stability is StabilityObjective.TOTAL_SHIFT and request.stability_time_fraction == 0.25
    assert request.reference == state.planned_starts()  # shift is measured from the plan in force
    assert list(request.precedences) == order
    assert request.clock is wall and request.deterministic is False  # a wall clock's solve counts wall time
    assert disrupted_request(state, pins={}, hint=None, time_limit=1.0,
                             clock=SearchClock()).deterministic is True


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[SolveRequest]:
    """The requests ``full`` and ``full_stable`` hand ``optimize`` (which is not run)."""
    seen: list[SolveRequest] = []

    def spy(request: SolveRequest, *args: Any, **kwargs: Any) -> str:
        seen.append(request)
        return "solved"

    monkeypatch.setattr(resolving, "optimize", spy)
    return seen


@pytest.mark.parametrize(("method", "stability"), [(full, StabilityObjective.NONE),
                                                   (full_stable, StabilityObjective.TOTAL_SHIFT)])
def test_the_global_methods_solve_every_free_operation_from_the_hint(
        state: ExecutionState, asked: list[SolveRequest], method: Any, stability: StabilityObjective) -> None:
    hint, clock = aor(state), SearchClock()
    assert method(state, hint, budget=0.7, seed=4, workers=3, clock=clock) == "solved"
    assert method(state, hint, budget=0.7) == "solved"
    given, default = asked
    assert dict(given.fixed) == state.frozen_starts() and given.hint is hint and given.time_limit == 0.7
    assert (given.seed, given.workers, given.clock, given.stability) == (4, 3, clock, stability)
    assert (given.reference is None) == (stability is StabilityObjective.NONE)
    assert (default.seed, default.workers, default.clock) == (0, 2, None)
    assert default.hint is hint and default.stability is stability


def test_full_stable_moves_less_than_full_at_the_same_makespan(state: ExecutionState) -> None:
    # ft06 is solved to optimality well inside the budget, so both answers have the least makespan; the
    # second phase of full-stable then takes back the moves full has no reason to avoid.
    hint = aor(state)
    fast = full(state, hint, budget=2.0, workers=1)
    stable = full_stable(state, hint, budget=2.0, workers=1)
    assert stable.schedule.makespan == fast.schedule.makespan
    assert total_start_shift(state.baseline, stable.schedule) < total_start_shift(state.baseline, fast.schedule)
