"""The CP-SAT model builder at its edges, found untested by mutation testing: every refusal names its operation
(or machine) and says what is wrong; the domains (heads, tails, horizon, trivial bound) are exactly the ones
the job order, the release, the minimum starts, the pinned operations and the downtimes allow; a hint is taken
only when it satisfies every constraint of the request, touching intervals included; pinned blocks that
cannot meet a free operation are left out of the model.

tiny: job 0 = (m0,3)(m1,2)(m2,2); job 1 = (m0,2)(m2,1)(m1,4); job 2 = (m1,4)(m2,3)(m0,1); 22 time units of
work, machine loads 6/10/6, optimum 11."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.cpsat import SolveRequest, StabilityObjective, optimize
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import Key, OperationModel, build_model, hint_makespan
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.searching import cp_model
from alas_argo.jssp.validate import validate

#: An optimal plan of tiny (makespan 11) whose intervals touch: on machine 0, (1,0) ends at 2 where (0,0)
#: starts; in job 0, (0,0) ends at 5 where (0,1) starts.
OPTIMAL = {(1, 0): 0, (2, 0): 0, (0, 0): 2, (1, 1): 2, (2, 1): 4, (0, 1): 5, (0, 2): 7, (1, 2): 7, (2, 2): 7}


def _build(instance: Instance, **overrides: Any) -> OperationModel:
    request: dict[str, Any] = {"durations": {}, "fixed": {}, "release": 0, "min_starts": {}, "downtimes": (),
                               "precedences": (), "makespan_limit": None, "horizon": None, "hint": None}
    request.update(overrides)
    return build_model(instance, **request)


def _plan(instance: Instance, starts: Mapping[Key, int], durations: Mapping[Key, int] | None = None,
          machines: Mapping[Key, int] | None = None) -> Schedule:
    ops = [Operation(job=j, step=s, machine=(machines or {}).get((j, s), instance.machine(j, s)), start=t,
                     end=t + (durations or {}).get((j, s), instance.duration(j, s))) for (j, s), t in starts.items()]
    return Schedule.from_operations(instance.name, ops)


def _hint(instance: Instance, plan: Schedule, *, durations: Mapping[Key, int] | None = None,
          fixed: Mapping[Key, int] | None = None, release: int = 0, min_starts: Mapping[Key, int] | None = None,
          downtimes: Sequence[tuple[int, int, int]] = (), precedences: Sequence[tuple[Key, Key]] = (),
          makespan_limit: int | None = None) -> int | None:
    dur = {(j, s): d for j, ops in enumerate(instance.jobs) for s, (_, d) in enumerate(ops)}
    dur.update(durations or {})
    return hint_makespan(instance, plan, dur, fixed or {}, release, min_starts or {}, downtimes, precedences,
                         makespan_limit)


def _domain(m: OperationModel, var: cp_model.IntVar) -> list[int]:
    return list(m.model.proto.variables[var.index].domain)


def _where(excinfo: pytest.ExceptionInfo[Any]) -> Any:
    return excinfo.value.where


def _said(excinfo: pytest.ExceptionInfo[Any]) -> str:
    """The error's own message (``str()`` appends its ``where``)."""
    return str(excinfo.value.message)


# --- refusals: what is wrong and where ---------------------------------------------------------------------


def test_durations_of_unknown_operations_and_negative_durations_are_refused_by_name(tiny: Instance) -> None:
    with pytest.raises(InputError) as e:
        _build(tiny, durations={(0, 3): 1})
    assert _said(e) == "duration given for an operation that does not exist"
    assert _where(e) == {"job": 0, "step": 3}
    with pytest.raises(InputError) as e:
        _build(tiny, durations={(2, 1): -1})
    assert _said(e) == "negative duration -1"
    assert _where(e) == {"job": 2, "step": 1}
    # A zero duration (an operation cancelled to nothing) is a duration like any other.
    assert _build(tiny, durations={(2, 1): 0}).durations[(2, 1)] == 0


