"""Each fault injector breaks exactly what its label says, by exactly the stated amount, and nothing else.

Found by mutation testing (scripts/mutation.py on alas_argo/jssp/fault_injectors.py): the property tests in
test_faults.py only ask the validator whether each labelled (job, step) is flagged with the label's code, so the
label's other fields (the other operation, the machine), the size of each change (one unit before the
predecessor ends, one unit longer, one to three before 0 or after the baseline start), which operations a kind may
pick (positive lengths, not started, not interrupted) and that a faulted operation is never picked again were
free to change as long as the validator still found something at that operation.
"""

from __future__ import annotations

import random

import pytest

from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.fault_injectors import INJECTORS, Workbench
from alas_argo.jssp.faults import FaultKind, inject_faults
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from tests.jssp.strategies import repair_decode
from tests.jssp.test_faults import semi_active

SEEDS = range(40)
Key = tuple[int, int]


def _ops(schedule: Schedule) -> dict[Key, tuple[int, int, int]]:
    return {o.key: (o.machine, o.start, o.end) for o in schedule.operations}


def _inject(instance: Instance, schedule: Schedule, kind: FaultKind, seed: int,
            disruption: Disruption | None = None, baseline: Schedule | None = None
            ) -> tuple[Workbench, dict[str, int], Schedule]:
    work = Workbench(instance, schedule, disruption, baseline, random.Random(seed))
    fault = INJECTORS[kind](work)
    assert fault is not None and fault.kind is kind
    return work, fault.scope, work.schedule(schedule.instance)


def _changed(before: Schedule, after: Schedule) -> dict[Key, tuple[int, int, int]]:
    old, new = _ops(before), _ops(after)
    return {k: v for k, v in new.items() if old.get(k) != v}


@pytest.fixture
def disrupted(ft06: Instance) -> tuple[Schedule, Disruption, Schedule]:
    """ft06 semi-active, a machine busy at a third of the makespan down from then for 5: (baseline, d, repaired)."""
    baseline = semi_active(ft06)
    t = baseline.makespan // 3
    busy = next(o.machine for o in baseline.operations if o.start < t < o.end)
    d = Disruption(time=t, events=[MachineBreakdown(machine=busy, start=t, duration=5),
                                   MachineBreakdown(machine=(busy + 1) % 6, start=t + 2, duration=0)])
    return baseline, d, repair_decode(ft06, baseline, d)


