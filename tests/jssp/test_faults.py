"""Fault injection: every injected fault comes back from the validator with its code and operation."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.faults import FaultInjection, FaultKind, InjectedFault, applicable_kinds, inject_faults
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ValidationReport, ViolationCode
from tests.jssp.strategies import decode, disrupted_cases, repair_decode, solved_instances

STATIC = applicable_kinds()
DISRUPTED = [FaultKind.STARTED_IN_PAST, FaultKind.DOWNTIME_OVERLAP, FaultKind.FROZEN_MOVED]


def assert_detected(report: ValidationReport, faults: list[InjectedFault]) -> None:
    assert not report.valid
    for f in faults:
        hits = report.find(ViolationCode(f.kind.value), job=f.scope["job"], step=f.scope["step"])
        assert hits, (f, report.violations)


def semi_active(instance: Instance) -> Schedule:
    return decode(instance, [j for s in range(max(map(len, instance.jobs))) for j, ops in
                             enumerate(instance.jobs) if s < len(ops)])


def test_exports() -> None:
    from alas_argo.jssp import faults

    assert sorted(faults.__all__) == ["FaultInjection", "FaultKind", "InjectedFault", "applicable_kinds",
                                      "inject_faults"]


def test_every_fault_kind_is_a_violation_code() -> None:
    assert {k.value for k in FaultKind} <= {c.value for c in ViolationCode}
    assert set(STATIC) | set(DISRUPTED) == set(FaultKind)


@pytest.mark.parametrize("kind", STATIC)
def test_each_static_kind_on_ft06(ft06: Instance, kind: FaultKind) -> None:
    schedule = semi_active(ft06)
    assert validate(ft06, schedule).valid
    out = inject_faults(ft06, schedule, kinds=[kind], seed=3)
    assert [f.kind for f in out.faults] == [kind]
    assert_detected(validate(ft06, out.schedule), out.faults)


def test_same_seed_same_faults_and_different_seeds_differ(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    runs = [inject_faults(ft06, schedule, count=6, seed=s).to_json() for s in (7, 7, 8)]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_default_mix_uses_every_applicable_kind(ft06: Instance) -> None:
    out = inject_faults(ft06, semi_active(ft06), count=len(STATIC), seed=1)
    assert sorted(f.kind for f in out.faults) == sorted(STATIC)
    assert_detected(validate(ft06, out.schedule), out.faults)


def test_kinds_are_used_in_turn(ft06: Instance) -> None:
    kinds = [FaultKind.MISSING_OPERATION, FaultKind.PRECEDENCE]
    out = inject_faults(ft06, semi_active(ft06), kinds=kinds, count=5)
    assert [f.kind for f in out.faults] == [*kinds, *kinds, kinds[0]]


def test_input_schedule_is_left_untouched_and_makespan_recomputed(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    before = schedule.to_json()
    out = inject_faults(ft06, schedule, kinds=[FaultKind.WRONG_DURATION], count=3)
    assert schedule.to_json() == before
    assert out.schedule.makespan == max(o.end for o in out.schedule.operations)
    assert ViolationCode.MAKESPAN_MISMATCH not in validate(ft06, out.schedule).codes()


def test_disruption_kinds_need_their_context(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    for kind in DISRUPTED:
        with pytest.raises(InputError, match=kind.value):
            inject_faults(ft06, schedule, kinds=[kind])
    with pytest.raises(InputError, match="count"):
        inject_faults(ft06, schedule, count=-1)
    with pytest.raises(InputError, match="no fault kinds"):
        inject_faults(ft06, schedule, kinds=[])


def test_too_many_faults_for_a_tiny_schedule_is_an_error() -> None:
    inst = Instance(name="one", jobs=[[(0, 2)]])
    with pytest.raises(InputError, match="cannot inject"):
        inject_faults(inst, semi_active(inst), kinds=[FaultKind.MISSING_OPERATION], count=2)


def test_disruption_kinds_on_a_hand_made_case(ft06: Instance) -> None:
    baseline = semi_active(ft06)
    t = baseline.makespan // 3
    busy = next(o.machine for o in baseline.operations if o.start < t < o.end)
    d = Disruption(time=t, events=[MachineBreakdown(machine=busy, start=t, duration=5),
                                   MachineBreakdown(machine=(busy + 1) % 6, start=t + 2, duration=4)])
    repaired = repair_decode(ft06, baseline, d)
    assert validate(ft06, repaired, disruption=d, baseline=baseline).valid
    for kind in DISRUPTED:
        out = inject_faults(ft06, repaired, kinds=[kind], seed=5, disruption=d, baseline=baseline)
        assert_detected(validate(ft06, out.schedule, disruption=d, baseline=baseline), out.faults)


@pytest.mark.timeout(75)  # 14 s measured in the whole suite on a loaded 2-core machine
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(solved_instances(min_jobs=2, min_machines=2, full=True), st.lists(st.sampled_from(STATIC), min_size=1,
       max_size=4), st.integers(0, 2**16))
def test_injected_static_faults_are_all_flagged(case: tuple[Instance, Schedule], kinds: list[FaultKind],
                                                seed: int) -> None:
    instance, schedule = case
    try:
        out = inject_faults(instance, schedule, kinds=kinds, count=len(kinds), seed=seed)
    except InputError:
        assume(False)
    assert len(out.faults) == len(kinds)
    assert_detected(validate(instance, out.schedule), out.faults)


@pytest.mark.timeout(75)  # 19 s measured in the whole suite on a loaded 2-core machine
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(disrupted_cases(), st.data())
def test_injected_faults_under_disruption_are_all_flagged(
        case: tuple[Instance, Schedule, Disruption, Schedule], data: st.DataObject) -> None:
    instance, baseline, disruption, schedule = case
    possible = applicable_kinds(disruption, baseline)
    kinds = data.draw(st.lists(st.sampled_from(possible), min_size=1, max_size=4))
    try:
        out: FaultInjection = inject_faults(instance, schedule, kinds=kinds, count=len(kinds),
                                            seed=data.draw(st.integers(0, 2**16)), disruption=disruption,
                                            baseline=baseline)
    except InputError:
        assume(False)
    for f in out.faults:
        event(f"fault {f.kind.value}")
    assert_detected(validate(instance, out.schedule, disruption=disruption, baseline=baseline), out.faults)


@pytest.mark.timeout(75)  # 14 s measured in the whole suite on a loaded 2-core machine
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(disrupted_cases(), st.data())
def test_disruption_faults_are_all_flagged(case: tuple[Instance, Schedule, Disruption, Schedule],
                                           data: st.DataObject) -> None:
    instance, baseline, disruption, schedule = case
    possible = [k for k in applicable_kinds(disruption, baseline) if k in DISRUPTED]
    assume(possible)
    kind = data.draw(st.sampled_from(possible))
    try:
        out = inject_faults(instance, schedule, kinds=[kind], seed=data.draw(st.integers(0, 2**16)),
                            disruption=disruption, baseline=baseline)
    except InputError:
        assume(False)
    event(f"fault {kind.value}")
    assert_detected(validate(instance, out.schedule, disruption=disruption, baseline=baseline), out.faults)