def test_unknown_minimum_starts_precedences_and_pins_are_refused_by_name(tiny: Instance) -> None:
    with pytest.raises(InputError) as e:
        _build(tiny, min_starts={(3, 0): 4})
    assert _said(e) == "minimum start given for an operation that does not exist"
    assert _where(e) == {"job": 3, "step": 0}
    with pytest.raises(InputError) as e:
        _build(tiny, precedences=[((0, 0), (1, 3))])
    assert _said(e) == "precedence names an operation that does not exist"
    assert _where(e) == {"job": 1, "step": 3}
    with pytest.raises(InputError) as e:
        _build(tiny, precedences=[((4, 0), (1, 0))])
    assert _said(e) == "precedence names an operation that does not exist"
    assert _where(e) == {"job": 4, "step": 0}
    with pytest.raises(InputError) as e:
        _build(tiny, fixed={(0, 5): 0})
    assert _said(e) == "pinned operation does not exist"
    assert _where(e) == {"job": 0, "step": 5}


def test_a_downtime_on_the_first_or_last_machine_is_accepted_one_beyond_them_refused(tiny: Instance) -> None:
    assert _build(tiny, downtimes=[(0, 0, 1), (2, 0, 1)]).horizon == 1 + 22
    for machine in (-1, 3):
        with pytest.raises(InputError) as e:
            _build(tiny, downtimes=[(machine, 0, 1)])
        assert _said(e) == f"downtime on unknown machine {machine}"
        assert _where(e) == {"machine": machine}


def test_overlapping_pins_name_the_later_one_and_where_it_starts(tiny: Instance) -> None:
    # (0,0) runs on machine 0 over [0, 3); (1,0), also on machine 0, may start at 3 but not at 2.
    assert set(_build(tiny, fixed={(0, 0): 0, (1, 0): 3}).constants) == {(0, 0), (1, 0)}
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 0): 0, (1, 0): 2})
    assert e.value.message == ("pinned operation overlaps another pinned operation or a downtime on machine 0 "
                               "at 2")
    assert _where(e) == {"job": 1, "step": 0}


def test_a_pin_and_a_downtime_that_overlap_name_the_pinned_operation_whichever_comes_first(
        tiny: Instance) -> None:
    # The downtime starts inside the pinned operation: the operation it runs into is named.
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 0): 0}, downtimes=[(0, 2, 5)])
    assert _said(e) == "pinned operation overlaps another pinned operation or a downtime on machine 0 at 2"
    assert _where(e) == {"job": 0, "step": 0}
    # The pinned operation starts inside the downtime.
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(1, 0): 3}, downtimes=[(0, 0, 4)])
    assert _said(e) == "pinned operation overlaps another pinned operation or a downtime on machine 0 at 3"
    assert _where(e) == {"job": 1, "step": 0}
    # A downtime inside a longer one changes nothing: the pin is still the one named.
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(1, 0): 5}, downtimes=[(0, 0, 10), (0, 2, 4)])
    assert _said(e) == "pinned operation overlaps another pinned operation or a downtime on machine 0 at 5"
    assert _where(e) == {"job": 1, "step": 0}


def test_a_pin_and_a_downtime_over_the_same_interval_overlap(tiny: Instance) -> None:
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 0): 0}, downtimes=[(0, 0, 3)])
    assert _said(e) == "pinned operation overlaps another pinned operation or a downtime on machine 0 at 0"
    assert _where(e) == {"job": 0, "step": 0}


def test_downtimes_may_overlap_each_other_and_touch_pins_and_empty_ones_are_ignored(tiny: Instance) -> None:
    # Two reports of one outage, a pin right after it, a pin ending where a downtime starts, and an empty
    # window inside a pinned operation: none is a contradiction.
    m = _build(tiny, fixed={(1, 0): 6, (2, 0): 0}, downtimes=[(0, 0, 4), (0, 2, 6), (1, 4, 8), (0, 7, 7)])
    assert m.constants == {(1, 0): (6, 2), (2, 0): (0, 4)}
    # Merged, the two windows end at 6: the horizon adds the free work (16) to the latest thing that must end.
    assert m.horizon == 8 + 16


def test_a_pin_before_its_job_predecessor_can_end_is_infeasible_and_named(tiny: Instance) -> None:
    assert _build(tiny, fixed={(0, 1): 3}).heads[(0, 2)] == 5  # right when (0,0), from 0, ends
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 1): 2})
    assert e.value.message == "pinned start 2 precedes the earliest end 3 of the job's previous operation"
    assert _where(e) == {"job": 0, "step": 1}
    # The earliest end counts the release and the pinned predecessor's own end.
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(2, 1): 5}, release=2)
    assert _said(e) == "pinned start 5 precedes the earliest end 6 of the job's previous operation"
    assert _where(e) == {"job": 2, "step": 1}
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(1, 0): 3, (1, 1): 4})
    assert _said(e) == "pinned start 4 precedes the earliest end 5 of the job's previous operation"
    assert _where(e) == {"job": 1, "step": 1}


