"""LCRP's settle pass, its time box, and the neighbourhood solve's hint fallback."""

from __future__ import annotations

from itertools import pairwise

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.jssp.repair import repair
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.repair.resolving import disrupted_request, full
from alas_argo.jssp.repair.settling import latest_fit, restore, settle
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.subproblem import solve_neighbourhood
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


@pytest.fixture(scope="module")
def la01() -> tuple[Instance, Schedule]:
    inst = get_instance("la01")
    return inst, optimize(SolveRequest(inst, time_limit=1.0, workers=1)).schedule


def test_latest_fit_steps_before_downtimes(ft06: Instance) -> None:
    plan = optimize(SolveRequest(ft06, time_limit=0.5, workers=1)).schedule
    st = ExecutionState.at(ft06, plan, Disruption(time=5, events=[
        MachineBreakdown(machine=0, start=10, duration=5), MachineBreakdown(machine=0, start=20, duration=3)]))
    assert latest_fit(st, 0, 30, 4) == 30  # clear of both windows
    assert latest_fit(st, 0, 18, 4) == 16  # [18, 22) hits [20, 23); [16, 20) touches neither
    assert latest_fit(st, 0, 21, 7) == 3  # [21, 28) hits [20, 23), [13, 20) hits [10, 15)
    assert latest_fit(st, 1, 18, 4) == 18  # another machine
    assert latest_fit(st, 0, 12, 0) == 12  # zero length overlaps nothing
    assert latest_fit(st, 0, 15, 4) == 15  # starts as [10, 15) ends: touching is not overlapping
    assert latest_fit(st, 0, 14, 1) == 9  # one unit long still steps before a downtime


def test_settle_re_times_each_operation_to_its_planned_start_or_its_earliest_within_the_target(
        la01: tuple[Instance, Schedule]) -> None:
    """A makespan-only global solve places slack operations arbitrarily; settling re-times them in its machine
    order and never moves more. On this case it put none back when measured (35 moved before and after): that
    settling does gain is `test_settle_then_restore_put_operations_of_a_careless_re_solve_back`'s case."""
    inst, plan = la01
    d = Disruption(time=150, events=[MachineBreakdown(machine=0, start=150, duration=80)])
    st = ExecutionState.at(inst, plan, d)
    probe = optimize(disrupted_request(st, pins={}, hint=aor(st), time_limit=0.5, workers=1)).schedule
    settled = settle(st, probe, probe.makespan)
    assert validate(inst, settled, disruption=d, baseline=plan).valid
    assert settled.makespan <= probe.makespan
    assert moved_operations(plan, settled) <= moved_operations(plan, probe)
    # Machine order is kept: settling only re-times.
    assert settled.machine_sequences() == probe.machine_sequences()
    # Every free operation at its planned start, or as early as its job and machine predecessors (in the settled
    # plan) and the downtimes let it start.
    starts, planned = settled.starts(), plan.starts()
    before = {b: a for seq in settled.machine_sequences().values() for a, b in pairwise(seq)}
    for (j, step) in st.free:
        k = (j, step)
        ready = max([st.release[k], *(starts[p] + st.durations[p] for p in ((j, step - 1), before.get(k))
                                      if p is not None and p in starts)])
        assert starts[k] in (planned[k], st.earliest_fit(inst.machine(j, step), ready, st.durations[k]))


def test_settle_then_restore_put_operations_of_a_careless_re_solve_back() -> None:
    """la01 (a dispatching plan), machine 1 down over [120, 190), a 0.5 s makespan-only re-solve: settling
    puts some of its needless moves back within its makespan, restoring after it more, each only to the planned
    start. Restoring keeps no makespan (here 682 -> 735): its caller, ``stabilizing.settled``, checks that."""
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=120, events=[MachineBreakdown(machine=1, start=120, duration=70)])
    st = ExecutionState.at(inst, plan, d)
    careless = full(st, aor(st), budget=0.5, workers=1).schedule
    planned = plan.starts()
    settled = settle(st, careless, careless.makespan)
    restored = restore(st, settled)
    assert settled.makespan <= careless.makespan
    for better, worse in ((settled, careless), (restored, settled)):
        assert validate(inst, better, disruption=d, baseline=plan).valid
        assert moved_operations(plan, better) < moved_operations(plan, worse)
    assert all(restored.starts()[k] in (settled.starts()[k], planned[k]) for k in planned)
    assert restore(st, restored) is restored  # nothing more goes back


def _la02_after_a_careless_re_solve() -> tuple[ExecutionState, Disruption, Schedule]:
    """la02 (a dispatching plan), the generator's breakdown seed 1, a 0.3 s makespan-only re-solve, settled:
    a plan whose needless moves restoring can put back, some of them only by ending later than it does."""
    inst = get_instance("la02")
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, "breakdown", seed=1)
    st = ExecutionState.at(inst, plan, d)
    careless = full(st, aor(st), budget=0.3, workers=1).schedule
    return st, d, settle(st, careless, careless.makespan)


def test_restore_within_a_target_puts_back_only_what_ends_by_it() -> None:
    st, d, settled = _la02_after_a_careless_re_solve()
    plan, planned = st.baseline, st.baseline.starts()
    unbounded = restore(st, settled)
    assert unbounded.makespan > settled.makespan  # what the target is there for
    bounded = restore(st, settled, settled.makespan)
    assert bounded.makespan <= settled.makespan
    assert validate(st.instance, bounded, disruption=d, baseline=plan).valid
    assert moved_operations(plan, unbounded) < moved_operations(plan, bounded) < moved_operations(plan, settled)
    assert all(bounded.starts()[k] in (settled.starts()[k], planned[k]) for k in planned)
    assert restore(st, bounded, settled.makespan) is bounded


