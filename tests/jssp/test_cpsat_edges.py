"""The CP-SAT optimizer's edges: what its errors say, what a returned hint carries, when a status is OPTIMAL,
how the two stability phases share one budget, what progress events say, the limits it records, and how the
WEIGHTED objective weighs the makespan. Small instances (tiny, a 2x2, ft06, la01, ft10 under a 0.2 s
deterministic budget) keep each test under a second; every budget is deterministic unless the test is about
wall-time mode, so the statuses asserted are reproducible."""

from __future__ import annotations

import signal
import time

import pytest

from alas_argo import interrupts
from alas_argo.errors import InfeasibleError, InputError, NoSolutionError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, SolveStatus, StabilityObjective, _key, _weight, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate

#: Two jobs crossing two machines: its optimum (5) is its trivial bound (a job's length, a machine's load).
TWO = Instance(name="two", jobs=[[(0, 3), (1, 2)], [(1, 3), (0, 2)]])



def _shift(schedule: Schedule, reference: dict[tuple[int, int], int]) -> int:
    return sum(abs(o.start - reference[o.key]) for o in schedule.operations if o.key in reference)


# --- the named errors ---------------------------------------------------------------------------------------


def test_a_proven_infeasible_request_is_an_error_naming_its_instance(tiny: Instance) -> None:
    with pytest.raises(InfeasibleError) as raised:
        optimize(SolveRequest(tiny, time_limit=2, makespan_limit=10))  # the optimum is 11
    assert raised.value.where == "tiny"
    assert str(raised.value) == "tiny: no schedule satisfies the request's constraints"


def test_no_solution_in_time_names_the_budget_and_the_instance() -> None:
    with pytest.raises(NoSolutionError) as raised:
        optimize(SolveRequest(get_instance("ta71"), time_limit=0.01))
    assert raised.value.where == "ta71"
    assert str(raised.value) == "ta71: no solution within 0.01 s"


# --- the warm start -----------------------------------------------------------------------------------------


def test_a_hint_the_search_cannot_beat_comes_back_whole_with_its_own_figures() -> None:
    # 0.01 s on 2000 operations: the search finds nothing, so the hint is the answer.
    instance = get_instance("ta71")
    hint = dispatch(instance, "mwkr")
    reference = {k: s + 1 for k, s in hint.starts().items()}  # every operation one unit from its reference
    before = time.monotonic()
    result = optimize(SolveRequest(instance, time_limit=0.01, hint=hint, reference=reference))
    elapsed = time.monotonic() - before
    assert result.status is SolveStatus.HINT and result.schedule == hint
    assert result.objective == hint.makespan and not result.improved
    assert 0 < result.bound < hint.makespan  # the model's lower bound, not the hint's makespan
    assert result.total_shift == len(hint.operations)
    assert result.limits["solves"] == 1 and result.limits["deterministic"] is True
    assert 0 <= result.seconds <= elapsed


def test_a_beaten_hint_is_not_reported_and_an_equal_one_is_not_an_improvement(tiny: Instance,
                                                                              ft06: Instance) -> None:
    beaten = optimize(SolveRequest(tiny, time_limit=2, hint=dispatch(tiny, "spt")))  # spt: 17, optimum 11
    assert (beaten.status, beaten.objective, beaten.improved) == (SolveStatus.OPTIMAL, 11, True)
    best = optimize(SolveRequest(ft06, time_limit=2)).schedule
    equal = optimize(SolveRequest(ft06, time_limit=2, hint=best))
    # The search matches the optimal hint and proves it: OPTIMAL (not HINT), and no improvement on the hint.
    assert (equal.status, equal.objective, equal.improved) == (SolveStatus.OPTIMAL, 55, False)


def test_an_infeasible_hint_better_than_any_feasible_plan_is_never_returned(tiny: Instance) -> None:
    best = optimize(SolveRequest(tiny, time_limit=2)).schedule  # makespan 11, machine 0 busy at once
    result = optimize(SolveRequest(tiny, time_limit=2, hint=best, downtimes=[(0, 0, 4)]))
    assert result.status is SolveStatus.OPTIMAL and result.objective > best.makespan
    assert all(o.machine != 0 or o.start >= 4 for o in result.schedule.operations)


# --- statuses and bounds ------------------------------------------------------------------------------------


def test_a_budget_ending_before_a_proof_is_feasible_with_a_lower_bound() -> None:
    instance = get_instance("la01")  # optimum 666; 0.01 s of deterministic time does not reach it
    result = optimize(SolveRequest(instance, time_limit=0.01, seed=1))
    assert result.status is SolveStatus.FEASIBLE
    assert 0 < result.bound < result.objective
    assert validate(instance, result.schedule).valid


