"""The validator against a plain re-statement of docs/contracts.md's rules, on repaired plans and on plans one
operation off them: random small instances (zero-length operations included), breakdowns anywhere (overlapping,
touching, before and after the reveal) and duration changes. Both must give the same verdict on every plan."""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import pairwise

import pytest

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DisruptionEvent, DurationChange, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import validate


def _valid_by_the_contract(inst: Instance, plan: Schedule, d: Disruption, base: Schedule) -> bool:
    """docs/contracts.md, read literally: every operation once, on its machine, for its (changed) duration, after
    its job predecessor, alone on its machine, never in a downtime; a started one at its planned start unless a
    downtime hit it in place (then from scratch at or after the latest such downtime's end and the reveal); an
    unstarted one at or after the reveal."""
    changes = d.duration_changes
    downs = [(b.machine, b.start, b.start + b.duration) for b in d.breakdowns if b.duration > 0]
    ops: dict[tuple[int, int], Operation] = {}
    for o in plan.operations:
        if (o.job, o.step) in ops:
            return False
        ops[(o.job, o.step)] = o
    if set(ops) != {(j, s) for j, job in enumerate(inst.jobs) for s in range(len(job))}:
        return False
    planned = base.starts()
    for k, o in ops.items():
        machine, nominal = inst.jobs[k[0]][k[1]]
        duration = changes.get(k, nominal)
        if o.machine != machine or o.end - o.start != duration or o.start < 0:
            return False
        p = planned[k]
        if p < d.time:
            hits = [hi for m, lo, hi in downs if m == machine and duration > 0 and p < hi and lo < p + duration]
            if (o.start < max([*hits, d.time])) if hits else (o.start != p):
                return False
        elif o.start < d.time:
            return False
        if k[1] > 0 and ops[(k[0], k[1] - 1)].end > o.start:
            return False
        if o.end > o.start and any(m == machine and o.start < hi and lo < o.end for m, lo, hi in downs):
            return False
    busy: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for o in ops.values():
        if o.end > o.start:
            busy[o.machine].append((o.start, o.end))
    return all(c >= b for intervals in busy.values() for (_, b), (c, _) in pairwise(sorted(intervals)))


def _case(rng: random.Random) -> tuple[Instance, Schedule, Disruption] | None:
    machines, jobs = rng.randint(2, 4), rng.randint(2, 5)
    inst = Instance(name="random", jobs=[[(m, rng.randint(0, 9)) for m in rng.sample(range(machines), machines)]
                                         for _ in range(jobs)])
    plan = dispatch(inst, "mwkr")
    time = rng.randint(0, plan.makespan)
    events: list[DisruptionEvent] = []
    for _ in range(rng.randint(0, 3)):
        start, duration = rng.randint(max(0, time - 5), plan.makespan + 5), rng.randint(1, 12)
        if start + duration > time:  # a breakdown over before the reveal is refused as input
            events.append(MachineBreakdown(machine=rng.randrange(machines), start=start, duration=duration))
    if rng.random() < 0.5:
        events.append(DurationChange(job=rng.randrange(jobs), step=rng.randrange(machines),
                                     duration=rng.randint(0, 15)))
    d = Disruption(time=time, events=events)
    try:
        ExecutionState.at(inst, plan, d)
    except (InputError, InfeasibleError):  # a history no plan can honour: nothing to judge
        return None
    return inst, plan, d


@pytest.mark.parametrize("seed", range(4))
def test_the_validator_says_what_the_contract_says(seed: int) -> None:
    rng = random.Random(seed)
    verdicts = {True: 0, False: 0}
    for _ in range(15):
        case = _case(rng)
        if case is None:
            continue
        inst, plan, d = case
        plans = [repair(inst, plan, d, method, budget=0.3, workers=1).schedule for method in ("aor", "lcrp")]
        for _ in range(6):  # one operation a few units off a repaired plan
            ops = list(rng.choice(plans).operations)
            i = rng.randrange(len(ops))
            o = ops[i]
            start = max(0, o.start + rng.choice([-3, -2, -1, 1, 2, 3]))
            ops[i] = Operation(job=o.job, step=o.step, machine=o.machine, start=start, end=start + o.duration)
            plans.append(Schedule.from_operations(inst.name, ops))
        for candidate in plans:
            verdict = validate(inst, candidate, disruption=d, baseline=plan).valid
            assert verdict == _valid_by_the_contract(inst, candidate, d, plan), (inst.jobs, plan.starts(), d,
                                                                                 candidate.starts())
            verdicts[verdict] += 1
    assert verdicts[True] and verdicts[False]  # both kinds of plan were judged
