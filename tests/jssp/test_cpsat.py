"""The CP-SAT optimizer: optimality on known instances, hints, pinned operations, disruptions, stability,
named errors, determinism."""

from __future__ import annotations

from itertools import pairwise

import pytest

from alas_argo.errors import InfeasibleError, InputError, NoSolutionError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, SolveStatus, StabilityObjective, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import ProgressEvent, build_model
from alas_argo.jssp.validate import validate


def test_proves_the_optimum_of_tiny(tiny: Instance) -> None:
    result = optimize(SolveRequest(tiny, time_limit=2))
    assert (result.status, result.objective, result.bound) == (SolveStatus.OPTIMAL, 11, 11)
    assert validate(tiny, result.schedule).valid
    assert result.total_shift is None and result.improved


def test_proves_the_optimum_of_ft06_and_reports_progress(ft06: Instance) -> None:
    events: list[ProgressEvent] = []
    result = optimize(SolveRequest(ft06, time_limit=2), progress=events.append)
    assert (result.status, result.objective, result.bound) == (SolveStatus.OPTIMAL, 55, 55)
    assert validate(ft06, result.schedule).valid
    assert events and events[-1].makespan == 55
    assert all(a.makespan >= b.makespan for a, b in pairwise(events))


def test_never_worse_than_the_hint() -> None:
    instance = get_instance("ta51")
    hint = dispatch(instance, "mwkr")
    result = optimize(SolveRequest(instance, time_limit=0.05, hint=hint))
    assert result.objective <= hint.makespan
    assert result.status in (SolveStatus.HINT, SolveStatus.FEASIBLE)
    assert result.improved == (result.objective < hint.makespan)
    assert validate(instance, result.schedule).valid


def test_an_infeasible_hint_is_not_returned(tiny: Instance) -> None:
    hint = dispatch(tiny, "spt")
    # The downtime makes the hint infeasible; the solver must still produce a valid answer of its own.
    result = optimize(SolveRequest(tiny, time_limit=2, hint=hint, downtimes=[(0, 0, 4)]))
    assert result.status is SolveStatus.OPTIMAL
    assert all(o.machine != 0 or o.start >= 4 for o in result.schedule.operations)


def test_fixed_operations_stay_put(ft06: Instance) -> None:
    base = optimize(SolveRequest(ft06, time_limit=2)).schedule
    fixed = {o.key: o.start + 3 for o in base.operations if o.job == 0}
    result = optimize(SolveRequest(ft06, time_limit=2, fixed=fixed))
    starts = result.schedule.starts()
    assert all(starts[k] == v for k, v in fixed.items())
    assert validate(ft06, result.schedule).valid


def test_downtimes_release_and_min_starts(ft06: Instance) -> None:
    downtimes = [(2, 10, 30), (5, 0, 8)]
    result = optimize(SolveRequest(ft06, time_limit=2, release=1, min_starts={(3, 0): 20},
                                   downtimes=downtimes, durations={(0, 0): 9}))
    schedule = result.schedule
    for o in schedule.operations:
        assert o.start >= 1
        for m, s, e in downtimes:
            assert o.machine != m or o.end <= s or o.start >= e
    assert schedule.by_key()[(3, 0)].start >= 20
    assert schedule.by_key()[(0, 0)].duration == 9
    assert result.objective >= 55 and result.status is SolveStatus.OPTIMAL


def test_total_shift_keeps_an_optimal_reference(ft06: Instance) -> None:
    reference = optimize(SolveRequest(ft06, time_limit=2)).schedule.starts()
    for stability in (StabilityObjective.TOTAL_SHIFT, StabilityObjective.WEIGHTED):
        result = optimize(SolveRequest(ft06, time_limit=2, reference=reference, stability=stability))
        assert result.objective == 55
        assert result.total_shift == 0


def test_total_shift_phase_reduces_shift_without_worsening_makespan(ft06: Instance) -> None:
    reference = optimize(SolveRequest(ft06, time_limit=2)).schedule.starts()
    disrupted = {(1, 2): 15, (4, 1): 12}
    plain = optimize(SolveRequest(ft06, time_limit=2, durations=disrupted, reference=reference))
    stable = optimize(SolveRequest(ft06, time_limit=2, durations=disrupted, reference=reference,
                                   stability=StabilityObjective.TOTAL_SHIFT))
    assert plain.status is SolveStatus.OPTIMAL
    assert stable.objective == plain.objective
    assert stable.total_shift is not None and plain.total_shift is not None
    assert stable.total_shift <= plain.total_shift


