"""Large-neighbourhood search with CP-SAT: improve a schedule by re-optimizing one neighbourhood at a time.

Each move relaxes a set of operations (a time window of the incumbent, a few machines or a few jobs inside
such a window) and hands CP-SAT a subproblem in which

- operations that end before the neighbourhood begins are pinned through ``fixed`` (constants),
- the other operations outside the neighbourhood keep their machine order (``precedences``) but may slide,
  so that a gain inside the window propagates to the makespan,
- the incumbent is the hint, so a move never makes the schedule worse.

The neighbourhood size adapts: it grows after subproblems solved to optimality and shrinks after ones that
ran out of time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from itertools import pairwise

from alas_argo.errors import InfeasibleError, NoSolutionError
from alas_argo.jssp.cpsat import SolveRequest, SolveResult, SolveStatus, optimize
from alas_argo.jssp.modeling import Key, ProgressEvent
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["LnsConfig", "Neighbourhood", "improve"]


class Neighbourhood(StrEnum):
    """Ways to pick the operations a move relaxes."""

    WINDOW = "window"  #: every operation starting in a time window of the incumbent
    CRITICAL = "critical"  #: a time window centred on a random operation of a critical path
    MACHINES = "machines"  #: the operations of a few machines inside a wider window
    JOBS = "jobs"  #: the operations of a few jobs inside a wider window


@dataclass(frozen=True)
class LnsConfig:
    """Tuning of :func:`improve`.

    Attributes:
        initial_size: Operations relaxed by the first move.
        min_size: Smallest neighbourhood.
        max_size: Largest neighbourhood.
        move_time: Seconds per subproblem.
        grow: Factor applied to the size after a subproblem solved to optimality.
        shrink: Factor applied after a subproblem that ran out of time.
    """

    initial_size: int = 80
    min_size: int = 20
    max_size: int = 400
    move_time: float = 1.5
    grow: float = 1.15
    shrink: float = 0.8


def _pick(schedule: Schedule, kind: Neighbourhood, size: int, num_machines: int, num_jobs: int,
          rng: random.Random) -> set[Key]:
    ops = schedule.operations  # sorted by start
    n = len(ops)
    if kind is Neighbourhood.CRITICAL:
        critical = _critical_positions(ops)
        centre = rng.choice(critical) if critical else rng.randrange(n)
        first = min(max(0, centre - size // 2), max(0, n - size))
        return {o.key for o in ops[first:first + size]}
    if kind is Neighbourhood.WINDOW:
        # Bias towards the end, where the makespan is decided, without ignoring the beginning.
        first = rng.randrange(max(1, n - size + 1)) if rng.random() < 0.6 else max(0, n - size)
        return {o.key for o in ops[first:first + size]}
    span = min(n, size * 3)
    first = rng.randrange(max(1, n - span + 1))
    window = ops[first:first + span]
    if kind is Neighbourhood.MACHINES:
        chosen_m = set(rng.sample(range(num_machines), max(2, min(num_machines, num_machines // 3))))
        picked = [o for o in window if o.machine in chosen_m]
    else:
        chosen_j = set(rng.sample(range(num_jobs), max(2, min(num_jobs, num_jobs // 3))))
        picked = [o for o in window if o.job in chosen_j]
    return {o.key for o in picked[:size]}


def _critical_positions(ops: list[Operation]) -> list[int]:
    """Indices (in start order) of operations on one critical path: walk back from the last end through
    tight job or machine predecessors."""
    by_end: dict[tuple[int, int], int] = {}
    job_prev: dict[tuple[int, int], int] = {}
    last_on_machine: dict[int, int] = {}
    mach_prev: dict[int, int] = {}
    for i, o in enumerate(ops):
        by_end[(o.job, o.step)] = i
        if o.machine in last_on_machine:
            mach_prev[i] = last_on_machine[o.machine]
        last_on_machine[o.machine] = i
    for o in ops:
        if (o.job, o.step - 1) in by_end:
            job_prev[(o.job, o.step)] = by_end[(o.job, o.step - 1)]
    i = max(range(len(ops)), key=lambda k: ops[k].end)
    path = [i]
    while ops[i].start > 0:
        o = ops[i]
        jp = job_prev.get(o.key)
        mp = mach_prev.get(i)
        if jp is not None and ops[jp].end == o.start:
            i = jp
        elif mp is not None and ops[mp].end == o.start:
            i = mp
        else:
            break
        path.append(i)
    return path


def compact(request: SolveRequest, schedule: Schedule) -> Schedule:
    """Left-shift every non-pinned operation as far as its job and machine predecessors (in the
    schedule's own order), the release, its minimum start and the downtimes allow (semi-active)."""
    job_end: dict[int, int] = {}
    mach_end: dict[int, int] = {}
    downs: dict[int, list[tuple[int, int]]] = {}
    for m, s, e in request.downtimes:
        downs.setdefault(m, []).append((s, e))
    out = []
    for o in schedule.operations:  # start order is a topological order of both precedences
        d = o.end - o.start
        if o.key in request.fixed:
            start = o.start
        else:
            start = max(job_end.get(o.job, 0), mach_end.get(o.machine, 0), request.release,
                        request.min_starts.get(o.key, 0))
            for ds, de in sorted(downs.get(o.machine, [])):
                if start < de and ds < start + max(d, 1):
                    start = de
        out.append(o.model_copy(update={"start": start, "end": start + d}))
        job_end[o.job] = start + d
        mach_end[o.machine] = max(mach_end.get(o.machine, 0), start + d)
    return Schedule.from_operations(schedule.instance, out)


def _subrequest(base: SolveRequest, incumbent: Schedule, relaxed: set[Key], time_limit: float,
                seed: int) -> SolveRequest:
    ops = incumbent.operations
    begin = min(o.start for o in ops if o.key in relaxed)
    fixed = dict(base.fixed)
    chains: dict[int, list[Operation]] = {}
    for o in ops:
        if o.key in relaxed or o.key in base.fixed:
            continue
        if o.end <= begin:
            fixed[o.key] = o.start  # ends before the neighbourhood: nothing to gain from moving it
        else:
            chains.setdefault(o.machine, []).append(o)
    precedences: list[tuple[Key, Key]] = list(base.precedences)
    for seq in chains.values():
        seq.sort(key=lambda o: (o.start, o.end))
        precedences.extend((a.key, b.key) for a, b in pairwise(seq))
    return replace(base, hint=incumbent, fixed=fixed, precedences=precedences, time_limit=time_limit,
                   seed=seed, stability_time_fraction=0.0, horizon=incumbent.makespan,
                   makespan_limit=incumbent.makespan)


def improve(request: SolveRequest, incumbent: Schedule, *, bound: int = 0, config: LnsConfig | None = None,
            progress: Callable[[ProgressEvent], None] | None = None) -> SolveResult:
    """Improve ``incumbent`` by LNS for ``request.time_limit`` seconds; never returns anything worse.

    The incumbent must be feasible for the request (pinned operations, durations, downtimes, release).
    LNS minimizes the makespan only; the stability fields of the request are ignored except that
    ``reference`` still yields ``total_shift``.

    Args:
        request: The problem and the budget (``time_limit``, ``workers``, ``seed``).
        incumbent: A feasible starting schedule.
        bound: A known lower bound on the makespan (e.g. from an earlier CP-SAT run); LNS stops when it
            reaches it.
        config: Neighbourhood tuning.
        progress: Called with each improvement.
    """
    cfg = config or LnsConfig()
    started = time.monotonic()
    rng = random.Random(request.seed)
    n = len(incumbent.operations)
    size = max(min(cfg.initial_size, n), min(cfg.min_size, n))
    best, start_makespan = compact(request, incumbent), incumbent.makespan
    kinds = list(Neighbourhood)
    moves = 0
    while best.makespan > bound:
        left = request.time_limit - (time.monotonic() - started)
        if left < 0.2:
            break
        kind = kinds[moves % len(kinds)]
        moves += 1
        relaxed = _pick(best, kind, size, request.instance.num_machines, request.instance.num_jobs, rng)
        relaxed -= set(request.fixed)
        if not relaxed:
            continue
        sub = _subrequest(request, best, relaxed, min(cfg.move_time, left), rng.randrange(1 << 30))
        try:
            result = optimize(sub)
        except (NoSolutionError, InfeasibleError):
            size = max(cfg.min_size, int(size * cfg.shrink))
            continue
        if result.schedule.makespan < best.makespan and progress:
            progress(ProgressEvent(phase="lns", makespan=result.schedule.makespan, bound=bound,
                                   seconds=time.monotonic() - started))
        if result.schedule.makespan <= best.makespan:
            best = compact(request, result.schedule)  # equal moves too: a different schedule opens other neighbourhoods
        if result.status is SolveStatus.OPTIMAL:
            size = min(cfg.max_size, n, max(size + 1, int(size * cfg.grow)))
        elif result.status is SolveStatus.HINT:
            size = max(cfg.min_size, int(size * cfg.shrink))
    status = SolveStatus.OPTIMAL if best.makespan <= bound else SolveStatus.FEASIBLE
    shift = None if request.reference is None else sum(
        abs(o.start - request.reference[o.key]) for o in best.operations if o.key in request.reference)
    return SolveResult(schedule=best, status=status, objective=best.makespan, bound=min(bound, best.makespan),
                       seconds=time.monotonic() - started, total_shift=shift,
                       improved=best.makespan < start_makespan)
