"""Supervisor merge modes and the priority decode (also the repairer's patch)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobProposal, ProposedOperation
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.supervisor import MergeMode, Supervisor, priority_decode
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule


def _feasible(inst: Instance, sched: Schedule, downtimes: Sequence[tuple[int, int, int]] = ()) -> None:
    """A local, deliberately naive feasibility check (the real validator is tested elsewhere)."""
    by_key = {o.key: o for o in sched.operations}
    assert len(by_key) == len(sched.operations) == inst.num_operations
    for (j, s), o in by_key.items():
        assert o.machine == inst.machine(j, s)
        if s:
            assert o.start >= by_key[(j, s - 1)].end
    for m in range(inst.num_machines):
        spans = sorted([(o.start, o.end) for o in sched.operations if o.machine == m]
                       + [(a, b) for mm, a, b in downtimes if mm == m])
        assert all(e1 <= s2 for (_, e1), (s2, _) in itertools.pairwise(spans))


def test_priority_merge_is_feasible_union_is_literal(ft06: Instance) -> None:
    proposals = [HeuristicPlanner().propose(c) for c in build_job_contexts(ft06)]
    merged = Supervisor(MergeMode.PRIORITY).merge(ft06, proposals)
    _feasible(ft06, merged)
    union = Supervisor("union").merge(ft06, proposals)
    literal = {(o.job, o.step, o.start) for p in proposals for o in p.operations}
    assert {(o.job, o.step, o.start) for o in union.operations} == literal


def test_priority_decode_survives_garbage(ft06: Instance) -> None:
    rng = random.Random(7)
    garbage = [JobProposal(job=j, backend="x", operations=[
        ProposedOperation(job=j, step=s, machine=rng.randrange(9), start=rng.randrange(-50, 50), end=rng.randrange(9))
        for s in rng.sample(range(6), 4)] * 2) for j in range(6)]  # wrong machines, duplicates, missing steps
    merged = Supervisor().merge(ft06, garbage)
    _feasible(ft06, merged)


def test_decode_respects_fixed_release_downtime_and_min_starts(tiny: Instance) -> None:
    fixed = {(0, 0): (0, 3)}
    downtimes = [(1, 4, 10)]
    sched = priority_decode(tiny, {}, release=2, fixed=fixed, downtimes=downtimes, min_starts={(2, 0): 12},
                            durations={(1, 2): 6})
    _feasible(tiny, Schedule.model_validate(sched.model_dump()), downtimes)
    ops = sched.by_key()
    assert (ops[(0, 0)].start, ops[(0, 0)].end) == (0, 3)
    assert all(o.start >= 2 for k, o in ops.items() if k != (0, 0))
    assert ops[(2, 0)].start >= 12
    assert ops[(1, 2)].duration == 6


def test_priorities_order_machine_sequences(tiny: Instance) -> None:
    # job 1 before job 0 on machine 0 when its priority is lower
    a = priority_decode(tiny, {(0, 0): 5, (1, 0): 1}).by_key()
    assert a[(1, 0)].start < a[(0, 0)].start
    b = priority_decode(tiny, {(0, 0): 1, (1, 0): 5}).by_key()
    assert b[(0, 0)].start < b[(1, 0)].start