def test_no_room_between_head_and_tail_is_infeasible_and_names_the_operation(tiny: Instance) -> None:
    # Job 2 needs 8 time units: a horizon of 8 fits it exactly, 7 does not (jobs 0 and 1 need 7).
    assert _build(tiny, horizon=8).horizon == 8
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, horizon=7)
    assert e.value.message == "no room: earliest end 8 is after the latest end 7"
    assert _where(e) == {"job": 2, "step": 2}
    # A horizon given with a pin: the free operations after the pin have the rest.
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(1, 0): 5}, horizon=11)
    assert _said(e) == "no room: earliest end 12 is after the latest end 11"
    assert _where(e) == {"job": 1, "step": 2}


def test_pins_that_end_after_the_horizon_are_infeasible(tiny: Instance) -> None:
    assert _build(tiny, fixed={(0, 2): 21}, horizon=23).horizon == 23
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 2): 21}, horizon=22)
    assert e.value.message == "pinned operations end at 23, after the horizon 22"
    assert e.value.where is None
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 2): 21}, makespan_limit=20)
    assert _said(e) == "pinned operations end at 23, after the horizon 20"


def test_pins_that_break_a_required_precedence_are_infeasible(tiny: Instance) -> None:
    # (0,0), pinned over [0, 3) on machine 0, must end before (2,0) on machine 1 starts: at 3 it may, at 2 not.
    assert _build(tiny, fixed={(0, 0): 0, (2, 0): 3}, precedences=[((0, 0), (2, 0))]).starts.keys() == {
        (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 1), (2, 2)}
    with pytest.raises(InfeasibleError) as e:
        _build(tiny, fixed={(0, 0): 0, (2, 0): 2}, precedences=[((0, 0), (2, 0))])
    assert e.value.message == "pinned operations break a required precedence"
    assert _where(e) == {"job": 2, "step": 0}


# --- domains: heads, tails, horizon, trivial bound ---------------------------------------------------------


def test_heads_and_tails_are_exactly_what_the_job_order_release_minimum_starts_and_pins_allow(
        tiny: Instance) -> None:
    m = _build(tiny, fixed={(0, 0): 1}, release=2, min_starts={(1, 1): 9})
    # Job 0 follows its pin [1, 4); job 1 waits for its minimum start at step 1; everything waits for 2.
    assert m.heads == {(0, 1): 4, (0, 2): 6, (1, 0): 2, (1, 1): 9, (1, 2): 10, (2, 0): 2, (2, 1): 6, (2, 2): 9}
    # The latest thing that must happen is the minimum start 9; 19 units of free work may follow it.
    assert m.horizon == 9 + 19
    # Each free start ranges from its head to its tail (the horizon less the rest of its job) less its own
    # duration.
    assert {k: _domain(m, v) for k, v in m.starts.items()} == {
        (0, 1): [4, 24], (0, 2): [6, 26], (1, 0): [2, 21], (1, 1): [9, 23], (1, 2): [10, 24], (2, 0): [2, 20],
        (2, 1): [6, 24], (2, 2): [9, 27]}
    assert m.constants == {(0, 0): (1, 3)}


def test_a_pinned_successor_is_a_tail_and_a_disrupted_duration_counts(tiny: Instance) -> None:
    # (1,2) pinned at 10: (1,1) must end by 10 and (1,0) by 9; (1,0) now takes 5.
    m = _build(tiny, fixed={(1, 2): 10}, durations={(1, 0): 5})
    assert m.heads[(1, 1)] == 5
    assert _domain(m, m.starts[(1, 0)]) == [0, 4]
    assert _domain(m, m.starts[(1, 1)]) == [5, 9]
    assert m.durations == {(0, 0): 3, (0, 1): 2, (0, 2): 2, (1, 0): 5, (1, 1): 1, (1, 2): 4, (2, 0): 4, (2, 1): 3,
                           (2, 2): 1}


