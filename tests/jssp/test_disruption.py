"""Disruption generators and the input check."""

from __future__ import annotations

from itertools import pairwise

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
    merged_downtimes,
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


def _work_left(plan: Schedule, machines: int, time: int) -> dict[int, int]:
    return {m: sum(max(0, o.end - max(o.start, time)) for o in plan.operations if o.machine == m)
            for m in range(machines)}


@pytest.mark.parametrize("at", [0.0, 0.2, 0.4, 0.6, 0.8, 0.95])
def test_the_default_breakdown_stops_the_busiest_machine_lowest_first(ft06: Instance, plan: Schedule,
                                                                      at: float) -> None:
    # Several reveal times, so the busiest machine is not always the same one (nor always the last).
    d = generate_disruption(ft06, plan, "breakdown", at=at, length=0.1)
    left = _work_left(plan, ft06.num_machines, d.time)
    busiest = min(m for m in left if left[m] == max(left.values()))
    assert [b.machine for b in d.breakdowns] == [busiest]
    two = generate_disruption(ft06, plan, "breakdown", at=at, length=0.1, machines=2)
    ranked = sorted(left, key=lambda m: (-left[m], m))
    assert [b.machine for b in two.breakdowns] == sorted(ranked[:2])
    assert {(b.start, b.duration) for b in two.breakdowns} == {(d.time, round(0.1 * plan.makespan))}


def test_the_busiest_machine_differs_between_reveal_times(ft06: Instance, plan: Schedule) -> None:
    # Guards the test above: it would not notice "the last machine" or "the first machine" otherwise.
    chosen = {generate_disruption(ft06, plan, "breakdown", at=at).breakdowns[0].machine
              for at in (0.0, 0.2, 0.4, 0.6, 0.8, 0.95)}
    assert len(chosen) > 1 and chosen != {0} and chosen != {ft06.num_machines - 1}


@pytest.mark.parametrize("machines", [1, 2])
def test_a_given_machine_breaks_down_first_and_machine_0_is_a_machine(ft06: Instance, plan: Schedule,
                                                                    machines: int) -> None:
    for machine in (0, 3):
        d = generate_disruption(ft06, plan, "breakdown", machine=machine, machines=machines, at=0.5)
        assert machine in {b.machine for b in d.breakdowns} and len(d.breakdowns) == machines


def test_every_machine_may_break_down_at_once(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "breakdown", machines=ft06.num_machines, at=0.5)
    assert sorted(b.machine for b in d.breakdowns) == list(range(ft06.num_machines))


def test_a_shock_grows_at_least_one_operation_by_at_least_one_unit(ft06: Instance, plan: Schedule) -> None:
    # increase 0 is allowed ("must not be negative") and still lengthens by one unit; share 0 still hits one.
    d = generate_disruption(ft06, plan, "shock", increase=0.0, share=0.0, at=0.3)
    assert len(d.duration_changes) == 1
    [((j, s), new)] = d.duration_changes.items()
    assert new == ft06.duration(j, s) + 1


def test_a_shock_range_draws_each_growth_within_it(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "shock", increase=0.5, increase_max=3.0, share=1.0, at=0.2)
    growth = [new / ft06.duration(j, s) for (j, s), new in d.duration_changes.items()]
    assert all(1.5 <= g <= 4.0 + 1 / ft06.duration(j, s) for g, (j, s) in zip(growth, d.duration_changes,
                                                                          strict=True))
    # Without the range every operation would grow by 1.5 (rounded up): some grow by more than twice.
    assert any(g > 2.5 for g in growth)
    same = generate_disruption(ft06, plan, "shock", increase=0.5, increase_max=0.5, share=1.0, at=0.2)
    assert same.duration_changes  # increase_max equal to increase is a range of one value, not an error


