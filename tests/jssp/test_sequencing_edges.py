"""Machine sequences pinned exactly: start times, tails, the critical path, neighbours, the refusals of
a schedule that is not a complete feasible schedule of the instance, and resequencing's tie-breaks.

tests/jssp/test_lns.py checks these only through invariants (valid, never later, critical operations satisfy
their own defining equation), which the evaluation could break without failing; here every number of a small
case is worked out by hand.
"""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.sequencing import Sequences
from alas_argo.jssp.validate import validate


def _two_by_two(starts: dict[tuple[int, int], int]) -> Schedule:
    """A schedule of the 2x2 instance below (job 0: m0 then m1; job 1: m1 then m0, unit durations)."""
    machines = {(0, 0): 0, (0, 1): 1, (1, 0): 1, (1, 1): 0}
    return Schedule.from_operations("square", [Operation(job=j, step=s, machine=machines[j, s], start=t,
                                                         end=t + 1) for (j, s), t in starts.items()])


SQUARE = Instance(name="square", jobs=[[(0, 1), (1, 1)], [(1, 1), (0, 1)]])


def test_tiny_evaluated_exactly(tiny: Instance) -> None:
    # dispatch(tiny, "spt") starts (0,0) at 2; the sequences below are the start order on each machine.
    # Operation ids: job 0 -> 0, 1, 2; job 1 -> 3, 4, 5; job 2 -> 6, 7, 8.
    seqs = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={})
    assert seqs.seqs == [[3, 0, 8], [5, 1, 6], [4, 2, 7]]
    assert seqs.start == [2, 7, 9, 0, 2, 3, 9, 13, 16]
    assert seqs.makespan == 17
    assert seqs.completion == 11 + 7 + 17  # each job's last end
    # Tails: the longest path from an operation's end to the end, through job and machine successors.
    assert seqs.tails() == [10, 8, 4, 15, 14, 10, 4, 1, 0]
    # On a longest path (start + duration + tail = 17): all but op 0 (2 + 3 + 10) and op 2 (9 + 2 + 4).
    assert seqs.critical_path() == [1, 3, 4, 5, 6, 7, 8]
    assert seqs.start_order() == [3, 0, 4, 5, 1, 2, 6, 7, 8]  # ties (ops 0 and 4 at 2, 2 and 6 at 9) by id


def test_neighbours_at_both_ends(tiny: Instance) -> None:
    seqs = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={})
    # Machine 0 runs 3, 0, 8: op 3 (id 0 is a real operation, not "none") has no predecessor.
    assert [seqs.machine_pred(op) for op in (3, 0, 8)] == [None, 3, 0]
    assert [seqs.machine_succ(op) for op in (3, 0, 8)] == [0, 8, None]
    assert [seqs.machine_pred(op) for op in (5, 1, 6)] == [None, 5, 1]
    assert [seqs.machine_succ(op) for op in (4, 2, 7)] == [2, 7, None]
    assert [seqs.job_pred(op) for op in (0, 1, 2, 3)] == [None, 0, 1, None]
    assert [seqs.job_succ(op) for op in (0, 2, 3, 8)] == [1, None, 4, None]


def test_durations_and_release_apply(tiny: Instance) -> None:
    # (0, 0) takes 5 instead of 3 and nothing starts before 2: everything on its paths moves.
    seqs = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={(0, 0): 5}, release=2)
    assert seqs.duration[0] == 5 and seqs.duration[1:] == [2, 2, 2, 1, 4, 4, 3, 1]
    assert seqs.start == [4, 9, 11, 2, 4, 5, 11, 15, 18]
    assert seqs.makespan == 19
    assert min(seqs.start) == 2
    schedule = seqs.to_schedule()
    assert schedule.by_key()[0, 0].end == 9 and schedule.makespan == 19


def test_to_schedule_names_every_operation(tiny: Instance) -> None:
    schedule = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={}).to_schedule()
    assert schedule.instance == "tiny"
    assert sorted((o.job, o.step, o.machine, o.start, o.end) for o in schedule.operations) == [
        (0, 0, 0, 2, 5), (0, 1, 1, 7, 9), (0, 2, 2, 9, 11), (1, 0, 0, 0, 2), (1, 1, 2, 2, 3), (1, 2, 1, 3, 7),
        (2, 0, 1, 9, 13), (2, 1, 2, 13, 16), (2, 2, 0, 16, 17)]