def test_the_horizon_is_the_latest_fixed_thing_plus_the_free_work_unless_given(tiny: Instance) -> None:
    assert _build(tiny).horizon == 22
    assert _build(tiny, release=5).horizon == 5 + 22
    assert _build(tiny, fixed={(0, 0): 2}).horizon == 5 + 19  # the pin ends at 5; its 3 units are not free
    assert _build(tiny, downtimes=[(1, 3, 30)]).horizon == 30 + 22
    assert _build(tiny, min_starts={(2, 1): 12}).horizon == 12 + 22
    # A minimum start of a pinned operation means nothing: the pin decides.
    assert _build(tiny, fixed={(0, 0): 0}, min_starts={(0, 0): 30}).horizon == 3 + 19
    assert _build(tiny, horizon=40, release=5).horizon == 40
    assert _build(tiny, makespan_limit=15).horizon == 15
    assert _build(tiny, horizon=14, makespan_limit=15).horizon == 14
    assert _build(tiny, horizon=16, makespan_limit=15).horizon == 15


def test_the_trivial_bound_is_the_heaviest_machine_the_longest_job_or_the_last_pin(tiny: Instance) -> None:
    m = _build(tiny)
    assert m.trivial_bound == 10  # machine 1's load
    assert _domain(m, m.makespan) == [10, 22]
    # (0,0) pinned at 5: the rest of job 0 cannot end before 8 + 2 + 2; only a job whose previous operation
    # is pinned (or that has none) counts its rest from its head.
    assert _build(tiny, fixed={(0, 0): 5}).trivial_bound == 12
    # (0,1) pinned over [10, 12): the last operation of job 0 cannot end before 14.
    assert _build(tiny, fixed={(0, 1): 10}).trivial_bound == 14
    assert _build(tiny, release=20).trivial_bound == 20 + 10
    # A pin ending last.
    m = _build(tiny, fixed={(1, 2): 20})
    assert (m.trivial_bound, _domain(m, m.makespan)) == (24, [24, 24 + 18])
    # Machine 1 needs 10 but the horizon is 9: the makespan's domain stops at the horizon (and the solve is
    # infeasible); it is not empty.
    m = _build(tiny, horizon=9)
    assert (m.trivial_bound, _domain(m, m.makespan)) == (10, [9, 9])


def test_a_machine_load_counts_from_the_earliest_head_on_that_machine(tiny: Instance) -> None:
    # (0,1) on machine 1 may not start before 6, but (2,0) may start at 0: machine 1's 10 units from 0.
    assert _build(tiny, min_starts={(0, 1): 6}).trivial_bound == 10
    # Every operation of machine 1 waits: (2,0) until 5, (0,1) and (1,2) for their job predecessors (3, 3).
    assert _build(tiny, min_starts={(2, 0): 5, (0, 1): 5, (1, 2): 5}).trivial_bound == 5 + 10


# --- the hint: taken only when it satisfies every constraint of the request -------------------------------


def test_a_hint_that_meets_every_constraint_gives_its_makespan_touching_intervals_included(tiny: Instance) -> None:
    plan = _plan(tiny, OPTIMAL)
    assert _hint(tiny, plan) == 11
    assert _hint(tiny, plan, makespan_limit=11) == 11
    assert _hint(tiny, plan, makespan_limit=10) is None
    assert _hint(tiny, plan, fixed={(1, 0): 0, (2, 0): 0}) == 11
    assert _hint(tiny, plan, fixed={(1, 0): 1}) is None
    # The release binds the free operations only: (1,0) and (2,0) start at 0, everything else at 2 or later.
    assert _hint(tiny, plan, release=2, fixed={(1, 0): 0, (2, 0): 0}) == 11
    assert _hint(tiny, plan, release=3, fixed={(1, 0): 0, (2, 0): 0}) is None
    assert _hint(tiny, plan, release=1) is None
    assert _hint(tiny, plan, min_starts={(0, 0): 2}) == 11
    assert _hint(tiny, plan, min_starts={(0, 0): 3}) is None
    # (1,0) ends at 2 when (0,0) starts: a precedence met exactly; the other way round it is broken.
    assert _hint(tiny, plan, precedences=[((1, 0), (0, 0))]) == 11
    assert _hint(tiny, plan, precedences=[((0, 0), (1, 0))]) is None


def test_a_hint_with_a_missing_extra_doubled_or_foreign_operation_is_not_taken(tiny: Instance) -> None:
    plan = _plan(tiny, OPTIMAL)
    missing = Schedule.from_operations(tiny.name, [o for o in plan.operations if o.key != (2, 2)])
    assert _hint(tiny, missing) is None
    # (2,2) twice, at 7 and at 20: either copy alone would do, the two together are not a plan.
    second = plan.by_key()[(2, 2)].model_copy(update={"start": 20, "end": 21})
    doubled = Schedule.from_operations(tiny.name, [*plan.operations, second])
    assert _hint(tiny, doubled) is None
    foreign = Schedule.from_operations(tiny.name, [o if o.key != (2, 2) else o.model_copy(update={"job": 3})
                                                   for o in plan.operations])
    assert _hint(tiny, foreign) is None


