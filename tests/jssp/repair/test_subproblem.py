"""The LCRP neighbourhood solve: limits, pins, stability phases."""

from __future__ import annotations

from itertools import combinations

import pytest

from alas_argo.errors import InfeasibleError, NoSolutionError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, SolveStatus, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import subproblem
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations, total_start_shift
from alas_argo.jssp.repair.resolving import disrupted_request, full, full_stable
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.subproblem import fewest_moves, solve_neighbourhood
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import cp_model
from alas_argo.jssp.validate import validate
from tests.jssp.strategies import plan_at


def _case():
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=120, events=[MachineBreakdown(machine=1, start=120, duration=70)])
    return inst, plan, d, ExecutionState.at(inst, plan, d)


def _late_pins(st: ExecutionState, start: Schedule, count: int) -> tuple[dict, SolveRequest]:
    planned = st.baseline.starts()
    late = sorted(st.free, key=lambda k: planned[k])[-count:]
    pins = {k: start.starts()[k] for k in late}
    return pins, disrupted_request(st, pins=pins, hint=start, time_limit=0.5, workers=1,
                                   makespan_limit=start.makespan)


def test_pins_hold_and_the_result_is_valid() -> None:
    inst, plan, d, st = _case()
    start = aor(st)
    planned = plan.starts()
    pins, request = _late_pins(st, start, 10)
    found = solve_neighbourhood(request, planned, minimize_makespan=True)
    assert found is not None
    assert validate(inst, found, disruption=d, baseline=plan).valid
    assert all(found.starts()[k] == s for k, s in pins.items())
    assert found.makespan <= start.makespan


def test_fewest_moves_keeps_pins_limit_and_never_moves_more_than_its_hint() -> None:
    inst, plan, d, st = _case()
    start = aor(st)
    planned = plan.starts()
    pins, request = _late_pins(st, start, 5)
    found = fewest_moves(request, planned)
    assert found is not None
    assert validate(inst, found, disruption=d, baseline=plan).valid
    assert found.makespan <= start.makespan
    assert all(found.starts()[k] == s for k, s in pins.items())
    assert moved_operations(plan, found) <= moved_operations(plan, start)


def _small() -> tuple[ExecutionState, Schedule]:
    """Three jobs on two machines, machine 0 down over [2, 5) from the reveal at 0: six free operations, few
    enough to try every set of them kept at its planned start."""
    inst = Instance(name="small", jobs=[[(0, 3), (1, 2)], [(1, 3), (0, 2)], [(0, 2), (1, 2)]])
    plan = plan_at(inst, {(0, 0): 0, (1, 0): 0, (2, 0): 3, (0, 1): 3, (1, 1): 5, (2, 1): 5})
    assert validate(inst, plan).valid
    st = ExecutionState.at(inst, plan, Disruption(time=0, events=[MachineBreakdown(machine=0, start=2,
                                                                                   duration=3)]))
    return st, plan


def _least_weighted_moves(st: ExecutionState, limit: int, weights: dict[Key, int]) -> int:
    """By brute force: the least weight of the operations not kept at their planned start, over every set kept
    for which some plan within ``limit`` exists (each checked by a global solve with that set pinned)."""
    planned, free = st.baseline.starts(), sorted(st.free)
    best = None
    for r in range(len(free) + 1):
        for kept in combinations(free, r):
            cost = sum(weights.get(k, 1) for k in free if k not in kept)
            if best is not None and cost >= best:
                continue
            try:
                optimize(disrupted_request(st, pins={k: planned[k] for k in kept}, hint=None, time_limit=5,
                                           workers=1, makespan_limit=limit))
            except (InfeasibleError, NoSolutionError):
                continue
            best = cost
    assert best is not None
    return best


def test_the_neighbourhood_solve_over_everything_reaches_the_least_makespan_then_the_least_shift() -> None:
    # The small case, and la01's (there the least shift overall is at a longer makespan: the shift phase must
    # stay at the makespan the first phase reached).
    _, la01_plan, _, la01_state = _case()
    for st, plan in (_small(), (la01_state, la01_plan)):
        request = disrupted_request(st, pins={}, hint=aor(st), time_limit=5, workers=1)
        found = solve_neighbourhood(request, plan.starts(), minimize_makespan=True)
        stable = full_stable(st, aor(st), budget=5, workers=1)
        assert found is not None and stable.status is SolveStatus.OPTIMAL
        assert found.makespan == stable.schedule.makespan == full(st, aor(st), budget=5, workers=1).objective
        assert total_start_shift(plan, found) == total_start_shift(plan, stable.schedule)
    st, plan = _small()
    # Without the makespan phase, the shift phase alone within AOR's makespan: no more shift than AOR's.
    shifted = aor(st)
    request = disrupted_request(st, pins={}, hint=shifted, time_limit=5, workers=1, makespan_limit=shifted.makespan)
    alone = solve_neighbourhood(request, plan.starts(), minimize_makespan=False)
    assert alone is not None and alone.makespan <= shifted.makespan
    assert total_start_shift(plan, alone) <= total_start_shift(plan, shifted)


def test_fewest_moves_is_the_least_count_there_is_weighted_or_not() -> None:
    st, plan = _small()
    optimum = full(st, aor(st), budget=5, workers=1).objective
    for limit in (optimum, optimum + 3):
        for weights in ({}, {(2, 0): 5, (0, 1): 5}):
            request = disrupted_request(st, pins={}, hint=aor(st), time_limit=5, workers=1, makespan_limit=limit)
            found = fewest_moves(request, plan.starts(), weights)
            assert found is not None and found.makespan <= limit
            assert validate(st.instance, found, disruption=Disruption(time=0, events=[
                MachineBreakdown(machine=0, start=2, duration=3)]), baseline=plan).valid
            cost = sum(weights.get(k, 1) for k in moved_keys(plan, found))
            assert cost == _least_weighted_moves(st, limit, weights), (limit, weights)


def test_a_solve_that_finds_nothing_in_time_answers_with_its_hint_when_the_hint_fits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Out of time before a first solution (a loaded machine): a hint that satisfies the request is still an
    answer, a copy of it; a hint that does not (here: above the makespan limit), or none, gives None."""
    st, plan = _small()
    monkeypatch.setattr(subproblem, "run_solver", lambda *args, **kwargs: cp_model.UNKNOWN)
    shifted = aor(st)
    for solve in (lambda r: solve_neighbourhood(r, plan.starts(), minimize_makespan=True),
                  lambda r: solve_neighbourhood(r, plan.starts(), minimize_makespan=False),
                  lambda r: fewest_moves(r, plan.starts())):
        fits = disrupted_request(st, pins={}, hint=shifted, time_limit=1, workers=1, makespan_limit=shifted.makespan)
        answer = solve(fits)
        assert answer is not None and answer is not shifted and answer.operations == shifted.operations
        too_long = disrupted_request(st, pins={}, hint=shifted, time_limit=1, workers=1,
                                     makespan_limit=shifted.makespan - 1)
        assert solve(too_long) is None
        assert solve(disrupted_request(st, pins={}, hint=None, time_limit=1, workers=1)) is None