def test_weighted_proves_no_makespan_so_its_bound_is_the_trivial_one(ft06: Instance) -> None:
    reference = optimize(SolveRequest(ft06, time_limit=2)).schedule.starts()
    result = optimize(SolveRequest(ft06, time_limit=2, reference=reference,
                                   stability=StabilityObjective.WEIGHTED))
    # CP-SAT proves the weighted objective optimal, not the makespan: the bound is ft06's trivial bound (52),
    # not the weighted objective's bound, and 55 > 52 is not proven optimal.
    assert (result.status, result.objective, result.bound, result.total_shift) == (
        SolveStatus.FEASIBLE, 55, 52, 0)
    assert result.limits["solves"] == 1  # one phase: the shifts are in its objective, no stability solve


def test_weighted_reaching_the_trivial_bound_is_optimal() -> None:
    plain = optimize(SolveRequest(TWO, time_limit=1))
    reference = {k: s + 1 for k, s in plain.schedule.starts().items()}
    result = optimize(SolveRequest(TWO, time_limit=1, reference=reference, stability=StabilityObjective.WEIGHTED))
    assert (result.status, result.objective, result.bound) == (SolveStatus.OPTIMAL, 5, 5)


def test_total_shift_keeps_the_first_phase_bound_and_counts_both_solves(ft06: Instance) -> None:
    reference = optimize(SolveRequest(ft06, time_limit=2)).schedule.starts()
    result = optimize(SolveRequest(ft06, time_limit=2, reference=reference,
                                   stability=StabilityObjective.TOTAL_SHIFT))
    assert (result.status, result.objective, result.bound, result.total_shift) == (SolveStatus.OPTIMAL, 55, 55, 0)
    assert result.limits["solves"] == 2


def test_the_requests_horizon_bounds_every_operation(tiny: Instance) -> None:
    with pytest.raises(InfeasibleError):
        optimize(SolveRequest(tiny, time_limit=2, horizon=10))  # the optimum is 11
    assert optimize(SolveRequest(tiny, time_limit=2, horizon=11)).objective == 11


# --- references ---------------------------------------------------------------------------------------------


def test_a_reference_for_some_operations_shifts_only_those(ft06: Instance) -> None:
    reference = {k: v for k, v in optimize(SolveRequest(ft06, time_limit=2)).schedule.starts().items()
                 if k[0] != 0}  # job 0 (the first operations built) has no reference start
    stable = optimize(SolveRequest(ft06, time_limit=2, reference=reference, durations={(1, 2): 15},
                                   stability=StabilityObjective.TOTAL_SHIFT))
    plain = optimize(SolveRequest(ft06, time_limit=2, reference=reference, durations={(1, 2): 15}))
    assert stable.objective == plain.objective
    assert stable.total_shift == _shift(stable.schedule, reference)
    assert plain.total_shift is not None and stable.total_shift < plain.total_shift


def test_a_reference_far_beyond_the_horizon_is_still_a_reference(ft06: Instance) -> None:
    # Each shift variable's domain must reach |start - reference| for any start up to the horizon.
    reference = {k: s + 10_000 for k, s in optimize(SolveRequest(ft06, time_limit=2)).schedule.starts().items()}
    result = optimize(SolveRequest(ft06, time_limit=2, reference=reference,
                                   stability=StabilityObjective.TOTAL_SHIFT))
    assert result.objective == 55
    assert result.total_shift == _shift(result.schedule, reference) > 36 * 9_900


# --- one budget for two phases ------------------------------------------------------------------------------


def test_the_two_phases_of_total_shift_share_the_request_budget() -> None:
    instance = get_instance("ft10")  # not solved to optimality in 0.2 s: each phase uses its whole share
    plain = optimize(SolveRequest(instance, time_limit=0.2, seed=1))
    assert plain.limits["nominal_seconds"] == pytest.approx(0.2, rel=0.05)
    clock = SearchClock()
    optimize(SolveRequest(instance, time_limit=0.2, seed=1, clock=clock))  # an earlier solve on the same clock
    began = clock.now()
    first_phase: list[float] = []

    def progress(event: ProgressEvent) -> None:
        if event.phase == "stability" and not first_phase:
            first_phase.append(clock.now() - began)  # charged once phase 1 has ended

    reference = dispatch(instance, "spt").starts()
    optimize(SolveRequest(instance, time_limit=0.2, seed=1, reference=reference,
                          stability=StabilityObjective.TOTAL_SHIFT, clock=clock), progress=progress)
    assert first_phase and first_phase[0] == pytest.approx(0.1, rel=0.1)  # 1 - stability_time_fraction
    assert clock.now() - began == pytest.approx(0.2, rel=0.05)  # the rest, not more
    assert clock.solves == 3


