"""Edges of the supervisor's merge and of the priority decode (also the repairer's patch): exact starts where
release, a minimum start, a gap that fits exactly, empty windows and zero-length operations decide; several
started operations of one job; overlapping downtimes (two reports of one outage); and that ``merge`` in
priority mode reads each proposal's start as its priority (the first of duplicates) and hands every bound on."""

from __future__ import annotations

import random
from collections.abc import Sequence

from alas_argo.agents.contracts import JobProposal, ProposedOperation
from alas_argo.agents.roles import RepairerRole
from alas_argo.agents.supervisor import MergeMode, Supervisor, priority_decode
from alas_argo.jssp.disruption import MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

#: One operation of length 2 on machine 0.
SOLO = Instance(name="solo", jobs=[[(0, 2)]])


def _spans(schedule: Schedule) -> dict[tuple[int, int], tuple[int, int]]:
    return {k: (o.start, o.end) for k, o in schedule.by_key().items()}


def _proposal(job: int, *ops: tuple[int, int, int, int]) -> JobProposal:
    """A proposal of ``job`` with (step, machine, start, end) per operation."""
    return JobProposal(job=job, backend="test", operations=[
        ProposedOperation(job=job, step=s, machine=m, start=a, end=b) for s, m, a, b in ops])


class _ReadAtMostOnce(dict[tuple[int, int], tuple[int, int]]):
    """Started operations that fail the test when one is read twice: a decode that never advances past a started
    operation would otherwise append it forever (and eat the machine's memory) instead of failing."""

    def __init__(self, items: dict[tuple[int, int], tuple[int, int]]) -> None:
        super().__init__(items)
        self.reads: dict[tuple[int, int], int] = {}

    def __getitem__(self, key: tuple[int, int]) -> tuple[int, int]:
        self.reads[key] = self.reads.get(key, 0) + 1
        assert self.reads[key] <= 1, f"started operation {key} read {self.reads[key]} times"
        return super().__getitem__(key)


# -- the decode's bounds, each binding ------------------------------------------------------------------------

def test_release_is_the_earliest_start_of_every_operation(tiny: Instance) -> None:
    # Without a release the first operations start at 0; with release 5 the same plan moves by exactly 5.
    at_zero = _spans(priority_decode(tiny, {}))
    released = _spans(priority_decode(tiny, {}, release=5))
    assert min(a for a, _ in at_zero.values()) == 0
    assert released == {k: (a + 5, b + 5) for k, (a, b) in at_zero.items()}


def test_a_minimum_start_holds_back_exactly_that_operation_and_its_successors(tiny: Instance) -> None:
    plan = _spans(priority_decode(tiny, {}, min_starts={(0, 1): 20}))
    assert plan[(0, 0)] == (0, 3)          # its predecessor is not held back
    assert plan[(0, 1)] == (20, 22)        # the minimum start, not the predecessor's end (3)
    assert plan[(0, 2)] == (22, 24)        # its successor follows it
    assert plan[(2, 0)] == (0, 4)          # another job takes the time it leaves


def test_an_operation_takes_a_gap_it_fits_exactly() -> None:
    # Machine 0 is down over [0, 3) and [5, 8): the gap [3, 5) holds the 2-long operation exactly.
    plan = priority_decode(SOLO, {}, downtimes=[(0, 0, 3), (0, 5, 8)])
    assert _spans(plan) == {(0, 0): (3, 5)}


def test_a_gap_one_short_is_skipped() -> None:
    plan = priority_decode(SOLO, {}, downtimes=[(0, 0, 3), (0, 4, 8)])
    assert _spans(plan) == {(0, 0): (8, 10)}


def test_an_empty_downtime_blocks_nothing() -> None:
    # [1, 1) is empty (the validator's zero-length intervals overlap nothing): the operation may run over it.
    assert _spans(priority_decode(SOLO, {}, downtimes=[(0, 1, 1)])) == {(0, 0): (0, 2)}


def test_a_zero_length_operation_occupies_no_time_on_its_machine() -> None:
    # Job 0's second operation takes no time on machine 0 at 4; job 1's 6-long operation, decoded after it,
    # still starts at 0 on machine 0, across that instant.
    inst = Instance(name="zero", jobs=[[(1, 4), (0, 0)], [(0, 6)]])
    plan = _spans(priority_decode(inst, {(0, 0): 0, (0, 1): 1, (1, 0): 2}))
    assert plan == {(0, 0): (0, 4), (0, 1): (4, 4), (1, 0): (0, 6)}


