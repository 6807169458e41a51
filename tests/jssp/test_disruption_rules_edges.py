"""The disruption rules at their edges, found untested by mutation testing: a negative reveal time from outside
named by its place, a breakdown that ends exactly at the reveal refused and one a unit later accepted, zero
durations accepted, the first job past the last refused as bad input (not an IndexError), reveal times 0 and
the makespan accepted, and the file and list position named in every place."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.disruption_rules import check_disruption, check_events
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

# tiny: 3 jobs x 3 machines; job 0 = (m0,3)(m1,2)(m2,2), job 1 = (m0,2)(m2,1)(m1,4), job 2 = (m1,4)(m2,3)(m0,1).


@pytest.fixture
def plan(tiny: Instance) -> Schedule:
    return dispatch(tiny, "mwkr")


def _refusal(tiny: Instance, plan: Schedule | None, d: Disruption, source: str | None = None,
             index: int | None = None) -> tuple[str, object]:
    """What check_disruption (with a plan) or check_events (without) says, and where."""
    with pytest.raises(InputError) as info:
        if plan is None:
            check_events(tiny, d, source=source, index=index)
        else:
            check_disruption(tiny, plan, d, source=source, index=index)
    return info.value.message, info.value.where


BREAKDOWN = MachineBreakdown(machine=1, start=4, duration=2)


@pytest.mark.parametrize(("source", "index", "where"), [
    (None, None, "disruption.time"),
    ("d.json", None, "d.json at time"),
    ("d.json", 2, "d.json at [2].time"),
])
def test_a_negative_reveal_time_from_outside_is_named_by_its_place(tiny: Instance, source: str | None,
                                                                   index: int | None, where: str) -> None:
    # check_disruption refuses it as outside the plan first; check_events (a file, a request) has no plan.
    d = Disruption(time=-3, events=[BREAKDOWN])
    assert _refusal(tiny, None, d, source, index) == ("negative reveal time -3", where)


def test_a_plan_names_the_file_and_the_position_of_every_place(tiny: Instance, plan: Schedule) -> None:
    late = Disruption(time=plan.makespan + 1, events=[BREAKDOWN])
    assert _refusal(tiny, plan, late, "d.json", 1) == (
        f"reveal time {plan.makespan + 1} is outside the schedule [0, {plan.makespan}]", "d.json at [1].time")
    ghost = Disruption(time=1, events=[BREAKDOWN, MachineBreakdown(machine=3, start=1, duration=2)])
    assert _refusal(tiny, plan, ghost, "d.json", 1) == (
        "machine 3 does not exist (instance tiny has machines 0..2)", "d.json at [1].events[1]")
    assert _refusal(tiny, None, Disruption(time=1, events=[]), "d.json", 1) == (
        "a disruption needs at least one event (machine_breakdown or duration_change)", "d.json at [1].events")


def test_a_breakdown_must_end_after_the_reveal(tiny: Instance, plan: Schedule) -> None:
    over = Disruption(time=6, events=[MachineBreakdown(machine=0, start=4, duration=2)])
    message = ("machine 0's downtime [4, 6) is over by the reveal time 6: a breakdown must end after the reveal "
               "time")
    assert _refusal(tiny, plan, over) == (message, "disruption.events[0]")
    assert _refusal(tiny, None, over) == (message, "disruption.events[0]")
    check_disruption(tiny, plan, Disruption(time=6, events=[MachineBreakdown(machine=0, start=4, duration=3)]))


def test_zero_durations_are_accepted(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=2, events=[MachineBreakdown(machine=2, start=5, duration=0),
                                   DurationChange(job=2, step=2, duration=0)])
    check_disruption(tiny, plan, d)
    check_events(tiny, d)


@pytest.mark.parametrize(("job", "step"), [(3, 0), (-1, 0), (2, 3), (2, -1)])
def test_an_operation_just_outside_the_instance_is_bad_input(tiny: Instance, plan: Schedule, job: int,
                                                             step: int) -> None:
    d = Disruption(time=2, events=[DurationChange(job=job, step=step, duration=3)])
    expected = (f"operation (job {job}, step {step}) does not exist in tiny", "disruption.events[0]")
    assert _refusal(tiny, plan, d) == expected
    assert _refusal(tiny, None, d) == expected


def test_the_reveal_may_be_at_the_start_or_at_the_end_of_the_plan(tiny: Instance, plan: Schedule) -> None:
    for time in (0, plan.makespan):
        check_disruption(tiny, plan, Disruption(time=time, events=[
            MachineBreakdown(machine=0, start=time, duration=1), DurationChange(job=0, step=0, duration=5)]))
