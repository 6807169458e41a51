"""Execution state at a reveal time."""

from __future__ import annotations

import re

import pytest

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState, OpStatus
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_TIME
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from tests.jssp.strategies import plan_at


@pytest.fixture
def plan(tiny: Instance) -> Schedule:
    # tiny: J0 = (0,3)(1,2)(2,2); J1 = (0,2)(2,1)(1,4); J2 = (1,4)(2,3)(0,1); a feasible makespan-12 plan.
    p = plan_at(tiny, {(0, 0): 0, (0, 1): 4, (0, 2): 8, (1, 0): 3, (1, 1): 7, (1, 2): 8,
                     (2, 0): 0, (2, 1): 4, (2, 2): 7})
    assert validate(tiny, p).valid
    return p


def test_statuses_at_a_time(tiny: Instance, plan: Schedule) -> None:
    st = ExecutionState.at(tiny, plan, time=4)
    assert st.done == {(0, 0), (2, 0)}
    assert st.running == {(1, 0)}
    assert st.frozen == {(0, 0), (2, 0), (1, 0)}
    assert st.pending == {(0, 1), (0, 2), (1, 1), (1, 2), (2, 1), (2, 2)}
    assert not st.interrupted
    assert st.summary()["frozen"] == 3


def test_breakdown_interrupts_running_operation(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=4, events=[MachineBreakdown(machine=0, start=4, duration=3)])
    st = ExecutionState.at(tiny, plan, d)
    assert st.status[(1, 0)] is OpStatus.INTERRUPTED
    assert st.release[(1, 0)] == 7  # restarts from scratch after the downtime
    assert (1, 0) in st.free and (1, 0) not in st.frozen
    # The restart is a minimum start for any solve that leaves the operation free, and none once pinned.
    assert st.min_starts(st.frozen)[(1, 0)] == 7
    assert (1, 0) not in st.min_starts({(1, 0)})
    assert all(r > d.time for r in st.min_starts(set()).values())
    assert st.earliest_fit(0, 5, 2) == 7
    assert st.earliest_fit(0, 1, 2) == 1
    assert st.earliest_fit(0, 5, 0) == 5  # zero-length operations overlap nothing


def test_duration_change_extends_running_in_place(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=4, events=[DurationChange(job=1, step=0, duration=5), DurationChange(job=0, step=1,
                                                                                             duration=9)])
    st = ExecutionState.at(tiny, plan, d)
    assert st.status[(1, 0)] is OpStatus.RUNNING
    assert st.durations[(1, 0)] == 5 and st.durations[(0, 1)] == 9
    assert st.frozen_starts()[(1, 0)] == 3


def test_wip_is_started_plus_next_per_machine(tiny: Instance, plan: Schedule) -> None:
    st = ExecutionState.at(tiny, plan, time=4)
    # next pending op per machine: m0 -> (2,2) at 7, m1 -> (0,1) at 4, m2 -> (2,1) at 4
    assert st.wip() == {(0, 0), (2, 0), (1, 0), (2, 2), (0, 1), (2, 1)}


def test_breakdown_before_reveal_with_started_successor_is_infeasible(tiny: Instance, plan: Schedule) -> None:
    # (2,0) ran [0,4) on machine 1; a breakdown [2,3) revealed at 5 interrupts it, but (2,1) started at 4.
    d = Disruption(time=5, events=[MachineBreakdown(machine=1, start=2, duration=1)])
    with pytest.raises(InfeasibleError, match="job successor"):
        ExecutionState.at(tiny, plan, d)


@pytest.mark.parametrize("events", [
    [DurationChange(job=0, step=1, duration=MAX_TIME - 2)],
    [MachineBreakdown(machine=2, start=5, duration=MAX_TIME - 3), DurationChange(job=2, step=2, duration=9)],
])
def test_a_disruption_whose_repair_could_end_past_the_largest_time_is_refused_naming_it(
        tiny: Instance, plan: Schedule, events: list) -> None:
    # Each value is a time the contract holds; together they push the work left past MAX_TIME, so a repaired
    # plan could not be written or validated ("schedule values must lie within", with no word of why).
    with pytest.raises(InputError, match=r"revealed at 5, it leaves \d+ time units of work from \d+ on: .* "
                                         rf"past the largest time a plan holds \({MAX_TIME}\)") as info:
        ExecutionState.at(tiny, plan, Disruption(time=5, events=events))
    assert info.value.where == "disruption"


def test_a_disruption_up_to_the_largest_time_is_taken(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=5, events=[DurationChange(job=0, step=2, duration=10**9)])
    assert ExecutionState.at(tiny, plan, d).durations[(0, 2)] == 10**9


def test_without_a_disruption_or_time_nothing_has_started(tiny: Instance, plan: Schedule) -> None:
    st = ExecutionState.at(tiny, plan)
    assert st.time == 0 and st.pending == set(plan.by_key()) and not st.frozen