# --- progress ----------------------------------------------------------------------------------------------


def test_progress_names_each_phase_and_gives_only_the_first_a_bound(ft06: Instance) -> None:
    events: list[ProgressEvent] = []
    reference = dispatch(ft06, "spt").starts()
    result = optimize(SolveRequest(ft06, time_limit=2, reference=reference,
                                   stability=StabilityObjective.TOTAL_SHIFT), progress=events.append)
    phases = [e.phase for e in events]
    assert "cpsat" in phases and "stability" in phases
    assert phases == sorted(phases)  # every "cpsat" event before every "stability" one
    for e in events:
        assert isinstance(e.makespan, int) and isinstance(e.bound, int)
        assert 0 <= e.seconds <= result.seconds  # measured from the same start as the result's
        if e.phase == "cpsat":
            assert 0 < e.bound <= e.makespan
        else:
            assert e.bound == 0 and e.makespan == result.objective


def test_a_stop_during_the_stability_phase_names_that_solve(ft06: Instance) -> None:
    def progress(event: ProgressEvent) -> None:
        if event.phase == "stability":
            interrupts.request_stop(signal.SIGTERM)

    with pytest.raises(interrupts.Interrupted) as stopped:
        optimize(SolveRequest(ft06, time_limit=2, reference=dispatch(ft06, "spt").starts(),
                              stability=StabilityObjective.TOTAL_SHIFT), progress=progress)
    assert stopped.value.where == "the stability solve"


# --- limits -------------------------------------------------------------------------------------------------


def test_the_limits_record_the_kind_of_budget_and_the_workers(tiny: Instance) -> None:
    default = optimize(SolveRequest(tiny, time_limit=2, workers=2))
    assert default.limits["deterministic"] is True and default.limits["search_workers"] == 1
    wall = optimize(SolveRequest(tiny, time_limit=2, workers=2, deterministic=False))
    assert wall.objective == 11
    assert wall.limits["deterministic"] is False and wall.limits["search_workers"] == 2
    assert "nominal_seconds" not in wall.limits


# --- how the request ranks schedules ------------------------------------------------------------------------


def test_the_weighted_objective_weighs_the_makespan_by_the_free_referenced_operations(tiny: Instance) -> None:
    every = {(j, s): 0 for j in range(3) for s in range(3)}
    # Unknown jobs and steps (negative, past the end) and pinned operations do not count.
    extra = {(-1, 0): 0, (3, 0): 0, (0, 3): 0, (0, -1): 0, (7, 1): 0}
    request = SolveRequest(tiny, reference=every | extra, fixed={(1, 0): 0},
                           stability=StabilityObjective.WEIGHTED)
    assert _weight(request) == 8
    assert _weight(SolveRequest(tiny, reference={}, stability=StabilityObjective.WEIGHTED)) == 1
    assert _weight(SolveRequest(tiny, reference={(0, 0): 0}, stability=StabilityObjective.WEIGHTED)) == 1
    assert _weight(SolveRequest(tiny, reference=every, makespan_weight=7,
                                stability=StabilityObjective.WEIGHTED)) == 7


@pytest.mark.parametrize("weight", [0, -3])
def test_a_makespan_weight_below_one_is_refused_not_read_as_the_default(tiny: Instance, weight: int) -> None:
    request = SolveRequest(tiny, reference={(0, 0): 0}, makespan_weight=weight, stability=StabilityObjective.WEIGHTED)
    with pytest.raises(InputError, match=f"the makespan weight must be at least 1 .*got {weight}"):
        optimize(request)


def test_schedules_rank_by_the_requests_objective(tiny: Instance) -> None:
    schedule = optimize(SolveRequest(tiny, time_limit=2)).schedule  # makespan 11
    reference = {k: s + 2 for k, s in schedule.starts().items()}  # 9 operations, each 2 off: shift 18
    weighted = SolveRequest(tiny, reference=reference, stability=StabilityObjective.WEIGHTED)
    assert _key(weighted, schedule) == (9 * 11 + 18, 0)
    assert _key(SolveRequest(tiny, reference=reference, stability=StabilityObjective.TOTAL_SHIFT),
                schedule) == (11, 18)
    assert _key(SolveRequest(tiny, reference=reference), schedule) == (11, 0)
    assert _key(SolveRequest(tiny, stability=StabilityObjective.WEIGHTED), schedule) == (11, 0)
    assert _key(SolveRequest(tiny, reference={k: s for k, s in schedule.starts().items()},
                             stability=StabilityObjective.TOTAL_SHIFT), schedule) == (11, 0)