def test_a_zero_duration_override_occupies_no_time_either(tiny: Instance) -> None:
    plan = _spans(priority_decode(tiny, {(0, 0): 0, (1, 0): 1}, durations={(0, 0): 0}))
    assert plan[(0, 0)] == (0, 0)
    assert plan[(1, 0)] == (0, 2)


def test_a_started_zero_length_operation_occupies_no_time_either() -> None:
    # Pinned at [2, 2) on machine 0: job 1's 6-long operation may still start at 0, across that instant (it
    # waited until 2, where a decoded zero-length operation or an empty downtime would not have held it).
    inst = Instance(name="zero", jobs=[[(0, 0)], [(0, 6)]])
    plan = _spans(priority_decode(inst, {(1, 0): 0}, fixed={(0, 0): (2, 2)}))
    assert plan == {(0, 0): (2, 2), (1, 0): (0, 6)}


def test_several_started_operations_of_one_job_are_each_kept_once(tiny: Instance) -> None:
    fixed = _ReadAtMostOnce({(0, 0): (0, 3), (0, 1): (3, 5)})
    plan = priority_decode(tiny, {}, fixed=fixed)
    assert len(plan.operations) == tiny.num_operations
    spans = _spans(plan)
    assert spans[(0, 0)] == (0, 3) and spans[(0, 1)] == (3, 5)
    assert spans[(0, 2)] == (5, 7)         # the rest of the job follows the last started one


def test_a_started_operation_after_a_decoded_one_is_kept_once(tiny: Instance) -> None:
    # Only step 1 of job 0 is pinned: step 0 is decoded, then the pinned step is taken as it is.
    fixed = _ReadAtMostOnce({(0, 1): (10, 12)})
    spans = _spans(priority_decode(tiny, {}, fixed=fixed))
    assert spans[(0, 0)] == (0, 3)
    assert spans[(0, 1)] == (10, 12)
    assert spans[(0, 2)] == (12, 14)


# -- overlapping busy time (the bug: operations were placed inside the first of two overlapping windows) -------

def _outside(spans: dict[tuple[int, int], tuple[int, int]], machine_of: dict[tuple[int, int], int],
             windows: Sequence[tuple[int, int, int]]) -> None:
    for k, (a, b) in spans.items():
        for m, lo, hi in windows:
            assert not (machine_of[k] == m and a < hi and lo < b), f"{k} at [{a}, {b}) inside downtime [{lo}, {hi})"


def test_overlapping_downtimes_are_avoided_in_either_order() -> None:
    # Two reports of one outage: [0, 10) and [2, 3) on machine 0. Released at 5, the operation used to be placed
    # at 5 (inside the first window): only the window starting last before 5 was looked at.
    for windows in ([(0, 0, 10), (0, 2, 3)], [(0, 2, 3), (0, 0, 10)]):
        assert _spans(priority_decode(SOLO, {}, release=5, downtimes=windows)) == {(0, 0): (10, 12)}, windows


def test_a_chain_of_overlapping_downtimes_is_one_outage() -> None:
    windows = [(0, 7, 12), (0, 0, 4), (0, 3, 8), (0, 14, 20)]
    assert _spans(priority_decode(SOLO, {}, release=5, downtimes=windows)) == {(0, 0): (12, 14)}
    assert _spans(priority_decode(SOLO, {}, release=13, downtimes=windows)) == {(0, 0): (20, 22)}


def test_overlapping_breakdowns_through_the_repairers_patch(tiny: Instance) -> None:
    # The patch with a disruption's breakdowns as given (two overlapping reports for machine 0): no operation of
    # the patched plan runs while machine 0 is down.
    breakdowns = [MachineBreakdown(machine=0, start=0, duration=12), MachineBreakdown(machine=0, start=4, duration=2)]
    windows = [(b.machine, b.start, b.end) for b in breakdowns]
    draft = Schedule.from_operations("tiny", [Operation(job=j, step=s, machine=m, start=0, end=d)
                                              for j, job in enumerate(tiny.jobs) for s, (m, d) in enumerate(job)])
    patched = RepairerRole().patch(tiny, draft, release=6, downtimes=windows)
    spans = _spans(patched)
    assert len(spans) == tiny.num_operations
    _outside(spans, {(j, s): m for j, job in enumerate(tiny.jobs) for s, (m, _) in enumerate(job)}, windows)
    assert min(a for k, (a, _) in spans.items() if tiny.machine(*k) == 0) == 12