def test_a_hint_on_the_wrong_machine_or_with_the_wrong_duration_is_not_taken(tiny: Instance) -> None:
    assert _hint(tiny, _plan(tiny, OPTIMAL, machines={(2, 2): 1})) is None
    # (0,2) now takes 3: the nominal plan is wrong, the one that runs it for 3 (until 10) is right.
    assert _hint(tiny, _plan(tiny, OPTIMAL), durations={(0, 2): 3}) is None
    assert _hint(tiny, _plan(tiny, OPTIMAL, durations={(0, 2): 3}), durations={(0, 2): 3}) == 11


def test_a_hint_on_the_wrong_machine_is_not_taken_even_where_that_machine_is_free() -> None:
    instance = Instance(name="gap", jobs=[[(0, 2)], [(2, 3)]])
    assert _hint(instance, _plan(instance, {(0, 0): 0, (1, 0): 0})) == 3
    assert _hint(instance, _plan(instance, {(0, 0): 0, (1, 0): 0}, machines={(0, 0): 1})) is None


def test_a_hint_that_starts_before_zero_is_not_taken_even_when_pinned_there(tiny: Instance) -> None:
    early = {k: t - 2 for k, t in OPTIMAL.items()}
    assert _hint(tiny, _plan(tiny, early), fixed=early) is None


def test_a_hint_that_breaks_its_job_order_or_overlaps_on_a_machine_is_not_taken(tiny: Instance) -> None:
    # (0,1) at 4 is free on machine 1 (after (2,0) ends at 4) but (0,0) runs until 5.
    assert _hint(tiny, _plan(tiny, OPTIMAL | {(0, 1): 4})) is None
    # (0,0) at 1 meets its job's order but overlaps (1,0) on machine 0.
    assert _hint(tiny, _plan(tiny, OPTIMAL | {(0, 0): 1})) is None


def test_a_hint_that_runs_into_a_downtime_is_not_taken_one_that_touches_it_is(tiny: Instance) -> None:
    plan = _plan(tiny, OPTIMAL)  # machine 0 runs (2,2) over [7, 8), nothing after
    assert _hint(tiny, plan, downtimes=[(0, 8, 9)]) == 11
    assert _hint(tiny, plan, downtimes=[(0, 5, 7)]) == 11
    assert _hint(tiny, plan, downtimes=[(0, 7, 8)]) is None
    assert _hint(tiny, plan, downtimes=[(0, 6, 7), (0, 6, 8)]) is None
    assert _hint(tiny, plan, downtimes=[(0, 3, 3)]) == 11  # an empty window is no downtime


def test_a_downtime_on_a_machine_no_operation_uses_does_not_spoil_a_hint() -> None:
    # Machines 0 and 2 are used, machine 1 is not (but it exists: num_machines is 3).
    instance = Instance(name="gap", jobs=[[(0, 2)], [(2, 3)]])
    plan = _plan(instance, {(0, 0): 0, (1, 0): 0})
    assert _hint(instance, plan, downtimes=[(1, 0, 5)]) == 3
    m = _build(instance, downtimes=[(1, 0, 5)], hint=plan)
    assert m.hint_makespan == 3


def test_the_model_takes_a_feasible_hint_its_makespan_and_hints_every_free_start(tiny: Instance) -> None:
    m = _build(tiny, fixed={(1, 0): 0}, hint=_plan(tiny, OPTIMAL))
    assert m.hint_makespan == 11
    hinted = dict(zip(m.model.proto.solution_hint.vars, m.model.proto.solution_hint.values, strict=True))
    assert {k: hinted[v.index] for k, v in m.starts.items()} == {k: t for k, t in OPTIMAL.items() if k != (1, 0)}
    assert len(hinted) == 8
    # A hint whose idle time makes it longer than the derived horizon stretches the horizon to it.
    late = _build(tiny, hint=_plan(tiny, {k: t + 20 for k, t in OPTIMAL.items()}))
    assert (late.hint_makespan, late.horizon) == (31, 31)
    # A hint the request rules out is still a warm start for the search, but it has no makespan.
    ruled_out = _build(tiny, release=1, hint=_plan(tiny, OPTIMAL))
    assert (ruled_out.hint_makespan, ruled_out.horizon) == (None, 1 + 22)
    assert len(ruled_out.model.proto.solution_hint.vars) == 9
    assert list(_build(tiny).model.proto.solution_hint.vars) == []