def test_a_zero_length_downtime_interrupts_nothing(tiny: Instance, plan: Schedule) -> None:
    # (1,0) runs [3,5) on machine 0; a downtime of no length at 4 is no downtime.
    d = Disruption(time=4, events=[MachineBreakdown(machine=0, start=4, duration=0)])
    st = ExecutionState.at(tiny, plan, d)
    assert st.running == {(1, 0)} and not st.interrupted and st.downtimes == []


def test_a_started_operation_shrunk_to_no_length_is_not_interrupted(tiny: Instance, plan: Schedule) -> None:
    # (1,0) started at 3 on machine 0 and now takes no time: the downtime [2, 5) it sits in stops only (0,0),
    # which ran [0, 3) there.
    d = Disruption(time=4, events=[DurationChange(job=1, step=0, duration=0),
                                   MachineBreakdown(machine=0, start=2, duration=3)])
    st = ExecutionState.at(tiny, plan, d)
    assert (1, 0) in st.done and st.interrupted == {(0, 0)}


def test_a_one_unit_operation_is_moved_out_of_a_downtime(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=4, events=[MachineBreakdown(machine=2, start=5, duration=3),
                                   MachineBreakdown(machine=2, start=8, duration=2)])
    st = ExecutionState.at(tiny, plan, d)
    assert st.earliest_fit(2, 6, 1) == 10  # out of [5, 8), then out of [8, 10)
    assert st.earliest_fit(2, 4, 1) == 4 and st.earliest_fit(2, 6, 0) == 6


def test_an_interrupted_operation_is_work_in_progress(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=4, events=[MachineBreakdown(machine=0, start=4, duration=2)])
    st = ExecutionState.at(tiny, plan, d)
    assert (1, 0) in st.interrupted and (1, 0) in st.wip()


def test_an_impossible_restart_names_the_interrupted_operation(tiny: Instance, plan: Schedule) -> None:
    d = Disruption(time=5, events=[MachineBreakdown(machine=1, start=2, duration=1)])
    with pytest.raises(InfeasibleError, match="job successor has already started") as err:
        ExecutionState.at(tiny, plan, d)
    assert err.value.where == {"job": 2, "step": 0}


@pytest.mark.parametrize(("time", "key", "duration", "message", "successor"), [
    # J2's first operation ran [0, 4) and both J2's second and J0's second (next on machine 1) started at 4.
    (5, (2, 0), 5, "end at 5, after its job successor (job 2, step 1) had started at 4", (2, 1)),
    # J0's first operation ran [0, 3) on machine 0, J1's first started there at 3; J0's second is still pending.
    (4, (0, 0), 4, "end at 4, after the next operation on its machine (job 1, step 0) had started at 3", (1, 0)),
    # J0's second operation ran [4, 6) with slack: J0's third and J1's third (next on machine 1) started at 8.
    (9, (0, 1), 5, "end at 9, after its job successor (job 0, step 2) had started at 8", (0, 2)),
])
def test_a_started_operation_cannot_grow_past_what_started_after_it(
        tiny: Instance, plan: Schedule, time: int, key: tuple[int, int], duration: int, message: str,
        successor: tuple[int, int]) -> None:
    """Extended in place, the operation would have been running when its successor started: no plan can
    honour that history (every repair method used to return a plan the validator then rejected)."""
    d = Disruption(time=time, events=[DurationChange(job=key[0], step=key[1], duration=duration)])
    with pytest.raises(InfeasibleError, match=re.escape(message)) as err:
        ExecutionState.at(tiny, plan, d)
    assert err.value.where == {"job": key[0], "step": key[1]}
    # Growing it only as far as the successor's start (J0's second: from 2 to 4, ending as both start at 8), or
    # shrinking it, is a history a plan can honour.
    start = plan.starts()[key]
    for fits in (plan.starts()[successor] - start, 1):
        state = ExecutionState.at(tiny, plan, Disruption(time=time, events=[
            DurationChange(job=key[0], step=key[1], duration=fits)]))
        assert state.durations[key] == fits


def test_derived_starts_are_computed_once_and_handed_out_as_copies(tiny: Instance, plan: Schedule) -> None:
    st = ExecutionState.at(tiny, plan, Disruption(time=4, events=[]))
    planned, frozen = st.planned_starts(), st.frozen_starts()
    assert planned == plan.starts() and list(planned) == list(plan.starts())
    assert frozen == {k: plan.starts()[k] for k in st.frozen}
    planned[(0, 0)], frozen[(0, 0)] = 99, 99  # a caller editing its copy changes nothing in the state
    wip = st.wip()
    assert wip == {(0, 0), (1, 0), (2, 0), (2, 2), (0, 1), (2, 1)}  # started, then next pending per machine
    wip.add((1, 2))
    assert st.planned_starts()[(0, 0)] == 0 and st.frozen_starts()[(0, 0)] == 0
    assert (1, 2) not in st.wip()
