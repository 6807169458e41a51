"""Priority dispatching rules that build active schedules with the Giffler-Thompson algorithm.

Giffler-Thompson repeatedly takes the schedulable operation with the earliest possible completion time,
collects the conflict set (operations on the same machine that could start before that completion) and lets
a priority rule pick one of them. Every schedule it produces is *active*: no operation can start earlier
without delaying another one. The rules are cheap warm starts for CP-SAT and the fallback when there is no
time for anything better.

Besides the plain instance, :func:`dispatch` understands what disrupted planning needs: changed durations,
a release time, pinned (already started) operations, per-operation earliest starts, and machine downtimes.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["Candidate", "DispatchingRule", "Priority", "best_dispatch", "dispatch", "priority_function"]

Key = tuple[int, int]


class DispatchingRule(StrEnum):
    """Priority rules choosing among the operations of a Giffler-Thompson conflict set."""

    SPT = "spt"  #: shortest processing time
    LPT = "lpt"  #: longest processing time
    MWKR = "mwkr"  #: most work remaining in the job (this operation included)
    LWKR = "lwkr"  #: least work remaining in the job
    MOPNR = "mopnr"  #: most operations remaining in the job
    LOR = "lor"  #: least operations remaining in the job
    FIFO = "fifo"  #: the operation whose job became ready first
    RANDOM = "random"  #: uniformly random, reproducible with the seed


@dataclass(frozen=True)
class Candidate:
    """What a priority rule may look at about one operation of the conflict set."""

    job: int
    step: int
    est: int  #: earliest start on its machine
    duration: int
    ready: int  #: when its job predecessor finished (or the release time)
    work_remaining: int  #: its duration plus those of the job's later operations
    ops_remaining: int  #: number of operations of the job not scheduled yet, this one included


#: Smaller key wins; ties are broken by the job index.
Priority = Callable[[Candidate], float]


def priority_function(rule: DispatchingRule | str, *, seed: int = 0) -> Priority:
    """The priority key of a rule (the factory); smaller keys are dispatched first.

    Raises:
        InputError: ``rule`` is not a known rule name.
    """
    try:
        rule = DispatchingRule(str(rule).lower())
    except ValueError:
        known = ", ".join(r.value for r in DispatchingRule)
        raise InputError(f"unknown dispatching rule {rule!r}; known: {known}") from None
    if rule is DispatchingRule.RANDOM:
        rng = random.Random(seed)
        return lambda c: rng.random()
    table: dict[DispatchingRule, Priority] = {
        DispatchingRule.SPT: lambda c: c.duration,
        DispatchingRule.LPT: lambda c: -c.duration,
        DispatchingRule.MWKR: lambda c: -c.work_remaining,
        DispatchingRule.LWKR: lambda c: c.work_remaining,
        DispatchingRule.MOPNR: lambda c: -c.ops_remaining,
        DispatchingRule.LOR: lambda c: c.ops_remaining,
        DispatchingRule.FIFO: lambda c: c.ready,
    }
    return table[rule]


def _earliest_fit(busy: list[tuple[int, int]], t: int, d: int) -> int:
    """First start >= t at which [start, start + d) overlaps none of the sorted busy intervals."""
    for bs, be in busy:
        if be <= t:
            continue
        if t + max(d, 1) <= bs:  # a zero-length operation still may not sit inside a busy window
            break
        t = max(t, be)
    return t


def _busy_calendars(instance: Instance, durations: Mapping[Key, int], fixed: Mapping[Key, int],
                    downtimes: Sequence[tuple[int, int, int]]) -> dict[int, list[tuple[int, int]]]:
    busy: dict[int, list[tuple[int, int]]] = {m: [] for m in range(instance.num_machines)}
    for m, s, e in downtimes:
        if m not in busy:
            raise InputError(f"downtime on unknown machine {m}", where={"machine": m})
        if e > s:
            busy[m].append((s, e))
    for (j, s), start in fixed.items():
        if not (0 <= j < instance.num_jobs and 0 <= s < len(instance.jobs[j])):
            raise InputError("fixed operation does not exist", where={"job": j, "step": s})
        m = instance.machine(j, s)
        busy[m].append((start, start + durations.get((j, s), instance.duration(j, s))))
    for cal in busy.values():
        cal.sort()
    return busy


def dispatch(instance: Instance, rule: DispatchingRule | str = DispatchingRule.MWKR, *,
             durations: Mapping[Key, int] | None = None, release: int = 0,
             fixed: Mapping[Key, int] | None = None, min_starts: Mapping[Key, int] | None = None,
             downtimes: Sequence[tuple[int, int, int]] = (), seed: int = 0,
             priority: Priority | None = None) -> Schedule:
    """Build an active schedule with Giffler-Thompson and a priority rule.

    Args:
        instance: The instance to schedule.
        rule: The priority rule choosing within each conflict set.
        durations: (job, step) -> duration overriding the nominal one.
        release: Every non-fixed operation starts at or after this time.
        fixed: (job, step) -> pinned start; these operations keep their start and block their machine.
        min_starts: (job, step) -> earliest start of that (non-fixed) operation.
        downtimes: (machine, start, end): nothing runs on the machine in [start, end).
        seed: Seed of the RANDOM rule.
        priority: A priority key of the caller's, used instead of ``rule`` (smaller first, ties by job).

    Returns:
        A complete schedule (makespan computed from the operations).

    Raises:
        InputError: An unknown rule, machine or operation.
        InfeasibleError: A pinned operation starts before its pinned job predecessor ends.
    """
    durations = durations or {}
    fixed = fixed or {}
    min_starts = min_starts or {}
    if priority is None:
        priority = priority_function(rule, seed=seed)
    busy = _busy_calendars(instance, durations, fixed, downtimes)
    dur = [[durations.get((j, s), d) for s, (_, d) in enumerate(ops)] for j, ops in enumerate(instance.jobs)]
    work_left = [[sum(row[s:]) for s in range(len(row))] for row in dur]
    next_step = [0] * instance.num_jobs
    job_ready = [0] * instance.num_jobs
    mach_ready = [0] * instance.num_machines
    ops: list[Operation] = []

    def place_fixed(j: int) -> None:
        # Pinned operations are history: they advance their job without competing for the machine.
        while next_step[j] < len(dur[j]) and (j, next_step[j]) in fixed:
            s = next_step[j]
            start = fixed[(j, s)]
            if start < job_ready[j]:
                raise InfeasibleError(f"pinned start {start} precedes the end {job_ready[j]} of the job's "
                                      "previous operation", where={"job": j, "step": s})
            ops.append(Operation(job=j, step=s, machine=instance.machine(j, s), start=start,
                                 end=start + dur[j][s]))
            job_ready[j] = start + dur[j][s]
            next_step[j] += 1

    def est(j: int) -> int:
        s = next_step[j]
        m = instance.machine(j, s)
        t = max(job_ready[j], mach_ready[m], release, min_starts.get((j, s), 0))
        return _earliest_fit(busy[m], t, dur[j][s])

    # Giffler-Thompson in O(log n) per step on large instances, not O(jobs): the next operations wait in a heap
    # by earliest completion (stale entries skipped), and per machine, so a step looks only at the jobs queued
    # on its machine. ``stamp`` keeps the order in which the jobs last became ready, which is the order the
    # conflict set is offered to the rule (the RANDOM rule draws one number per candidate, in that order).
    machine_of = [[m for m, _ in row] for row in instance.jobs]
    queued: list[dict[int, None]] = [{} for _ in range(instance.num_machines)]
    starts: dict[int, int] = {}
    stamp: dict[int, int] = {}
    heap: list[tuple[int, int]] = []
    stamps = itertools.count()

    def ready(j: int) -> None:
        # the job's next operation joins its machine's queue (after its pinned ones are placed)
        place_fixed(j)
        if next_step[j] < len(dur[j]):
            starts[j] = est(j)
            stamp[j] = next(stamps)
            queued[machine_of[j][next_step[j]]][j] = None
            heapq.heappush(heap, (starts[j] + dur[j][next_step[j]], j))

    for j in range(instance.num_jobs):
        ready(j)
    while starts:
        # The operation completing first defines the machine and the conflict window.
        while True:
            ect, j_star = heap[0]
            if j_star in starts and starts[j_star] + dur[j_star][next_step[j_star]] == ect:
                break
            heapq.heappop(heap)
        m_star = machine_of[j_star][next_step[j_star]]
        conflict = sorted((j for j in queued[m_star] if starts[j] < ect or j == j_star), key=stamp.__getitem__)
        chosen = min(conflict, key=lambda j: (priority(Candidate(
            job=j, step=next_step[j], est=starts[j], duration=dur[j][next_step[j]], ready=job_ready[j],
            work_remaining=work_left[j][next_step[j]], ops_remaining=len(dur[j]) - next_step[j])), j))
        s = next_step[chosen]
        start = starts[chosen]
        end = start + dur[chosen][s]
        ops.append(Operation(job=chosen, step=s, machine=m_star, start=start, end=end))
        job_ready[chosen] = end
        mach_ready[m_star] = end
        next_step[chosen] += 1
        del starts[chosen], queued[m_star][chosen]
        ready(chosen)
        for j in queued[m_star]:
            starts[j] = est(j)
            heapq.heappush(heap, (starts[j] + dur[j][next_step[j]], j))
    return Schedule.from_operations(instance.name, ops)


def best_dispatch(instance: Instance, rules: Sequence[DispatchingRule | str] | None = None, *,
                  durations: Mapping[Key, int] | None = None, release: int = 0,
                  fixed: Mapping[Key, int] | None = None, min_starts: Mapping[Key, int] | None = None,
                  downtimes: Sequence[tuple[int, int, int]] = (), seed: int = 0,
                  ) -> tuple[DispatchingRule, Schedule]:
    """Run several rules (all deterministic ones by default) and keep the shortest schedule.

    Ties go to the earlier rule in ``rules``. Arguments are those of :func:`dispatch`.
    """
    chosen = list(rules or [r for r in DispatchingRule if r is not DispatchingRule.RANDOM])
    best: tuple[DispatchingRule, Schedule] | None = None
    for rule in chosen:
        schedule = dispatch(instance, rule, durations=durations, release=release, fixed=fixed,
                            min_starts=min_starts, downtimes=downtimes, seed=seed)
        if best is None or schedule.makespan < best[1].makespan:
            best = (DispatchingRule(str(rule).lower()), schedule)
    if best is None:
        raise InputError("no dispatching rule given")
    return best