# --- what goes into the model ------------------------------------------------------------------------------


def _intervals(m: OperationModel) -> int:
    return sum(1 for c in m.model.proto.constraints if c.has_interval())


def test_a_block_that_ends_before_every_free_operation_of_its_machine_may_start_is_left_out(
        tiny: Instance) -> None:
    # (0,0) pinned over [0, 3) on machine 0: with release 3 no free operation of machine 0 can meet it.
    assert _intervals(_build(tiny, fixed={(0, 0): 0}, release=3)) == 8
    assert _intervals(_build(tiny, fixed={(0, 0): 0}, release=2)) == 8 + 1
    # The same for a downtime; an empty one is never a block.
    assert _intervals(_build(tiny, release=3, downtimes=[(1, 0, 3)])) == 9
    assert _intervals(_build(tiny, release=3, downtimes=[(1, 0, 4)])) == 9 + 1
    assert _intervals(_build(tiny, durations={(0, 0): 0}, fixed={(0, 0): 5})) == 8
    # A machine with no free operation gets no blocks at all.
    assert _intervals(_build(tiny, fixed={(0, 0): 0, (1, 0): 3, (2, 2): 12}, downtimes=[(0, 5, 9)])) == 6


def test_two_free_operations_alone_on_a_machine_do_not_overlap() -> None:
    instance = Instance(name="pair", jobs=[[(0, 3)], [(0, 2)]])
    result = optimize(SolveRequest(instance, time_limit=2))
    assert result.objective == 5
    assert validate(instance, result.schedule).valid


def test_precedences_between_a_pinned_and_a_free_operation_hold_both_ways() -> None:
    instance = Instance(name="two", jobs=[[(0, 3)], [(1, 2)]])
    after = optimize(SolveRequest(instance, time_limit=2, fixed={(0, 0): 4}, precedences=[((0, 0), (1, 0))]))
    assert after.schedule.starts() == {(0, 0): 4, (1, 0): 7}
    before = optimize(SolveRequest(instance, time_limit=2, fixed={(1, 0): 5}, precedences=[((0, 0), (1, 0))],
                                   reference={(0, 0): 4}, stability=StabilityObjective.TOTAL_SHIFT))
    assert before.schedule.starts() == {(0, 0): 2, (1, 0): 5}  # as near 4 as ending by 5 allows
    # Two pinned operations whose precedence holds add nothing; the precedences after them still count.
    both = optimize(SolveRequest(Instance(name="three", jobs=[[(0, 3)], [(1, 2)], [(2, 1)]]), time_limit=2,
                                 fixed={(0, 0): 0, (1, 0): 3}, precedences=[((0, 0), (1, 0)), ((1, 0), (2, 0))]))
    assert both.schedule.starts() == {(0, 0): 0, (1, 0): 3, (2, 0): 5}


def test_a_lone_pin_before_time_zero_is_refused_for_what_it_is_not_as_an_overlap(tiny: Instance) -> None:
    # Nothing runs before 0: a pin at -3 precedes the earliest start of its job. It overlaps nothing, and an
    # error saying it overlaps "another pinned operation or a downtime" sent the reader after one that does
    # not exist (the overlap scan started from -1).
    for start in (-1, -3):
        with pytest.raises(InfeasibleError) as e:
            _build(tiny, fixed={(2, 0): start})
        assert _said(e) == f"pinned start {start} precedes the earliest end 0 of the job's previous operation"
        assert _where(e) == {"job": 2, "step": 0}


def test_an_instance_of_zero_length_operations_has_a_horizon_and_a_bound_of_zero() -> None:
    # Nothing is pinned and nothing takes time: the horizon is 0, and no pinned end past it is made up.
    instance = Instance(name="instant", jobs=[[(0, 0)], [(1, 0)]])
    m = _build(instance)
    assert (m.horizon, m.trivial_bound, _domain(m, m.makespan)) == (0, 0, [0, 0])
    assert optimize(SolveRequest(instance, time_limit=1)).objective == 0
