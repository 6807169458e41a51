"""Hypothesis strategies: random instances, random valid schedules, random valid disrupted schedules.

Schedules are built here, in test code, by decoding a random operation permutation (each job index
repeated once per operation) with optional random idle time, so the validator is checked against an
independent construction and not against any planner of the package.
"""

from __future__ import annotations

from hypothesis import strategies as st

from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["decode", "disrupted_cases", "instances", "plan_at", "repair_decode", "solved_instances"]

Key = tuple[int, int]


def plan_at(instance: Instance, starts: dict[Key, int]) -> Schedule:
    """A hand-made plan: each operation given a start, on its machine for its nominal duration."""
    return Schedule.from_operations(instance.name, [
        Operation(job=j, step=s, machine=instance.machine(j, s), start=t, end=t + instance.duration(j, s))
        for (j, s), t in starts.items()])


@st.composite
def instances(draw: st.DrawFn, *, min_jobs: int = 1, max_jobs: int = 5, min_machines: int = 1,
              max_machines: int = 5, max_duration: int = 12, full: bool = False) -> Instance:
    """A random instance: each job visits a random ordering of (a prefix of a permutation of) the machines."""
    n_machines = draw(st.integers(min_machines, max_machines))
    jobs = []
    for _ in range(draw(st.integers(min_jobs, max_jobs))):
        perm = draw(st.permutations(range(n_machines)))
        k = n_machines if full else draw(st.integers(1, n_machines))
        jobs.append([(m, draw(st.integers(1, max_duration))) for m in perm[:k]])
    return Instance(name="random", jobs=jobs)


def decode(instance: Instance, order: list[int], delays: list[int] | None = None) -> Schedule:
    """Semi-active decoding of a job-repetition sequence, plus optional idle time before each operation."""
    job_ready = [0] * instance.num_jobs
    machine_ready = [0] * instance.num_machines
    next_step = [0] * instance.num_jobs
    ops = []
    for i, j in enumerate(order):
        s = next_step[j]
        next_step[j] += 1
        m, d = instance.jobs[j][s]
        start = max(job_ready[j], machine_ready[m]) + (delays[i] if delays else 0)
        job_ready[j] = machine_ready[m] = start + d
        ops.append(Operation(job=j, step=s, machine=m, start=start, end=start + d))
    return Schedule.from_operations(instance.name, ops)


@st.composite
def solved_instances(draw: st.DrawFn, *, idle: bool = True, **kwargs: int | bool) -> tuple[Instance, Schedule]:
    """A random instance with a random valid schedule (semi-active, or with random idle time)."""
    instance = draw(instances(**kwargs))  # type: ignore[arg-type]
    seq = [j for j, ops in enumerate(instance.jobs) for _ in ops]
    order = draw(st.permutations(seq))
    delays = draw(st.lists(st.integers(0, 3), min_size=len(seq), max_size=len(seq))) if idle else None
    return instance, decode(instance, list(order), delays)


def _overlaps(start: int, end: int, lo: int, hi: int) -> bool:
    return start < hi and lo < end and end > start


def repair_decode(instance: Instance, baseline: Schedule, disruption: Disruption,
                  delays: list[int] | None = None) -> Schedule:
    """A valid schedule after ``disruption``, built straight from docs/contracts.md.

    Started, uninterrupted operations stay put (with any changed duration, in place); the rest are placed in
    baseline start order as early as the job, the machine, the reveal time, the restart time and the
    downtimes allow. Feasible whenever breakdowns start at or after the reveal time and duration changes
    hit only operations still running or pending (which :func:`disrupted_cases` guarantees).
    """
    t = disruption.time
    changes = disruption.duration_changes
    downs = [(b.machine, b.start, b.end) for b in disruption.breakdowns if b.duration > 0]
    base = baseline.by_key()
    placed: dict[Key, tuple[int, int]] = {}
    release: dict[Key, int] = {}
    for key, o in base.items():
        d = changes.get(key, instance.duration(*key))
        if o.start >= t:
            release[key] = t
            continue
        hits = [hi for m, lo, hi in downs if m == instance.machine(*key) and _overlaps(o.start, o.start + d, lo, hi)]
        if hits:
            release[key] = max(t, *hits)
        else:
            placed[key] = (o.start, o.start + d)
    machine_ready = [0] * instance.num_machines
    for (j, s), (_, end) in placed.items():
        m = instance.machine(j, s)
        machine_ready[m] = max(machine_ready[m], end)
    for i, key in enumerate(sorted(release, key=lambda k: (base[k].start, k))):
        j, s = key
        m = instance.machine(j, s)
        d = changes.get(key, instance.duration(j, s))
        start = max(release[key], machine_ready[m], placed[(j, s - 1)][1] if s else 0)
        start += delays[i % len(delays)] if delays else 0
        while any(mm == m and _overlaps(start, start + d, lo, hi) for mm, lo, hi in downs):
            start = max(hi for mm, lo, hi in downs if mm == m and _overlaps(start, start + d, lo, hi))
        placed[key] = (start, start + d)
        machine_ready[m] = start + d
    ops = [Operation(job=j, step=s, machine=instance.machine(j, s), start=a, end=b)
           for (j, s), (a, b) in placed.items()]
    return Schedule.from_operations(instance.name, ops)


@st.composite
def disrupted_cases(draw: st.DrawFn, *, max_jobs: int = 5, max_machines: int = 4,
                    ) -> tuple[Instance, Schedule, Disruption, Schedule]:
    """(instance, baseline, disruption, valid repaired schedule) with breakdowns and duration changes."""
    instance, baseline = draw(solved_instances(max_jobs=max_jobs, max_machines=max_machines, min_jobs=2))
    t = draw(st.integers(0, baseline.makespan))
    events: list[MachineBreakdown | DurationChange] = []
    # Favour machines busy at the reveal time: that is where interruptions happen.
    busy = sorted({o.machine for o in baseline.operations if o.start < t < o.end})
    machines = st.sampled_from(busy) | st.integers(0, instance.num_machines - 1) if busy \
        else st.integers(0, instance.num_machines - 1)
    for _ in range(draw(st.integers(0, 2))):
        events.append(MachineBreakdown(machine=draw(machines),
                                       start=t + draw(st.integers(0, 5)), duration=draw(st.integers(0, 8))))
    live = sorted(o.key for o in baseline.operations if o.end > t)
    if live:
        for key in draw(st.lists(st.sampled_from(live), max_size=3, unique=True)):
            events.append(DurationChange(job=key[0], step=key[1], duration=draw(st.integers(0, 15))))
    disruption = Disruption(time=t, events=events)
    delays = draw(st.lists(st.integers(0, 3), min_size=1, max_size=5))
    return instance, baseline, disruption, repair_decode(instance, baseline, disruption, delays)