def test_a_started_operation_overlapping_a_downtime_keeps_others_out_of_both(tiny: Instance) -> None:
    # Job 1's first operation is pinned at [0, 9) on machine 0, which is also down over [2, 4): job 0's first
    # operation (machine 0), released at 5, waits for 9.
    spans = _spans(priority_decode(tiny, {}, release=5, fixed={(1, 0): (0, 9)}, downtimes=[(0, 2, 4)]))
    assert spans[(1, 0)] == (0, 9)
    assert spans[(0, 0)] == (9, 12)


def test_the_earliest_free_start_among_random_overlapping_windows() -> None:
    # Against a brute force: the first t at or after the release where [t, t + 2) meets no non-empty window.
    rng = random.Random(11)
    for _ in range(300):
        windows = []
        for _ in range(rng.randrange(1, 7)):
            lo = rng.randrange(0, 30)
            windows.append((0, lo, lo + rng.randrange(0, 9)))
        release = rng.randrange(0, 35)
        expected = next(t for t in range(release, 100)
                        if not any(lo < hi and t < hi and lo < t + 2 for _, lo, hi in windows))
        plan = priority_decode(SOLO, {}, release=release, downtimes=windows)
        assert _spans(plan) == {(0, 0): (expected, expected + 2)}, (windows, release)


# -- merge in priority mode -------------------------------------------------------------------------------------

def test_merge_orders_a_machine_by_the_proposed_starts(tiny: Instance) -> None:
    # Job 1 proposes machine 0 first (start 1), job 0 after it (start 5): the merged plan keeps that order.
    proposals = [_proposal(0, (0, 0, 5, 8)), _proposal(1, (0, 0, 1, 3))]
    spans = _spans(Supervisor(MergeMode.PRIORITY).merge(tiny, proposals))
    assert spans[(1, 0)] == (0, 2)
    assert spans[(0, 0)] == (2, 5)
    flipped = [_proposal(0, (0, 0, 1, 4)), _proposal(1, (0, 0, 5, 7))]
    spans = _spans(Supervisor(MergeMode.PRIORITY).merge(tiny, flipped))
    assert spans[(0, 0)] == (0, 3)
    assert spans[(1, 0)] == (3, 5)


def test_merge_takes_the_first_of_duplicate_proposals(tiny: Instance) -> None:
    # Job 0 proposes step 0 twice, at 9 and then at 0: the first (9) is its priority, so job 1 (at 5) goes first.
    proposals = [_proposal(0, (0, 0, 9, 12), (0, 0, 0, 3)), _proposal(1, (0, 0, 5, 7))]
    spans = _spans(Supervisor().merge(tiny, proposals))
    assert spans[(1, 0)] == (0, 2)
    assert spans[(0, 0)] == (2, 5)


def test_merge_hands_every_bound_to_the_decode(tiny: Instance) -> None:
    proposals = [_proposal(j, *((s, m, 0, d) for s, (m, d) in enumerate(job))) for j, job in enumerate(tiny.jobs)]
    bounds = {"release": 4, "fixed": {(2, 0): (0, 4)}, "downtimes": [(0, 4, 7)], "durations": {(0, 0): 5}}
    merged = Supervisor(MergeMode.PRIORITY).merge(tiny, proposals, **bounds)  # type: ignore[arg-type]
    priorities = {(j, s): 0.0 for j, job in enumerate(tiny.jobs) for s in range(len(job))}
    assert merged == priority_decode(tiny, priorities, **bounds)  # type: ignore[arg-type]
    spans = _spans(merged)
    assert spans[(2, 0)] == (0, 4)                                     # the started operation stays
    assert spans[(0, 0)] == (7, 12)                                    # after the downtime, 5 long
    assert min(a for k, (a, _) in spans.items() if k != (2, 0)) == 4   # nothing else before the release


def test_merge_without_a_release_starts_at_zero(tiny: Instance) -> None:
    proposals = [_proposal(0, (0, 0, 0, 3)), _proposal(2, (0, 1, 0, 4))]
    spans = _spans(Supervisor().merge(tiny, proposals))
    assert spans[(0, 0)] == (0, 3) and spans[(2, 0)] == (0, 4)