def test_restore_keeps_held_operations_where_the_plan_has_them() -> None:
    st, d, settled = _la02_after_a_careless_re_solve()
    plan, now = st.baseline, settled.starts()
    moved_back = [k for k, s in restore(st, settled, settled.makespan).starts().items() if s != now[k]]
    held = {min(moved_back, key=lambda k: plan.starts()[k])}  # the others do not need it back first
    restored = restore(st, settled, settled.makespan, held=held)
    assert held and all(restored.starts()[k] == now[k] for k in held)
    assert moved_operations(plan, restored) < moved_operations(plan, settled)  # the others still go back
    assert validate(st.instance, restored, disruption=d, baseline=plan).valid


def test_settle_keeps_held_operations(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "shock", seed=3)
    st = ExecutionState.at(inst, plan, d)
    probe = optimize(disrupted_request(st, pins={}, hint=aor(st), time_limit=0.5, workers=1)).schedule
    held = set(sorted(st.free)[::3])
    settled = settle(st, probe, probe.makespan, held=held)
    assert validate(inst, settled, disruption=d, baseline=plan).valid
    assert all(settled.starts()[k] == probe.starts()[k] for k in held)
    assert all(settled.starts()[k] == probe.starts()[k] for k in st.frozen)


def test_settle_of_aor_changes_nothing_it_should_not(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "breakdown", seed=0)
    st = ExecutionState.at(inst, plan, d)
    shifted = aor(st)
    settled = settle(st, shifted, shifted.makespan)
    # AOR already starts everything it can at its planned start, in the planned order.
    assert moved_operations(plan, settled) <= moved_operations(plan, shifted)
    assert validate(inst, settled, disruption=d, baseline=plan).valid


def test_the_time_box_fits_the_free_operations_and_the_repair_is_no_longer_than_aor(
        la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "mixed", seed=1)
    st = ExecutionState.at(inst, plan, d)
    total, cascade = lcrp_module._caps(st, budget=30.0)
    assert cascade <= total / 2 and total <= max(lcrp_module.TOTAL_FLOOR, lcrp_module.TOTAL_PER_OP * len(st.free))
    r = repair(inst, plan, d, "lcrp", budget=30.0, workers=1)
    assert r.valid and r.makespan <= repair(inst, plan, d, "aor").makespan


def test_a_budget_below_the_time_box_bounds_the_whole_repair() -> None:
    """ta01 (a dispatching plan), the generator's shock seed 0: its repair takes about 0.1 nominal s under a
    30 s budget; under budgets of 0.02 and 0.05 s it stops within them (counted on the deterministic clock, the
    same on every machine) and still returns a valid plan no longer than the right shift's."""
    inst = get_instance("ta01")
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, "shock", seed=0)
    free = repair(inst, plan, d, "lcrp", budget=30.0, workers=1, first_edit="redispatch")
    assert free.limits["nominal_seconds"] > 0.05  # the budgets below bind
    shifted = repair(inst, plan, d, "aor").makespan
    for budget in (0.02, 0.05):
        r = repair(inst, plan, d, "lcrp", budget=budget, workers=1, first_edit="redispatch")
        assert r.limits["nominal_seconds"] <= budget
        assert r.valid and r.makespan <= shifted


def test_caps_never_exceed_the_budget(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    st = ExecutionState.at(inst, plan, generate_disruption(inst, plan, "breakdown", seed=0))
    total, cascade = lcrp_module._caps(st, budget=0.02)
    assert total == 0.02 and cascade <= 0.02 * lcrp_module.CASCADE_MAX_SHARE


def test_effort_scales_the_time_box_within_the_budget(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    st = ExecutionState.at(inst, plan, generate_disruption(inst, plan, "breakdown", seed=0))
    total, cascade = lcrp_module._caps(st, budget=30.0)
    total2, cascade2 = lcrp_module._caps(st, budget=30.0, effort=2.0)
    assert total2 == pytest.approx(2 * total) and cascade < cascade2 <= 2 * cascade
    assert lcrp_module._caps(st, budget=total * 1.5, effort=2.0)[0] == total * 1.5


def test_effort_outside_its_range_is_bad_input(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "breakdown", seed=0)
    for effort in (0.0, -1.0, 1000.0):
        with pytest.raises(InputError, match="effort"):
            repair(inst, plan, d, "lcrp", effort=effort)
    assert repair(inst, plan, d, "lcrp", effort=2.0, workers=1).valid


def test_a_neighbourhood_solve_out_of_time_returns_its_feasible_hint() -> None:
    inst = get_instance("ta01")
    plan = optimize(SolveRequest(inst, time_limit=0.5, workers=1)).schedule
    d = Disruption(time=300, events=[MachineBreakdown(machine=1, start=300, duration=120)])
    st = ExecutionState.at(inst, plan, d)
    start = aor(st)
    # 10 ms for a global stability model of a 15x15 instance: often no solution of its own in time.
    request = disrupted_request(st, pins={}, hint=start, time_limit=0.01, workers=1, makespan_limit=start.makespan)
    found = solve_neighbourhood(request, plan.starts(), minimize_makespan=False)
    assert found is not None
    assert validate(inst, found, disruption=d, baseline=plan).valid
    assert found.makespan <= start.makespan
