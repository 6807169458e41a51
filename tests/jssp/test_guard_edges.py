"""Domain guarantees at their edges, found untested by mutation testing: the validator names the operation an
overlap runs into and survives an empty schedule; a disruption on the first or last machine is accepted and
one beyond them refused (naming where); a sequence of one disruption is a sequence; the downtime interrupts
exactly the started operations whose half-open interval meets it, one-unit operations included."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown, generate_sequence
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ViolationCode
from tests.jssp.strategies import plan_at


def test_an_overlap_names_the_operation_it_runs_into(tiny: Instance) -> None:
    # tiny: job 0 = (m0,3)(m1,2)(m2,2); job 1 = (m0,2)(m2,1)(m1,4); job 2 = (m1,4)(m2,3)(m0,1).
    # Machine 2 runs (0,2) over [5, 7) and (1,1) over [6, 7): the only overlap, on the last machine.
    starts = {(0, 0): 0, (0, 1): 3, (0, 2): 5, (1, 0): 3, (1, 1): 6, (1, 2): 8, (2, 0): 12, (2, 1): 16,
              (2, 2): 19}
    report = validate(tiny, plan_at(tiny, starts))
    overlaps = [v for v in report.violations if v.code is ViolationCode.MACHINE_OVERLAP]
    assert [v.scope for v in overlaps] == [{"job": 1, "step": 1, "machine": 2, "other_job": 0, "other_step": 2}]
    assert "(job 0, step 2) runs until 7" in overlaps[0].message


def test_an_empty_schedule_is_every_operation_missing_and_nothing_else(tiny: Instance) -> None:
    report = validate(tiny, Schedule(instance=tiny.name, makespan=0, operations=[]))
    assert not report.valid
    assert {v.code for v in report.violations} == {ViolationCode.MISSING_OPERATION}
    assert len(report.violations) == sum(len(j) for j in tiny.jobs)


@pytest.mark.parametrize(("machine", "ok"), [(0, True), (2, True), (3, False), (-1, False)])
def test_a_breakdown_on_the_first_or_last_machine_is_accepted_beyond_them_refused(tiny: Instance, machine: int,
                                                                                 ok: bool) -> None:
    plan = dispatch(tiny, "mwkr")
    d = Disruption(time=1, events=[DurationChange(job=0, step=0, duration=3),
                                   MachineBreakdown(machine=machine, start=2, duration=3)])
    if ok:
        check_disruption(tiny, plan, d)
    else:
        with pytest.raises(InputError, match=rf"machine {machine} does not exist") as err:
            check_disruption(tiny, plan, d)
        assert err.value.where == "disruption.events[1]"


@pytest.mark.parametrize(("event", "message"), [
    (MachineBreakdown(machine=0, start=-1, duration=3), "negative breakdown start -1"),
    (MachineBreakdown(machine=0, start=1, duration=-3), "negative duration -3"),
    (DurationChange(job=0, step=3, duration=2), r"operation \(job 0, step 3\) does not exist"),
    (DurationChange(job=0, step=0, duration=-2), "negative duration -2")])
def test_a_bad_event_is_named_by_its_place(tiny: Instance, event: MachineBreakdown | DurationChange,
                                           message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        check_disruption(tiny, dispatch(tiny, "mwkr"), Disruption(time=1, events=[event]))
    assert err.value.where == "disruption.events[0]"


@pytest.mark.parametrize("time", [-1, 10**6])
def test_a_reveal_time_outside_the_plan_is_named(tiny: Instance, time: int) -> None:
    with pytest.raises(InputError, match=f"reveal time {time} is outside") as err:
        check_disruption(tiny, dispatch(tiny, "mwkr"), Disruption(time=time))
    assert err.value.where == "disruption.time"


def test_a_sequence_of_one_disruption_and_of_none(tiny: Instance) -> None:
    plan = dispatch(tiny, "mwkr")
    assert len(generate_sequence(tiny, plan, "breakdown", count=1, seed=2)) == 1
    with pytest.raises(InputError, match="count must be at least 1, got 0"):
        generate_sequence(tiny, plan, "breakdown", count=0)


def test_an_operation_that_ends_as_the_downtime_begins_is_not_interrupted(tiny: Instance) -> None:
    plan = dispatch(tiny, "mwkr")  # machine 1 runs (job 2, step 0) over [0, 4)
    assert plan.by_key()[(2, 0)].end == 4
    touching = Disruption(time=3, events=[MachineBreakdown(machine=1, start=4, duration=2)])
    assert (2, 0) not in ExecutionState.at(tiny, plan, touching).interrupted
    overlapping = Disruption(time=3, events=[MachineBreakdown(machine=1, start=3, duration=2)])
    assert (2, 0) in ExecutionState.at(tiny, plan, overlapping).interrupted
    for d in (touching, overlapping):
        assert repair(tiny, plan, d, "aor").valid


def test_a_one_unit_operation_hit_by_the_downtime_is_interrupted(tiny: Instance) -> None:
    plan = dispatch(tiny, "mwkr")  # machine 2 runs (job 1, step 1), one unit long, over [5, 6)
    assert (plan.by_key()[(1, 1)].start, plan.by_key()[(1, 1)].end) == (5, 6)
    d = Disruption(time=6, events=[MachineBreakdown(machine=2, start=5, duration=2)])
    assert (1, 1) in ExecutionState.at(tiny, plan, d).interrupted
    r = repair(tiny, plan, d, "aor")
    assert r.valid and r.schedule.by_key()[(1, 1)].start >= 7  # restarted after the downtime