def test_the_latest_reveal_time_leaves_the_last_unit_of_the_plan(ft06: Instance, plan: Schedule) -> None:
    assert generate_disruption(ft06, plan, "shock", at=1.0).time == plan.makespan - 1


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kind": "flood"}, "unknown disruption kind 'flood'; known: breakdown, shock, mixed"),
    ({"kind": "breakdown", "at": 1.5}, r"at must be a fraction in \[0, 1\], got 1.5"),
    ({"kind": "breakdown", "length": -0.1}, r"length must be a fraction in \[0, 1\], got -0.1"),
    ({"kind": "shock", "share": 2}, r"share must be a fraction in \[0, 1\], got 2"),
    ({"kind": "shock", "increase": -1}, "increase must not be negative, got -1"),
    ({"kind": "breakdown", "machine": 6}, r"machine 6 does not exist \(machines 0..5\)"),
    # A grown duration must stay a time the contract holds (it overflowed a float, or failed the model's check).
    ({"kind": "shock", "increase": 1e308}, r"increase 1e\+308 would make an operation of 10 take longer than "
                                           r"1099511627776 time units"),
    ({"kind": "mixed", "increase_max": 2e11}, r"increase_max 2e\+11 would make an operation of 10 take longer"),
])
def test_a_refused_argument_is_named_in_the_message(ft06: Instance, plan: Schedule, kwargs: dict,
                                                   message: str) -> None:
    kwargs = dict(kwargs)
    kind = kwargs.pop("kind")
    with pytest.raises(InputError, match=message):
        generate_disruption(ft06, plan, kind, **kwargs)


def test_a_sequence_is_reproducible_strictly_increasing_and_each_breakdown_starts_at_its_reveal(
        ft06: Instance, plan: Schedule) -> None:
    seq = generate_sequence(ft06, plan, "mixed", count=4, seed=7)
    assert seq == generate_sequence(ft06, plan, "mixed", count=4, seed=7)
    times = [d.time for d in seq]
    assert all(a < b for a, b in pairwise(times))
    for prev, d in zip([None, *seq], seq, strict=False):
        carried = [] if prev is None else [e for e in prev.events if e in d.events]
        fresh = [e for e in d.events if e not in carried]
        # Each disruption brings its own events: a breakdown revealed at its time, on top of what is carried.
        assert any(isinstance(e, MachineBreakdown) for e in fresh)
        assert all(e.start == d.time for e in fresh if isinstance(e, MachineBreakdown))


def test_a_sequence_longer_than_the_plan_stops_at_its_end(tiny: Instance) -> None:
    plan = dispatch(tiny, "mwkr")
    seq = generate_sequence(tiny, plan, "breakdown", count=3 * plan.makespan, seed=1)
    times = [d.time for d in seq]
    assert 1 <= len(seq) < 3 * plan.makespan
    assert all(a < b for a, b in pairwise(times)) and times[-1] <= plan.makespan
    # Reveal times pushed past the drawn ones (each one unit after the last): the new downtime moves with them.
    for prev, d in pairwise(seq):
        fresh = [e for e in d.events if isinstance(e, MachineBreakdown) and e not in prev.events]
        assert fresh and all(e.start == d.time for e in fresh)


def test_a_disruption_revealed_at_the_same_time_carries_forward(ft06: Instance) -> None:
    first = Disruption(time=5, events=[MachineBreakdown(machine=0, start=5, duration=3)])
    second = Disruption(time=5, events=[DurationChange(job=1, step=2, duration=9)])
    assert carry_forward(first, second).events == [*first.events, *second.events]
    with pytest.raises(InputError) as err:
        carry_forward(second, Disruption(time=4))
    assert err.value.where == "time"


def test_a_breakdown_of_no_length_still_stops_its_machine_one_unit(ft06: Instance, plan: Schedule) -> None:
    for machines in (1, 2):
        d = generate_disruption(ft06, plan, "breakdown", length=0.0, machines=machines, at=0.5)
        assert [b.duration for b in d.breakdowns] == [1] * machines


def test_merged_downtimes_are_each_machine_down_once_sorted() -> None:
    windows = [(0, 5, 8), (0, 1, 3), (1, 0, 2), (0, 3, 4), (0, 7, 10), (1, 2, 2), (1, 4, 6)]
    # (0, 1, 3) and (0, 3, 4) touch, (0, 5, 8) and (0, 7, 10) overlap; (1, 2, 2) is empty; machine 1's two
    # windows are apart.
    assert merged_downtimes(windows) == [(0, 1, 4), (0, 5, 10), (1, 0, 2), (1, 4, 6)]
    assert merged_downtimes([(2, 0, 9), (2, 1, 3)]) == [(2, 0, 9)]  # one inside another
    assert merged_downtimes([]) == []