def test_an_incomplete_incumbent_is_refused(tiny: Instance) -> None:
    schedule = dispatch(tiny, "spt")
    partial = Schedule.from_operations("tiny", [o for o in schedule.operations if o.key != (2, 2)])
    with pytest.raises(InputError, match=r"^tiny: incumbent schedule is incomplete$") as raised:
        Sequences.from_schedule(tiny, partial, durations={})
    assert raised.value.where == "tiny"


def test_a_cyclic_incumbent_is_refused() -> None:
    # Each machine runs the other job's operation first: (0,0) -> (0,1) -> (1,0) -> (1,1) -> (0,0).
    crossed = _two_by_two({(0, 0): 1, (0, 1): 0, (1, 0): 1, (1, 1): 0})
    with pytest.raises(InputError, match=r"^square: incumbent schedule is not feasible \(cyclic order\)$") \
            as raised:
        Sequences.from_schedule(SQUARE, crossed, durations={})
    assert raised.value.where == "square"
    assert Sequences.from_schedule(SQUARE, _two_by_two({(0, 0): 0, (0, 1): 1, (1, 0): 0, (1, 1): 1}),
                                   durations={}).makespan == 2


def test_a_cycle_among_few_operations_is_still_a_cycle() -> None:
    # The crossed square plus six unrelated one-operation jobs: only 4 of 10 operations are stuck, so an
    # evaluation that counted what it placed wrongly (e.g. twice) would take the cycle for a schedule.
    instance = Instance(name="square", jobs=[[(0, 1), (1, 1)], [(1, 1), (0, 1)], *([[(2, 1)]] * 6)])
    crossed = _two_by_two({(0, 0): 1, (0, 1): 0, (1, 0): 1, (1, 1): 0})
    extra = [Operation(job=j, step=0, machine=2, start=j - 2, end=j - 1) for j in range(2, 8)]
    with pytest.raises(InputError, match="cyclic order"):
        Sequences.from_schedule(instance, Schedule.from_operations("square", [*crossed.operations, *extra]),
                                durations={})


@pytest.mark.parametrize(("job", "step"), [(0, -1), (0, -3), (0, 3), (3, 0), (-1, 0)])
def test_an_incumbent_naming_an_unknown_operation_is_refused(tiny: Instance, job: int, step: int) -> None:
    # As many operations as the instance has, but (0, 2) replaced by an operation tiny does not have (3 jobs
    # of 3 steps). Before the fix a negative step or job was read as counted from the end (op id -1 is the
    # last operation) and the sequences silently lost an operation, so the plan LNS returned could overlap
    # on a machine; a step or job past the end was an IndexError.
    schedule = dispatch(tiny, "spt")
    wrong = Schedule.from_operations("tiny", [o if o.key != (0, 2) else o.model_copy(update={"job": job, "step": step})
                                              for o in schedule.operations])
    with pytest.raises(InputError, match=rf"^tiny: incumbent schedule has operation \({job}, {step}\), which the "
                                         r"instance does not have$") as raised:
        Sequences.from_schedule(tiny, wrong, durations={})
    assert raised.value.where == "tiny"


def test_resequencing_keeps_positions_and_breaks_ties_by_old_start(tiny: Instance) -> None:
    seqs = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={})
    # Machine 0 runs 3, 0, 8. Ops 3 and 0 asked for the same new start keep their old order (3 started
    # first); 8 is not given and keeps its place.
    same = seqs.resequenced({3: 5, 0: 5})
    assert same is not None and same.seqs == seqs.seqs
    # Asking 0 before 3 swaps them in the two positions they held.
    swapped = seqs.resequenced({3: 5, 0: 4})
    assert swapped is not None
    assert swapped.seqs == [[0, 3, 8], [5, 1, 6], [4, 2, 7]]
    # 0 at 0-3, then job 1 (3 at 3-5, 4 at 5-6, 5 at 6-10) and 1 after 5 on machine 1 (10-12), 2 at 12.
    assert swapped.start[:6] == [0, 10, 12, 3, 5, 6]
    assert validate(tiny, swapped.to_schedule()).valid
