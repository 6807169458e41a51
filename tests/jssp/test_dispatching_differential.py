"""Giffler-Thompson against a plain restatement of it: the same schedule from every rule, on random instances
with pinned operations, downtimes, new durations and minimum starts.

The restatement scans every job at every step, as the algorithm is written in textbooks (and as
:func:`alas_argo.jssp.dispatching.dispatch` did before its heap and per-machine queues): the operation completing
first names the machine; the conflict set is the jobs whose next operation runs there and can start before that
completion, offered to the rule in the order their jobs last became ready (the random rule draws one number per
candidate, in that order); the rule's smallest key wins, ties by job.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

import pytest

from alas_argo.jssp.dispatching import Candidate, DispatchingRule, dispatch, priority_function
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

Key = tuple[int, int]


def _fit(busy: list[tuple[int, int]], t: int, d: int) -> int:
    for bs, be in sorted(busy):
        if be > t and t + max(d, 1) > bs:
            t = max(t, be)
    return t


def _restated(instance: Instance, rule: str, *, seed: int, durations: Mapping[Key, int], release: int,
              fixed: Mapping[Key, int], min_starts: Mapping[Key, int],
              downtimes: Sequence[tuple[int, int, int]]) -> Schedule:
    priority = priority_function(rule, seed=seed)
    dur = {(j, s): durations.get((j, s), d) for j, row in enumerate(instance.jobs) for s, (_, d) in enumerate(row)}
    busy: dict[int, list[tuple[int, int]]] = {m: [(s, e) for mm, s, e in downtimes if mm == m and e > s]
                                              for m in range(instance.num_machines)}
    for (j, s), start in fixed.items():
        busy[instance.machine(j, s)].append((start, start + dur[(j, s)]))
    nxt = [0] * instance.num_jobs
    job_ready = [0] * instance.num_jobs
    mach_ready = [0] * instance.num_machines
    ops: list[Operation] = []
    ready_order: list[int] = []  # jobs in the order they last became ready

    def advance(j: int) -> None:
        while nxt[j] < len(instance.jobs[j]) and (j, nxt[j]) in fixed:
            start = fixed[(j, nxt[j])]
            ops.append(Operation(job=j, step=nxt[j], machine=instance.machine(j, nxt[j]), start=start,
                                 end=start + dur[(j, nxt[j])]))
            job_ready[j] = start + dur[(j, nxt[j])]
            nxt[j] += 1
        if nxt[j] < len(instance.jobs[j]):
            ready_order.append(j)

    def est(j: int) -> int:
        m = instance.machine(j, nxt[j])
        t = max(job_ready[j], mach_ready[m], release, min_starts.get((j, nxt[j]), 0))
        return _fit(busy[m], t, dur[(j, nxt[j])])

    for j in range(instance.num_jobs):
        advance(j)
    while ready_order:
        ect_of = {j: est(j) + dur[(j, nxt[j])] for j in ready_order}
        j_star = min(ready_order, key=lambda j: (ect_of[j], j))
        m_star = instance.machine(j_star, nxt[j_star])
        conflict = [j for j in ready_order if instance.machine(j, nxt[j]) == m_star
                    and (est(j) < ect_of[j_star] or j == j_star)]
        chosen = min(conflict, key=lambda j: (priority(Candidate(
            job=j, step=nxt[j], est=est(j), duration=dur[(j, nxt[j])], ready=job_ready[j],
            work_remaining=sum(dur[(j, s)] for s in range(nxt[j], len(instance.jobs[j]))),
            ops_remaining=len(instance.jobs[j]) - nxt[j])), j))
        start = est(chosen)
        ops.append(Operation(job=chosen, step=nxt[chosen], machine=m_star, start=start,
                             end=start + dur[(chosen, nxt[chosen])]))
        job_ready[chosen] = mach_ready[m_star] = start + dur[(chosen, nxt[chosen])]
        nxt[chosen] += 1
        ready_order.remove(chosen)
        advance(chosen)
    return Schedule.from_operations(instance.name, ops)


def _case(rng: random.Random) -> tuple[Instance, dict[str, object]]:
    machines, jobs = rng.randint(1, 6), rng.randint(1, 9)
    instance = Instance(name="r", jobs=[[(m, rng.choice([0, 1, 2, 5, 10, 20, 37]))
                                         for m in rng.sample(range(machines), rng.randint(1, machines))]
                                        for _ in range(jobs)])
    keys = [(j, s) for j, row in enumerate(instance.jobs) for s in range(len(row))]
    fixed: dict[Key, int] = {}
    given: dict[str, object] = {"durations": {}, "release": 0, "fixed": fixed, "min_starts": {}, "downtimes": []}
    if rng.random() < 0.5:  # a plan in force cut at a reveal time: its started operations pinned
        plan = dispatch(instance, "spt")
        at = rng.randint(0, plan.makespan)
        fixed.update((o.key, o.start) for o in plan.operations if o.start < at)
        given["release"] = at
    if rng.random() < 0.5:
        given["downtimes"] = [(rng.randrange(instance.num_machines), s, s + rng.randint(0, 30))
                              for s in (rng.randint(0, 80) for _ in range(rng.randint(1, 3)))]
    if rng.random() < 0.3:
        # new durations of operations not started (a started one's is history: pinned, it keeps its own)
        given["durations"] = {k: rng.randint(0, 40) for k in keys if rng.random() < 0.3 and k not in fixed}
    if rng.random() < 0.3:
        given["min_starts"] = {k: rng.randint(0, 60) for k in keys if rng.random() < 0.2}
    return instance, given


@pytest.mark.parametrize("seed", range(4))
def test_every_rule_dispatches_as_the_restatement_does(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        instance, given = _case(rng)
        for rule in DispatchingRule:
            rule_seed = rng.randrange(100)
            expected = _restated(instance, rule.value, seed=rule_seed, **given)  # type: ignore[arg-type]
            got = dispatch(instance, rule, seed=rule_seed, **given)  # type: ignore[arg-type]
            assert got == expected, (instance.jobs, rule, given)
