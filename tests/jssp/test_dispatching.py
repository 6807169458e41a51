"""Giffler-Thompson dispatching: valid, active schedules for every rule, and the disrupted variants."""

from __future__ import annotations

import pytest

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import DispatchingRule, best_dispatch, dispatch, priority_function
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


def _is_active(instance: Instance, schedule: Schedule) -> bool:
    """No operation can start earlier: neither left-shifted in place nor moved into an earlier idle gap
    of its machine that opens after its job predecessor ends."""
    ops = schedule.by_key()
    by_machine: dict[int, list[tuple[int, int]]] = {}
    for o in schedule.operations:
        by_machine.setdefault(o.machine, []).append((o.start, o.end))
    for intervals in by_machine.values():
        intervals.sort()
    for (j, s), o in ops.items():
        ready = ops[(j, s - 1)].end if s > 0 else 0
        gap_start = 0
        for start, end in by_machine[o.machine]:
            if start >= o.start:
                break
            if max(gap_start, ready) + o.duration <= start:
                return False
            gap_start = max(gap_start, end)
        if max(gap_start, ready) < o.start:
            return False  # it could simply start earlier (not even semi-active)
    return True


@pytest.mark.parametrize("rule", list(DispatchingRule))
@pytest.mark.parametrize("name", ["ft06", "la01", "abz5"])
def test_every_rule_gives_a_valid_active_schedule(name: str, rule: DispatchingRule) -> None:
    instance = get_instance(name)
    schedule = dispatch(instance, rule, seed=3)
    assert validate(instance, schedule).valid
    assert schedule.makespan >= (instance.lower_bound or 0)
    assert _is_active(instance, schedule)


def test_tiny_dispatch_is_valid_and_close(tiny: Instance) -> None:
    rule, schedule = best_dispatch(tiny)
    assert validate(tiny, schedule).valid
    assert 11 <= schedule.makespan <= 14
    assert rule in DispatchingRule


def test_best_dispatch_keeps_the_shortest(ft06: Instance) -> None:
    rule, best = best_dispatch(ft06)
    others = [dispatch(ft06, r).makespan for r in DispatchingRule if r is not DispatchingRule.RANDOM]
    assert best.makespan == min(others)
    assert dispatch(ft06, rule).makespan == best.makespan


def test_random_rule_is_reproducible(ft06: Instance) -> None:
    a = dispatch(ft06, "random", seed=7)
    b = dispatch(ft06, "random", seed=7)
    assert a == b


def test_rules_differ(ft06: Instance) -> None:
    assert len({dispatch(ft06, r).makespan for r in DispatchingRule}) > 1


def test_factory_rejects_unknown_rule() -> None:
    with pytest.raises(InputError, match="unknown dispatching rule"):
        priority_function("nope")


def test_downtime_release_and_min_starts_are_respected(ft06: Instance) -> None:
    downtimes = [(0, 5, 20), (3, 0, 12)]
    schedule = dispatch(ft06, "mwkr", release=2, min_starts={(1, 0): 9}, downtimes=downtimes)
    assert validate(ft06, schedule).valid
    for o in schedule.operations:
        assert o.start >= 2
        for m, s, e in downtimes:
            assert o.machine != m or o.end <= s or o.start >= e
    assert schedule.by_key()[(1, 0)].start >= 9


def test_fixed_operations_stay_put_and_durations_apply(ft06: Instance) -> None:
    base = dispatch(ft06, "spt")
    fixed = {o.key: o.start for o in base.operations if o.start < 10}
    schedule = dispatch(ft06, "mwkr", fixed=fixed, durations={(2, 3): 20}, release=10)
    by_key = schedule.by_key()
    for key, start in fixed.items():
        assert by_key[key].start == start
    assert by_key[(2, 3)].duration == 20
    assert all(o.start >= 10 for o in schedule.operations if o.key not in fixed)


def test_fixed_operation_before_its_predecessor_is_infeasible(tiny: Instance) -> None:
    with pytest.raises(InfeasibleError):
        dispatch(tiny, "spt", fixed={(0, 0): 5, (0, 1): 6})


def test_activity_check_detects_a_delayed_schedule(ft06: Instance) -> None:
    schedule = dispatch(ft06, "spt")
    delayed = Schedule.from_operations(ft06.name, [o.model_copy(update={"start": o.start + 1, "end": o.end + 1})
                                                   for o in schedule.operations])
    assert not _is_active(ft06, delayed)


