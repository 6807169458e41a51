"""The repair entry point: every method, validated results, metrics, bad input."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import RepairMethod, RepairResult, repair
from alas_argo.jssp.repair.metrics import moved_operations, total_start_shift
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ValidationReport


@pytest.fixture
def plan(ft06: Instance) -> Schedule:
    return dispatch(ft06, "mwkr")


@pytest.mark.parametrize("method", list(RepairMethod))
@pytest.mark.parametrize("kind", ["breakdown", "shock", "mixed"])
def test_every_method_returns_a_valid_measured_plan(ft06: Instance, plan: Schedule, method: RepairMethod,
                                                    kind: str) -> None:
    d = generate_disruption(ft06, plan, kind, seed=11)
    r = repair(ft06, plan, d, method, budget=0.5)
    assert r.valid and r.method == method.value
    assert validate(ft06, r.schedule, disruption=d, baseline=plan).valid
    assert r.makespan == r.schedule.makespan
    assert r.moved_operations == moved_operations(plan, r.schedule)
    assert r.total_start_shift == total_start_shift(plan, r.schedule)
    assert r.baseline_makespan == plan.makespan
    assert r.moved_operations <= r.edit_radius or method is RepairMethod.LCRP
    doc = r.to_json()
    for field in ("instance", "operations", "method", "makespan", "moved_operations", "total_start_shift",
                  "edit_radius", "wip_moved", "neighbourhood_growths", "fallback", "seconds", "valid"):
        assert field in doc
    assert RepairResult.model_validate({**doc, "schedule": r.schedule.to_json()}).makespan == r.makespan


def test_resolving_methods_are_never_worse_than_aor(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "mixed", seed=3)
    aor = repair(ft06, plan, d, "aor")
    for method in ("full", "full-stable", "lcrp"):
        assert repair(ft06, plan, d, method, budget=0.5).makespan <= aor.makespan
    assert repair(ft06, plan, d, "right-shift").makespan >= aor.makespan


def test_invalid_plan_in_force_is_rejected_with_codes(ft06: Instance, plan: Schedule) -> None:
    ops = list(plan.operations)
    ops[0] = Operation(job=ops[0].job, step=ops[0].step, machine=ops[0].machine, start=ops[0].start,
                       end=ops[0].end + 1)
    broken = Schedule.from_operations(plan.instance, ops)
    with pytest.raises(InputError, match=r"invalid before the disruption.*wrong_duration"):
        repair(ft06, broken, Disruption(time=5), "aor")


def test_bad_method_budget_and_disruption(ft06: Instance, plan: Schedule) -> None:
    d = Disruption(time=5)
    with pytest.raises(InputError, match="unknown repair method"):
        repair(ft06, plan, d, "magic")
    with pytest.raises(InputError, match="budget"):
        repair(ft06, plan, d, "aor", budget=0)
    with pytest.raises(InputError, match="machine 9 does not exist"):
        repair(ft06, plan, Disruption(time=5, events=[MachineBreakdown(machine=9, start=5, duration=2)]))


@pytest.mark.parametrize("kind", ["breakdown", "shock", "mixed"])
def test_no_plan_is_validated_twice_and_the_returned_one_is_judged(ft06: Instance, plan: Schedule, kind: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import alas_argo.jssp.repair as entry

    d = generate_disruption(ft06, plan, kind, seed=11)
    judged: list[Schedule] = []

    def counting(instance: Instance, schedule: Schedule, **kwargs: Any) -> ValidationReport:
        judged.append(schedule)
        return validate(instance, schedule, **kwargs)

    monkeypatch.setattr(entry, "validate", counting)
    r = repair(ft06, plan, d, "lcrp", budget=0.5)
    # The plan in force once (check_plan_in_force), then each candidate once; the one returned among them.
    assert len({id(s) for s in judged}) == len(judged)
    assert any(s is r.schedule for s in judged) and r.valid


def test_overlapping_breakdowns_of_one_machine_are_one_outage() -> None:
    """Machine 1 reported down over [6, 15) and over [10, 22) (two reports of one outage, or a second failure
    before the first is mended, as a disruption sequence carries an unfinished downtime forward): down over
    [6, 22). Every method repairs it; the global re-solves used to find their model infeasible (the two windows
    were fixed intervals that may not overlap)."""
    inst = Instance(name="three", jobs=[[(1, 3), (0, 3)], [(0, 1), (1, 6)], [(1, 7), (0, 4)]])
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=5, events=[MachineBreakdown(machine=1, start=10, duration=12),
                                   MachineBreakdown(machine=0, start=13, duration=6),
                                   MachineBreakdown(machine=1, start=6, duration=9)])
    assert ExecutionState.at(inst, plan, d).downtimes == [(0, 13, 19), (1, 6, 22)]
    made = {m: repair(inst, plan, d, m, budget=2, workers=1) for m in RepairMethod}
    assert all(validate(inst, r.schedule, disruption=d, baseline=plan).valid for r in made.values())
    assert made[RepairMethod.FULL].makespan == made[RepairMethod.AOR].makespan == 38  # nothing shorter exists
    assert made[RepairMethod.FULL].notes[0].startswith("cp-sat optimal: makespan 38, bound 38")
