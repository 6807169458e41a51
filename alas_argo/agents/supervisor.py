"""The supervisor: merges the job agents' proposals into one schedule.

Two merge modes:

- ``union`` takes every proposed operation literally. Conflicts between agents (they never saw each other)
  stay in the plan for the validator to find and the repairer to fix; this is how LLM proposals are merged.
- ``priority`` treats the proposed start times as priorities and builds a feasible schedule from them: a
  list schedule that places operations in order of proposed start (job order enforced), each at the earliest
  gap of its machine that fits after its job predecessor, around downtimes and started operations. Whatever
  the proposals say (even garbage), the result is feasible: the instance's machines and durations are used,
  missing operations are added after their predecessors, duplicates are dropped.

The same ``priority`` decode is the repairer's *patch* for structurally faulty plans.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from alas_argo.agents.contracts import JobProposal, ProposedOperation
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["MergeMode", "Supervisor", "priority_decode"]


class MergeMode(StrEnum):
    """How proposals become a schedule."""

    UNION = "union"
    PRIORITY = "priority"


class _Calendar:
    """Busy intervals of one machine, kept sorted and disjoint, with earliest-gap search."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def reserve(self, start: int, end: int) -> None:
        # Overlapping reservations (two reports of one outage, a started operation inside a downtime) are merged
        # into one: `earliest` looks back only to the last interval starting at or before its time, which is
        # right only if no earlier interval reaches past that one.
        i = bisect.bisect_left(self.starts, start)
        if i and self.ends[i - 1] > start:
            i -= 1
            start, end = self.starts[i], max(end, self.ends[i])
            del self.starts[i], self.ends[i]
        while i < len(self.starts) and self.starts[i] < end:
            end = max(end, self.ends[i])
            del self.starts[i], self.ends[i]
        self.starts.insert(i, start)
        self.ends.insert(i, end)

    def earliest(self, ready: int, duration: int) -> int:
        t = ready
        i = max(0, bisect.bisect_right(self.starts, t) - 1)
        while i < len(self.starts):
            s, e = self.starts[i], self.ends[i]
            if e <= t:
                i += 1
                continue
            if s >= t + duration:
                break
            t = e
            i += 1
        return t


def priority_decode(
    instance: Instance,
    priorities: Mapping[tuple[int, int], float],
    *,
    release: int = 0,
    fixed: Mapping[tuple[int, int], tuple[int, int]] | None = None,
    min_starts: Mapping[tuple[int, int], int] | None = None,
    downtimes: Sequence[tuple[int, int, int]] = (),
    durations: Mapping[tuple[int, int], int] | None = None,
) -> Schedule:
    """A feasible schedule that follows ``priorities`` (lower first) as closely as job order allows.

    Args:
        instance: The instance (its machines and durations are authoritative).
        priorities: Per (job, step), a priority such as a proposed start; missing keys go last in their job.
        release: Non-fixed operations start at or after this time.
        fixed: Operations pinned at (start, end) — started work that must not move.
        min_starts: Per-operation earliest starts (an interrupted operation restarts after the downtime).
        downtimes: (machine, start, end) windows in which nothing runs.
        durations: Durations overriding the nominal ones.
    """
    fixed = fixed or {}
    min_starts = min_starts or {}
    durations = durations or {}
    calendars = {m: _Calendar() for m in range(instance.num_machines)}
    for m, s, e in downtimes:
        if e > s:
            calendars[m].reserve(s, e)
    for (j, s), (start, end) in fixed.items():
        if end > start:  # a started zero-length operation occupies no time, as a decoded one and a downtime
            calendars[instance.machine(j, s)].reserve(start, end)
    ops: list[Operation] = []
    job_ready = [0] * instance.num_jobs
    next_step = [0] * instance.num_jobs
    heap: list[tuple[float, int, int]] = []

    def push(j: int) -> None:
        while next_step[j] < len(instance.jobs[j]) and (j, next_step[j]) in fixed:
            start, end = fixed[(j, next_step[j])]
            ops.append(Operation(job=j, step=next_step[j], machine=instance.machine(j, next_step[j]),
                                 start=start, end=end))
            job_ready[j] = max(job_ready[j], end)
            next_step[j] += 1
        if next_step[j] < len(instance.jobs[j]):
            s = next_step[j]
            heapq.heappush(heap, (priorities.get((j, s), float("inf")), j, s))

    for j in range(instance.num_jobs):
        push(j)
    while heap:
        _, j, s = heapq.heappop(heap)
        m = instance.machine(j, s)
        d = durations.get((j, s), instance.duration(j, s))
        ready = max(job_ready[j], release, min_starts.get((j, s), 0))
        start = calendars[m].earliest(ready, d)
        if d > 0:
            calendars[m].reserve(start, start + d)
        ops.append(Operation(job=j, step=s, machine=m, start=start, end=start + d))
        job_ready[j] = start + d
        next_step[j] += 1
        push(j)
    return Schedule.from_operations(instance.name, ops)


class Supervisor:
    """Merges proposals; see the module docstring for the two modes."""

    def __init__(self, mode: MergeMode | str = MergeMode.PRIORITY) -> None:
        self.mode = MergeMode(mode)

    def merge(
        self,
        instance: Instance,
        proposals: Iterable[JobProposal],
        *,
        release: int = 0,
        fixed: Mapping[tuple[int, int], tuple[int, int]] | None = None,
        downtimes: Sequence[tuple[int, int, int]] = (),
        durations: Mapping[tuple[int, int], int] | None = None,
    ) -> Schedule:
        """One schedule from all proposals."""
        proposed: list[ProposedOperation] = [op for p in proposals for op in p.operations]
        if self.mode is MergeMode.UNION:
            ops = [Operation(job=o.job, step=o.step, machine=o.machine, start=o.start, end=o.end) for o in proposed]
            return Schedule.from_operations(instance.name, ops)
        priorities: dict[tuple[int, int], float] = {}
        for o in proposed:
            priorities.setdefault((o.job, o.step), float(o.start))
        return priority_decode(instance, priorities, release=release, fixed=fixed, downtimes=downtimes,
                               durations=durations)