def test_precedence_starts_one_unit_before_the_predecessor_ends(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    ops = _ops(schedule)
    for seed in SEEDS:
        work, scope, out = _inject(ft06, schedule, FaultKind.PRECEDENCE, seed)
        (key, (machine, start, end)), = _changed(schedule, out).items()
        assert scope == {"job": key[0], "step": key[1], "other_job": key[0], "other_step": key[1] - 1}
        assert key[1] > 0 and start == ops[(key[0], key[1] - 1)][2] - 1
        assert (machine, end - start) == (ops[key][0], ops[key][2] - ops[key][1])
        assert work.locked == {key, (key[0], key[1] - 1)}


def test_precedence_needs_a_free_predecessor_of_positive_length() -> None:
    # Job 0's second step follows a zero-length step; job 1's first step has no predecessor.
    inst = Instance(name="p", jobs=[[(0, 0), (1, 2)], [(1, 3)]])
    schedule = semi_active(inst)
    assert INJECTORS[FaultKind.PRECEDENCE](Workbench(inst, schedule, None, None, random.Random(0))) is None
    inst = Instance(name="q", jobs=[[(0, 1), (1, 2)]])
    schedule = semi_active(inst)
    work = Workbench(inst, schedule, None, None, random.Random(0))
    work.locked.add((0, 0))  # a predecessor an earlier fault depends on is left alone
    assert INJECTORS[FaultKind.PRECEDENCE](work) is None


def test_machine_overlap_puts_one_operation_inside_another_on_its_machine(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    ops = _ops(schedule)
    for seed in SEEDS:
        work, scope, out = _inject(ft06, schedule, FaultKind.MACHINE_OVERLAP, seed)
        changed = _changed(schedule, out)
        a, b = (scope["job"], scope["step"]), (scope["other_job"], scope["other_step"])
        assert set(changed) <= {a} and a != b and work.locked == {a, b}
        machine, start, end = _ops(out)[a]
        assert machine == scope["machine"] == ops[b][0] == ops[a][0]
        assert start == max(ops[b][1], ops[b][2] - 1) and end - start == ops[a][2] - ops[a][1]


def test_machine_overlap_needs_two_operations_on_a_machine_one_at_least_two_long() -> None:
    one = Instance(name="o", jobs=[[(0, 1)], [(0, 1)]])
    assert INJECTORS[FaultKind.MACHINE_OVERLAP](Workbench(one, semi_active(one), None, None,
                                                          random.Random(0))) is None
    apart = Instance(name="a", jobs=[[(0, 3)], [(1, 3)]])
    assert INJECTORS[FaultKind.MACHINE_OVERLAP](Workbench(apart, semi_active(apart), None, None,
                                                          random.Random(0))) is None
    mixed = Instance(name="m", jobs=[[(0, 1)], [(0, 2)]])
    moved = set()
    for seed in SEEDS:
        _, scope, out = _inject(mixed, semi_active(mixed), FaultKind.MACHINE_OVERLAP, seed)
        a, b = (scope["job"], scope["step"]), (scope["other_job"], scope["other_step"])
        assert {a, b} == {(0, 0), (1, 0)} and scope["machine"] == 0
        ends = _ops(out)
        # A sorts after B: a later start, or the same start and a later end.
        assert (ends[a][1], ends[a][2]) > (ends[b][1], ends[b][2]) and ends[a][1] < ends[b][2]
        moved.add(a)
    # Two units are enough on either side: the short one goes inside the long one, or the long one over the short.
    assert moved == {(0, 0), (1, 0)}


@pytest.mark.parametrize("kind", [FaultKind.WRONG_DURATION, FaultKind.NEGATIVE_START, FaultKind.WRONG_MACHINE])
def test_single_operation_changes_are_exactly_their_size(ft06: Instance, kind: FaultKind) -> None:
    schedule = semi_active(ft06)
    ops = _ops(schedule)
    seen: set[int] = set()
    for seed in SEEDS:
        work, scope, out = _inject(ft06, schedule, kind, seed)
        (key, (machine, start, end)), = _changed(schedule, out).items()
        assert (scope["job"], scope["step"]) == key and work.locked == {key}
        m0, s0, e0 = ops[key]
        if kind is FaultKind.WRONG_DURATION:
            assert scope == {"job": key[0], "step": key[1]} and (machine, start, end) == (m0, s0, e0 + 1)
        elif kind is FaultKind.NEGATIVE_START:
            assert scope == {"job": key[0], "step": key[1]} and machine == m0 and end - start == e0 - s0
            seen.add(start)
        else:
            assert scope == {"job": key[0], "step": key[1], "machine": machine}
            assert machine != ft06.machine(*key) and 0 <= machine < ft06.num_machines and (start, end) == (s0, e0)
            seen.add((machine - ft06.machine(*key)) % ft06.num_machines)
    if kind is FaultKind.NEGATIVE_START:
        assert seen == {-1, -2, -3}
    if kind is FaultKind.WRONG_MACHINE:
        assert seen == {1, 2, 3, 4, 5}  # every other machine can be drawn


def test_wrong_machine_needs_two_machines() -> None:
    inst = Instance(name="w", jobs=[[(0, 2)], [(0, 1)]])
    assert INJECTORS[FaultKind.WRONG_MACHINE](Workbench(inst, semi_active(inst), None, None,
                                                        random.Random(0))) is None


def test_missing_and_duplicate_name_the_operation_and_its_machine(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    ops = _ops(schedule)
    for seed in SEEDS[:10]:
        work, scope, out = _inject(ft06, schedule, FaultKind.MISSING_OPERATION, seed)
        key = (scope["job"], scope["step"])
        assert scope == {"job": key[0], "step": key[1], "machine": ops[key][0]}
        assert set(_ops(out)) == set(ops) - {key} and work.locked == {key}
        assert _changed(schedule, out) == {}
        work, scope, out = _inject(ft06, schedule, FaultKind.DUPLICATE_OPERATION, seed)
        key = (scope["job"], scope["step"])
        assert scope == {"job": key[0], "step": key[1]} and work.locked == {key}
        # The duplicate is appended after every original entry, as an exact copy.
        assert [o.key for o in out.operations] == [o.key for o in schedule.operations] + [key]
        assert (out.operations[-1].machine, out.operations[-1].start, out.operations[-1].end) == ops[key]


def test_every_injector_says_none_when_nothing_is_free() -> None:
    inst = Instance(name="n", jobs=[[(0, 2), (1, 2)], [(1, 2), (0, 2)]])
    schedule = semi_active(inst)
    d = Disruption(time=1, events=[MachineBreakdown(machine=0, start=1, duration=3)])
    for kind, injector in INJECTORS.items():
        work = Workbench(inst, schedule, d, schedule, random.Random(0))
        work.locked = set(work.ops)
        assert injector(work) is None, kind


def test_disruption_kinds_move_by_exactly_their_amount(ft06: Instance,
                                                      disrupted: tuple[Schedule, Disruption, Schedule]) -> None:
    baseline, d, repaired = disrupted
    base = _ops(baseline)
    down = d.breakdowns[0]
    shifts: set[int] = set()
    for seed in SEEDS:
        _, scope, out = _inject(ft06, repaired, FaultKind.STARTED_IN_PAST, seed, d, baseline)
        (key, (_, start, _)), = _changed(repaired, out).items()
        assert scope == {"job": key[0], "step": key[1]} and start == d.time - 1 and base[key][1] >= d.time

        _, scope, out = _inject(ft06, repaired, FaultKind.DOWNTIME_OVERLAP, seed, d, baseline)
        (key, (machine, start, _)), = _changed(repaired, out).items()
        # Only the breakdown of positive length counts as downtime.
        assert scope == {"job": key[0], "step": key[1], "machine": down.machine}
        assert machine == down.machine and start == down.start

        work, scope, out = _inject(ft06, repaired, FaultKind.FROZEN_MOVED, seed, d, baseline)
        (key, (_, start, _)), = _changed(repaired, out).items()
        assert work.locked == {key}
        assert scope == {"job": key[0], "step": key[1]} and base[key][1] < d.time
        b_start = base[key][1]
        b_end = b_start + ft06.duration(*key)
        assert not (base[key][0] == down.machine and b_start < down.end and down.start < b_end)
        shifts.add(start - b_start)
    assert shifts == {1, 2, 3}


def test_disruption_kinds_need_their_context(ft06: Instance,
                                             disrupted: tuple[Schedule, Disruption, Schedule]) -> None:
    baseline, d, repaired = disrupted
    for kind in (FaultKind.STARTED_IN_PAST, FaultKind.FROZEN_MOVED):
        assert INJECTORS[kind](Workbench(ft06, repaired, None, baseline, random.Random(0))) is None
        assert INJECTORS[kind](Workbench(ft06, repaired, d, None, random.Random(0))) is None
    assert INJECTORS[FaultKind.DOWNTIME_OVERLAP](Workbench(ft06, repaired, None, baseline, random.Random(0))) is None
    at_zero = d.model_copy(update={"time": 0})
    assert INJECTORS[FaultKind.STARTED_IN_PAST](Workbench(ft06, repaired, at_zero, baseline,
                                                          random.Random(0))) is None
    no_downtime = Disruption(time=d.time, events=[MachineBreakdown(machine=0, start=d.time, duration=0)])
    assert INJECTORS[FaultKind.DOWNTIME_OVERLAP](Workbench(ft06, repaired, no_downtime, baseline,
                                                           random.Random(0))) is None


def test_an_interrupted_started_operation_is_never_the_frozen_one_moved() -> None:
    # Job 0 runs on machine 0 over [0, 4) and is interrupted by the breakdown at 2; job 1's [0, 3) on machine 1
    # has started and runs on: it is the only operation frozen_moved may move.
    inst = Instance(name="i", jobs=[[(0, 4)], [(1, 3)]])
    baseline = semi_active(inst)
    d = Disruption(time=2, events=[MachineBreakdown(machine=0, start=2, duration=2)])
    repaired = repair_decode(inst, baseline, d)
    for seed in SEEDS[:10]:
        _, scope, _ = _inject(inst, repaired, FaultKind.FROZEN_MOVED, seed, d, baseline)
        assert (scope["job"], scope["step"]) == (1, 0)


def test_many_faults_never_touch_the_same_operation_twice(ft06: Instance) -> None:
    out = inject_faults(ft06, semi_active(ft06), count=14, seed=3)
    touched = [(f.scope["job"], f.scope["step"]) for f in out.faults]
    touched += [(f.scope["other_job"], f.scope["other_step"]) for f in out.faults if "other_job" in f.scope]
    assert len(touched) == len(set(touched))
    assert out.schedule.makespan == max(o.end for o in out.schedule.operations)


def test_operations_of_length_one_are_fair_targets() -> None:
    # The only predecessor is 1 long, and the only operation on the downed machine is 1 long: both kinds fit.
    inst = Instance(name="l", jobs=[[(0, 1), (1, 2)]])
    schedule = semi_active(inst)
    _, scope, out = _inject(inst, schedule, FaultKind.PRECEDENCE, 0)
    assert scope["step"] == 1 and _ops(out)[(0, 1)] == (1, 0, 2)
    d = Disruption(time=0, events=[MachineBreakdown(machine=0, start=5, duration=1)])
    work, scope, out = _inject(inst, schedule, FaultKind.DOWNTIME_OVERLAP, 0, d, schedule)
    assert scope == {"job": 0, "step": 0, "machine": 0} and _ops(out)[(0, 0)] == (0, 5, 6)
    assert work.locked == {(0, 0)}


def test_started_in_past_needs_a_reveal_time_of_at_least_1() -> None:
    # At time 1 the operation that starts at 0 has started; the one at 2 has not and moves to 0.
    inst = Instance(name="s", jobs=[[(0, 2), (1, 2)]])
    baseline = semi_active(inst)
    d = Disruption(time=1, events=[MachineBreakdown(machine=1, start=9, duration=0)])
    _, scope, out = _inject(inst, baseline, FaultKind.STARTED_IN_PAST, 0, d, baseline)
    assert scope == {"job": 0, "step": 1} and _ops(out)[(0, 1)] == (1, 0, 2)


def test_zero_length_operations_take_no_part_in_an_overlap() -> None:
    inst = Instance(name="z", jobs=[[(0, 3)], [(0, 0)]])
    assert INJECTORS[FaultKind.MACHINE_OVERLAP](Workbench(inst, semi_active(inst), None, None,
                                                          random.Random(0))) is None


def test_wrong_machine_works_with_two_machines() -> None:
    inst = Instance(name="w2", jobs=[[(0, 2)], [(1, 1)]])
    for seed in range(4):
        _, scope, out = _inject(inst, semi_active(inst), FaultKind.WRONG_MACHINE, seed)
        key = (scope["job"], scope["step"])
        assert _ops(out)[key][0] == 1 - inst.machine(*key) == scope["machine"]


def test_a_plan_with_every_operation_missing_has_makespan_0() -> None:
    inst = Instance(name="one", jobs=[[(0, 2)]])
    out = inject_faults(inst, semi_active(inst), kinds=[FaultKind.MISSING_OPERATION])
    assert out.schedule.operations == [] and out.schedule.makespan == 0


@pytest.mark.parametrize(("breakdown", "change", "movable"), [
    # Job 0 runs on machine 0 over [0, 2); job 1 on machine 1 over [0, 3) and is never interrupted.
    (MachineBreakdown(machine=0, start=2, duration=2), None, {(0, 0), (1, 0)}),  # starts as job 0 ends
    (MachineBreakdown(machine=0, start=1, duration=0), None, {(0, 0), (1, 0)}),  # no downtime
    (MachineBreakdown(machine=0, start=1, duration=1), None, {(1, 0)}),  # one unit of downtime interrupts
    (MachineBreakdown(machine=0, start=3, duration=2), 4, {(1, 0)}),  # interrupted once it runs longer
])
def test_frozen_moved_takes_the_validators_rule_for_interrupted(breakdown: MachineBreakdown, change: int | None,
                                                                movable: set[Key]) -> None:
    from alas_argo.jssp.disruption import DurationChange

    inst = Instance(name="f", jobs=[[(0, 2)], [(1, 3)]])
    baseline = semi_active(inst)
    events: list[MachineBreakdown | DurationChange] = [breakdown]
    if change is not None:
        events.append(DurationChange(job=0, step=0, duration=change))
    d = Disruption(time=1, events=events)
    work = Workbench(inst, baseline, d, baseline, random.Random(0))
    assert {k for k in work.free() if work.started(k) and not work.interrupted(k)} == movable
    picked = set()
    for seed in range(20):
        _, scope, _ = _inject(inst, baseline, FaultKind.FROZEN_MOVED, seed, d, baseline)
        picked.add((scope["job"], scope["step"]))
    assert picked == movable