def test_stability_needs_a_reference(ft06: Instance) -> None:
    with pytest.raises(InputError, match="reference"):
        optimize(SolveRequest(ft06, stability=StabilityObjective.TOTAL_SHIFT))


def test_makespan_limit_below_the_optimum_is_infeasible(tiny: Instance) -> None:
    with pytest.raises(InfeasibleError):
        optimize(SolveRequest(tiny, time_limit=2, makespan_limit=10))
    assert optimize(SolveRequest(tiny, time_limit=2, makespan_limit=11)).objective == 11


def test_colliding_pinned_operations_are_infeasible(tiny: Instance) -> None:
    # (0, 0) and (1, 0) both run on machine 0.
    with pytest.raises(InfeasibleError, match="overlaps"):
        optimize(SolveRequest(tiny, fixed={(0, 0): 0, (1, 0): 1}))
    with pytest.raises(InfeasibleError):
        optimize(SolveRequest(tiny, fixed={(0, 0): 0}, downtimes=[(0, 2, 5)]))


def test_unknown_operations_are_input_errors(tiny: Instance) -> None:
    with pytest.raises(InputError):
        optimize(SolveRequest(tiny, fixed={(7, 0): 0}))
    with pytest.raises(InputError):
        optimize(SolveRequest(tiny, durations={(0, 9): 1}))


def test_no_solution_without_a_hint() -> None:
    with pytest.raises(NoSolutionError):
        optimize(SolveRequest(get_instance("ta71"), time_limit=0.01))


@pytest.mark.timeout(60)  # 16 s measured in the whole suite on a loaded 2-core machine
def test_deterministic_mode_is_reproducible() -> None:
    instance = get_instance("la16")
    runs = [optimize(SolveRequest(instance, time_limit=0.05, seed=5, deterministic=True)) for _ in range(2)]
    assert runs[0].schedule == runs[1].schedule
    assert validate(instance, runs[0].schedule).valid


def test_extra_precedences_are_enforced(tiny: Instance) -> None:
    result = optimize(SolveRequest(tiny, time_limit=2, precedences=[((2, 2), (0, 0))]))
    ops = result.schedule.by_key()
    assert ops[(2, 2)].end <= ops[(0, 0)].start
    assert validate(tiny, result.schedule).valid


@pytest.mark.timeout(60)  # 12 s measured in the whole suite on a loaded 2-core machine
def test_pinned_operations_are_constants_not_variables() -> None:
    instance = get_instance("ta71")
    base = dispatch(instance, "mwkr")
    free = {o.key for o in base.operations if 1000 <= o.start < 1100}
    fixed = {o.key: o.start for o in base.operations if o.key not in free}
    model = build_model(instance, durations={}, fixed=fixed, release=0, min_starts={}, downtimes=(),
                        precedences=(), makespan_limit=None, horizon=None, hint=base)
    assert set(model.starts) == free
    assert model.hint_makespan == base.makespan
    result = optimize(SolveRequest(instance, time_limit=2, fixed=fixed, hint=base))
    assert result.objective <= base.makespan
    assert all(result.schedule.starts()[k] == v for k, v in fixed.items())
    assert validate(instance, result.schedule).valid


def test_weighted_never_worse_than_its_hint(ft06: Instance) -> None:
    reference = optimize(SolveRequest(ft06, time_limit=2)).schedule
    hint = dispatch(ft06, "spt")
    result = optimize(SolveRequest(ft06, time_limit=0.5, hint=hint, reference=reference.starts(),
                                   stability=StabilityObjective.WEIGHTED, makespan_weight=100))
    hint_shift = sum(abs(o.start - reference.starts()[o.key]) for o in hint.operations)
    assert result.total_shift is not None
    assert 100 * result.objective + result.total_shift <= 100 * hint.makespan + hint_shift
    assert validate(ft06, result.schedule).valid
