"""Disruption generators and the input check."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import (
    Disruption,
    DisruptionKind,
    DurationChange,
    MachineBreakdown,
    carry_forward,
    generate_disruption,
    generate_sequence,
)
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


@pytest.fixture
def plan(ft06: Instance) -> Schedule:
    return dispatch(ft06, "mwkr")


def test_breakdown_defaults_to_machine_with_most_work_left(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "breakdown", at=0.4, length=0.1)
    assert d.time == round(0.4 * plan.makespan)
    [b] = d.breakdowns
    left = {m: sum(max(0, o.end - max(o.start, d.time)) for o in plan.operations if o.machine == m)
            for m in range(ft06.num_machines)}
    assert left[b.machine] == max(left.values())
    assert (b.start, b.duration) == (d.time, round(0.1 * plan.makespan))


def test_breakdown_of_chosen_and_random_machine(ft06: Instance, plan: Schedule) -> None:
    assert generate_disruption(ft06, plan, "breakdown", machine=4).breakdowns[0].machine == 4
    drawn = {generate_disruption(ft06, plan, "breakdown", machine="random", seed=s).breakdowns[0].machine
             for s in range(20)}
    assert len(drawn) > 1


def test_generators_are_reproducible_and_seeded(ft06: Instance, plan: Schedule) -> None:
    for kind in DisruptionKind:
        assert generate_disruption(ft06, plan, kind, seed=3) == generate_disruption(ft06, plan, kind, seed=3)
    assert len({generate_disruption(ft06, plan, "shock", seed=s).time for s in range(5)}) > 1


def test_shock_hits_only_unstarted_operations(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "shock", seed=1, increase=0.5, share=0.25)
    starts = plan.starts()
    pending = [k for k, s in starts.items() if s >= d.time]
    assert not d.breakdowns
    assert len(d.duration_changes) == round(0.25 * len(pending))
    for (j, s), new in d.duration_changes.items():
        assert starts[(j, s)] >= d.time
        assert new >= max(ft06.duration(j, s) + 1, ft06.duration(j, s) * 1.5)


def test_mixed_has_both_kinds(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, DisruptionKind.MIXED, seed=2)
    assert d.breakdowns and d.duration_changes
    assert Disruption.model_validate(d.to_json()) == d


@pytest.mark.parametrize("kwargs", [{"kind": "flood"}, {"kind": "breakdown", "at": 1.5},
                                    {"kind": "breakdown", "machine": 6}, {"kind": "shock", "increase": -1}])
def test_generator_rejects_bad_arguments(ft06: Instance, plan: Schedule, kwargs: dict) -> None:
    # A copy: the parameter's dict is shared by every run of the test in one process (mutmut runs it twice).
    kwargs = dict(kwargs)
    kind = kwargs.pop("kind")
    with pytest.raises(InputError):
        generate_disruption(ft06, plan, kind, **kwargs)


@pytest.mark.parametrize(("disruption", "needle"), [
    (Disruption(time=5, events=[MachineBreakdown(machine=6, start=5, duration=3)]), "machine 6 does not exist"),
    (Disruption(time=5, events=[DurationChange(job=0, step=6, duration=3)]), "(job 0, step 6) does not exist"),
    (Disruption(time=5, events=[DurationChange(job=9, step=0, duration=3)]), "does not exist"),
    (Disruption(time=-1), "outside the schedule"),
    (Disruption(time=10_000), "outside the schedule"),
    (Disruption(time=5, events=[MachineBreakdown(machine=1, start=5, duration=-2)]), "negative"),
    (Disruption(time=5, events=[DurationChange(job=0, step=0, duration=-2)]), "negative duration"),
])
def test_check_disruption_rejects(ft06: Instance, plan: Schedule, disruption: Disruption, needle: str) -> None:
    with pytest.raises(InputError) as info:
        check_disruption(ft06, plan, disruption)
    assert needle in str(info.value)


def test_check_disruption_accepts_generated(ft06: Instance, plan: Schedule) -> None:
    for kind in DisruptionKind:
        check_disruption(ft06, plan, generate_disruption(ft06, plan, kind, seed=4))


def test_sequence_carries_forward_and_repairs_validly(ft06: Instance, plan: Schedule) -> None:
    committed: list[tuple[Schedule, Disruption, Schedule]] = []

    def commit(current: Schedule, d: Disruption) -> Schedule:
        repaired = repair(ft06, current, d, "aor").schedule
        committed.append((current, d, repaired))
        return repaired

    seq = generate_sequence(ft06, plan, "mixed", count=3, seed=5, commit=commit)
    assert len(seq) >= 2
    times = [d.time for d in seq]
    assert times == sorted(set(times))
    for (current, d, repaired), prev in zip(committed[1:], committed, strict=False):
        # Every earlier duration change is carried into the next disruption.
        assert set(prev[1].duration_changes) <= set(d.duration_changes)
        assert validate(ft06, repaired, disruption=d, baseline=current).valid
    for current, d, repaired in committed:
        assert validate(ft06, repaired, disruption=d, baseline=current).valid


def test_carry_forward_keeps_unfinished_downtime_and_every_duration_change() -> None:
    first = Disruption.model_validate({"time": 2, "events": [
        {"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3},
        {"kind": "machine_breakdown", "machine": 2, "start": 2, "duration": 4},  # ends exactly at 6: over
        {"kind": "machine_breakdown", "machine": 1, "start": 2, "duration": 10},
        {"kind": "duration_change", "job": 0, "step": 1, "duration": 4}]})
    second = Disruption.model_validate({"time": 6, "events": [
        {"kind": "duration_change", "job": 1, "step": 2, "duration": 9}]})
    merged = carry_forward(first, second)
    assert merged.time == 6
    assert [e.model_dump() for e in merged.events] == [
        {"kind": "machine_breakdown", "machine": 1, "start": 2, "duration": 10},  # still down at 6
        {"kind": "duration_change", "job": 0, "step": 1, "duration": 4},
        {"kind": "duration_change", "job": 1, "step": 2, "duration": 9}]
    assert carry_forward(None, second) == second
    with pytest.raises(InputError, match="earlier than the previous"):
        carry_forward(second, first)