def test_a_callers_priority_replaces_the_rule(ft06: Instance) -> None:
    # Job index descending: the highest job wins every conflict, whatever the rule would say.
    by_job = dispatch(ft06, "spt", priority=lambda c: -c.job)
    assert by_job != dispatch(ft06, "spt")
    assert validate(ft06, by_job).valid and _is_active(ft06, by_job)
    assert by_job == dispatch(ft06, "lpt", priority=lambda c: -c.job)


# Three jobs start on machine 0 at once: job 0 short with much work after it, job 1 long and alone, job 2 with the
# most operations left. Each rule's conflict on machine 0, in order (RANDOM: the reproducibility test).
RULES = Instance(name="rules", jobs=[[(0, 2), (1, 9)], [(0, 5)], [(0, 3), (1, 2), (2, 1)]])


@pytest.mark.parametrize(("rule", "order"), [
    (DispatchingRule.SPT, [0, 2, 1]),  # shortest first: 2, 3, 5
    (DispatchingRule.LPT, [1, 2, 0]),  # longest first
    (DispatchingRule.MWKR, [0, 2, 1]),  # most work remaining: 11, 6, 5
    (DispatchingRule.LWKR, [1, 2, 0]),  # least work remaining
    (DispatchingRule.MOPNR, [2, 0, 1]),  # most operations remaining: 3, 2, 1
    (DispatchingRule.LOR, [1, 0, 2]),  # least operations remaining
    (DispatchingRule.FIFO, [0, 1, 2]),  # all ready at 0: the lowest job first, then the earliest ready
])
def test_each_rule_picks_what_its_name_says(rule: DispatchingRule, order: list[int]) -> None:
    schedule = dispatch(RULES, rule)
    assert [o.job for o in sorted((o for o in schedule.operations if o.machine == 0), key=lambda o: o.start)] == order


def test_bad_constraints_are_named() -> None:
    with pytest.raises(InputError, match="downtime on unknown machine 3") as err:
        dispatch(RULES, "spt", downtimes=[(3, 0, 5)])
    assert err.value.where == {"machine": 3}
    for missing in ((3, 0), (0, 2)):
        with pytest.raises(InputError, match="fixed operation does not exist") as err:
            dispatch(RULES, "spt", fixed={missing: 0})
        assert err.value.where == {"job": missing[0], "step": missing[1]}
    early = "pinned start 1 precedes the end 2 of the job's previous operation"
    with pytest.raises(InfeasibleError, match=early) as infeasible:
        dispatch(RULES, "spt", fixed={(0, 0): 0, (0, 1): 1})
    assert infeasible.value.where == {"job": 0, "step": 1}


def test_operations_remaining_count_from_the_operation_in_hand() -> None:
    """Machine 0: job 1's first operation (3 left, itself included) against job 0's second (1 left), both in
    the first conflict there: MOPNR runs job 1 first, LOR job 0."""
    inst = Instance(name="later", jobs=[[(1, 1), (0, 2)], [(0, 2), (1, 1), (2, 1)]])
    for rule, first in ((DispatchingRule.MOPNR, 1), (DispatchingRule.LOR, 0)):
        ops = sorted((o for o in dispatch(inst, rule).operations if o.machine == 0), key=lambda o: o.start)
        assert ops[0].job == first, rule


def test_fifo_runs_the_earliest_ready_first_whatever_the_job_index() -> None:
    """Machine 0: job 2 ready at 0, job 1 at 1 (after its first operation elsewhere), job 0 at 4."""
    inst = Instance(name="fifo", jobs=[[(1, 4), (0, 1)], [(2, 1), (0, 3)], [(0, 5)]])
    ops = sorted((o for o in dispatch(inst, DispatchingRule.FIFO).operations if o.machine == 0), key=lambda o: o.start)
    assert [o.job for o in ops] == [2, 1, 0]


def test_the_random_rule_follows_its_seed(ft06: Instance) -> None:
    plans = {dispatch(ft06, DispatchingRule.RANDOM, seed=seed).starts() == dispatch(ft06, "random", seed=seed).starts()
             for seed in range(3)}
    assert plans == {True}
    assert len({tuple(sorted(dispatch(ft06, "random", seed=seed).starts().items())) for seed in range(5)}) > 1


def test_a_fixed_operation_occupies_its_machine_for_its_new_duration(ft06: Instance) -> None:
    base = dispatch(ft06, "spt")
    first = min(base.operations, key=lambda o: (o.start, o.job))
    longer = first.duration + 7
    schedule = dispatch(ft06, "mwkr", fixed={first.key: first.start}, durations={first.key: longer})
    busy_until = first.start + longer
    assert all(o.start >= busy_until for o in schedule.operations if o.machine == first.machine and o.key != first.key)
