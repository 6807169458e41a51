"""Large-neighbourhood search with CP-SAT for large static instances.

The incumbent is held as machine sequences. A move relaxes a time window of it (a run of operations
consecutive in start order, usually around an operation of a critical path, optionally restricted to a
few machines) and re-sequences only those operations with a small CP-SAT model:

- the operations before the window stay put and give each relaxed operation its earliest start;
- the operations after the window are not variables: each relaxed operation carries the *tail* of its
  job successor and of the first later operation on its machine (longest path to the end in the current
  schedule), so ``end + tail`` estimates the makespan the move leads to;
- the objective is that estimate first, then the sum of the relaxed end times (compaction).

The new sequences are then evaluated exactly (a longest-path pass over the disjunctive graph) and kept
when the makespan, then the sum of job completion times, is no worse. Subproblems have only as many
variables as the window has operations, so hundreds of moves fit in a few seconds. The window grows
after subproblems solved to optimality and shrinks after ones that ran out of time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from alas_argo.errors import InputError
from alas_argo.jssp.cpsat import SolveRequest, SolveResult, SolveStatus
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock, cp_model, new_solver, run_solver
from alas_argo.jssp.sequencing import Sequences

__all__ = ["LnsConfig", "Neighbourhood", "improve"]


class Neighbourhood(StrEnum):
    """Ways to place the window a move relaxes."""

    WINDOW = "window"  #: a random run of operations in start order
    CRITICAL = "critical"  #: a run centred on a random operation of a critical path
    MACHINES = "machines"  #: a longer run around a critical operation, restricted to a few machines


@dataclass(frozen=True)
class LnsConfig:
    """Tuning of :func:`improve`.

    Attributes:
        initial_size: Operations relaxed by the first move.
        min_size: Smallest window.
        max_size: Largest window.
        move_time: Seconds per subproblem.
        grow: Factor applied to the size after a subproblem solved to optimality.
        shrink: Factor applied after a subproblem that ran out of time.
        critical_share: Share of moves centred on the critical path (all machines).
        machines_share: Share of moves on a few machines around a critical operation.
    """

    initial_size: int = 40
    min_size: int = 10
    max_size: int = 300
    move_time: float = 1.0
    grow: float = 1.1
    shrink: float = 0.85
    critical_share: float = 0.7
    machines_share: float = 0.0


def _window(seqs: Sequences, size: int, kind: Neighbourhood, rng: random.Random) -> list[int]:
    order = seqs.start_order()
    n = len(order)
    if kind is not Neighbourhood.WINDOW:
        critical = seqs.critical_path()
        pivot = rng.choice(critical) if critical else order[rng.randrange(n)]
        centre = order.index(pivot)
        if kind is Neighbourhood.MACHINES:
            # A few machines, the pivot's among them, over a span about three times as long.
            machines = {seqs.machine[pivot], *rng.sample(range(seqs.instance.num_machines),
                                                         max(1, seqs.instance.num_machines // 4))}
            span = order[max(0, centre - 2 * size):centre + 2 * size]
            return [op for op in span if seqs.machine[op] in machines][:size]
        first = min(max(0, centre - rng.randrange(size)), max(0, n - size))
    else:
        first = rng.randrange(max(1, n - size + 1))
    return order[first:first + size]


def _move(seqs: Sequences, relaxed: list[int], time_limit: float, workers: int,
          seed: int, clock: SearchClock) -> tuple[Sequences, bool] | None:
    """Re-sequence ``relaxed`` inside the current sequences; None when CP-SAT found nothing."""
    rel = set(relaxed)
    tails = seqs.tails()
    model = cp_model.CpModel()
    horizon = seqs.makespan
    starts: dict[int, cp_model.IntVar] = {}
    by_machine: dict[int, list[cp_model.IntervalVar]] = {}
    estimate = model.new_int_var(0, horizon, "estimate")
    for op in relaxed:
        d = seqs.duration[op]
        lb = seqs.release
        jp = seqs.job_pred(op)
        if jp is not None and jp not in rel:
            lb = max(lb, seqs.start[jp] + seqs.duration[jp])
        mp = seqs.machine_pred(op)
        while mp is not None and mp in rel:
            mp = seqs.machine_pred(mp)
        if mp is not None:
            lb = max(lb, seqs.start[mp] + seqs.duration[mp])
        if lb + d > horizon:
            clock.charge_nothing()
            return None
        var = model.new_int_var(lb, horizon - d, f"s{op}")
        starts[op] = var
        by_machine.setdefault(seqs.machine[op], []).append(model.new_fixed_size_interval_var(var, d, f"i{op}"))
        tail = 0
        js = seqs.job_succ(op)
        if js is not None and js not in rel:
            tail = seqs.duration[js] + tails[js]
        ms = seqs.machine_succ(op)
        while ms is not None and ms in rel:
            ms = seqs.machine_succ(ms)
        if ms is not None:
            tail = max(tail, seqs.duration[ms] + tails[ms])
        model.add(estimate >= var + d + tail)
        model.add_hint(var, seqs.start[op])
    for op in relaxed:
        jp = seqs.job_pred(op)
        if jp is not None and jp in rel:
            model.add(starts[op] >= starts[jp] + seqs.duration[jp])
    for intervals in by_machine.values():
        if len(intervals) > 1:
            model.add_no_overlap(intervals)
    model.minimize(estimate)
    solver = new_solver(seconds=max(0.02, time_limit), workers=workers, seed=seed, deterministic=clock.deterministic)
    code = run_solver(solver, model, clock, where="an LNS move")
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    new_start = {op: int(solver.value(v)) for op, v in starts.items()}
    if code == cp_model.OPTIMAL:
        # Second phase: at that estimate, pack the window as early as possible; the slack this frees
        # around the critical paths is what lets later moves shorten them.
        model.add(estimate <= int(solver.value(estimate)))
        model.clear_hints()
        for op, var in starts.items():
            model.add_hint(var, new_start[op])
        model.minimize(sum(starts[op] + seqs.duration[op] for op in relaxed))
        solver = new_solver(seconds=min(0.05, time_limit), workers=workers, seed=seed,
                            deterministic=clock.deterministic)
        if run_solver(solver, model, clock, where="an LNS move") in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            new_start = {op: int(solver.value(v)) for op, v in starts.items()}
    moved = seqs.resequenced(new_start)
    return None if moved is None else (moved, code == cp_model.OPTIMAL)


def improve(request: SolveRequest, incumbent: Schedule, *, bound: int = 0,
            config: LnsConfig | None = None,
            progress: Callable[[ProgressEvent], None] | None = None) -> SolveResult:
    """Improve a schedule by LNS for ``request.time_limit`` nominal seconds (deterministic time by default, see
    :mod:`alas_argo.jssp.searching`; each move is charged to ``request.clock``); never returns anything worse.

    LNS handles the static problem (with ``durations`` and ``release``); pinned operations, minimum starts,
    downtimes and extra precedences belong to :func:`alas_argo.jssp.cpsat.optimize`. It minimizes the
    makespan only; ``reference`` still yields ``total_shift``.

    Args:
        request: The problem and the budget (``time_limit``, ``workers``, ``seed``).
        incumbent: A feasible starting schedule.
        bound: A known lower bound on the makespan; LNS stops when it reaches it.
        config: Window tuning.
        progress: Called with each improvement of the makespan.

    Raises:
        InputError: The request has constraints LNS does not model, or the incumbent does not fit it.
    """
    if request.fixed or request.min_starts or request.downtimes or request.precedences:
        raise InputError("LNS handles static requests only (no fixed, min_starts, downtimes, precedences)")
    cfg = config or LnsConfig()
    started = time.monotonic()
    clock = request.search_clock()
    began = clock.now()
    rng = random.Random(request.seed)
    best = Sequences.from_schedule(request.instance, incumbent, durations=request.durations,
                                   release=request.release)
    start_makespan = best.makespan
    n = len(best.start)
    size = max(min(cfg.initial_size, n), min(cfg.min_size, n))
    while best.makespan > bound:
        left = request.time_limit - (clock.now() - began)
        if left < 0.05:
            break
        draw = rng.random()
        kind = (Neighbourhood.CRITICAL if draw < cfg.critical_share else Neighbourhood.MACHINES
                if draw < cfg.critical_share + cfg.machines_share else Neighbourhood.WINDOW)
        moved = _move(best, _window(best, size, kind, rng), min(cfg.move_time, left), request.workers,
                      rng.randrange(1 << 30), clock)
        if moved is None:
            size = max(cfg.min_size, int(size * cfg.shrink))
            continue
        candidate, optimal = moved
        if (candidate.makespan, candidate.completion) <= (best.makespan, best.completion):
            if candidate.makespan < best.makespan and progress:
                progress(ProgressEvent(phase="lns", makespan=candidate.makespan, bound=bound,
                                       seconds=time.monotonic() - started))
            best = candidate
        size = (min(cfg.max_size, n, max(size + 1, int(size * cfg.grow))) if optimal
                else max(cfg.min_size, int(size * cfg.shrink)))
    schedule = best.to_schedule()
    shift = None if request.reference is None else sum(
        abs(o.start - request.reference[o.key]) for o in schedule.operations if o.key in request.reference)
    return SolveResult(schedule=schedule, status=SolveStatus.OPTIMAL if best.makespan <= bound
                       else SolveStatus.FEASIBLE, objective=best.makespan, bound=min(bound, best.makespan),
                       seconds=time.monotonic() - started, total_shift=shift,
                       improved=best.makespan < start_makespan, limits=clock.record(request.workers))
