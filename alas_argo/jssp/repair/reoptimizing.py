"""Re-optimizing a repaired plan over every free operation: large-neighbourhood search on machine sequences.

A single-worker CP-SAT solve over all free operations, hinted with a repaired plan, often cannot leave the
hint in the fraction of a second a repair has (measured on ta13, shock-sweep seed 1 of the issue-17 families:
1740, the AOR makespan, after 1 nominal second; a 10 s global re-solve reaches 1575). Local search does: the
plan is held as machine sequences of the free operations and evaluated exactly by a longest-path pass that
respects what the execution state imposes (frozen operations, each free operation's release, downtimes); a
move relaxes a run of operations consecutive in start order, around an operation of a critical path, and
re-sequences it with a small CP-SAT model in which the operations outside the run are not variables but
*tails* (longest path to the end), as in :mod:`alas_argo.jssp.lns` for static instances. A move is kept when
the makespan, then the sum of job completions, is no worse.

The plan this returns is semi-active (every operation as early as its sequence allows): the caller pulls it
back towards the plan in force at its makespan (:func:`alas_argo.jssp.repair.stabilizing.stabilized`).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Sequence
from itertools import pairwise

from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.searching import SearchClock, add_hints, cp_model, new_model, new_solver, run_solver

__all__ = ["MOVE_CHARGE_PER_OP", "MOVE_SECONDS", "STRETCHES", "STRETCH_MIN_GAP", "STRETCH_SHARE", "WINDOW",
           "FreeSequences", "reoptimized"]

#: Operations one move relaxes at first, and the range the size adapts in (it grows after a move solved to
#: optimality, shrinks after one that ran out of time). Measured on the issue-17 tuning set at effort 1
#: (without the LP relaxation in the moves): a first window of 60 ends 1.0061 of full's makespan, 100 1.0080,
#: 40 1.0060; smaller first windows improve sooner, and the size still grows where moves are solved.
WINDOW = (60, 20, 200)
#: Nominal seconds per move.
MOVE_SECONDS = 0.1
#: Each move picks a window and evaluates the plan over every free operation, in Python, which CP-SAT's
#: deterministic time does not count; the move cap (``lcrp.REOPT_MOVES`` per free operation) makes that grow with
#: the square of the instance. On a 300x40 instance (8,477 free operations, a shock) 1,833 moves took about 40 s
#: of wall time for 2.3 nominal s, about 22 ms a move (2.6 us per free operation). So each move is charged at
#: least this per free operation beyond ``searching.UNCHARGED_OPERATIONS`` (none up to 100x20).
MOVE_CHARGE_PER_OP = 2e-6
#: A search whose time is spent while it still gains, far above the bound, goes on: up to STRETCHES more
#: stretches of STRETCH_SHARE of its time each, while the last stretch shortened the plan and the plan is more
#: than STRETCH_MIN_GAP (relative) above the bound. The time a search is given is a guess from the first
#: edit's gap (``lcrp._search_cap``); where its moves still pay when it runs out, the guess was short. Measured
#: on the issue-17 tuning set at effort 1 (``bench/README.md``, h-lcrp5): a prototype 0.9996 -> 0.9980 of a 10 s
#: global re-solve's makespan; as committed, with LCRP's second search (``lcrp.RESTART_MIN_GAP``), 0.9974,
#: ta14 multi-breakdown seed 1 1.0318 -> 1.0110, the median repair's nominal seconds unchanged (0.172), the
#: mean 0.330 -> 0.536.
#: Near the bound (the cheap bound is a few percent below the optimum) a stalled search is not stuck.
STRETCHES = 4
STRETCH_SHARE = 0.5
STRETCH_MIN_GAP = 0.03


class FreeSequences:
    """The free operations of an execution state in machine sequences, with their earliest start times.

    Frozen operations are constants: they only raise the release of the free operations after them (on
    their machine or in their job). Downtimes are kept exactly: an operation that would overlap one starts
    after it.
    """

    def __init__(self, state: ExecutionState, schedule: Schedule) -> None:
        inst = state.instance
        self.state = state
        self.keys: list[Key] = sorted(state.free)
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.duration = [state.durations[k] for k in self.keys]
        self.machine = [inst.machine(*k) for k in self.keys]
        frozen = state.frozen_starts()
        frozen_end = {k: s + state.durations[k] for k, s in frozen.items()}
        machine_ready: dict[int, int] = {}
        for k, end in frozen_end.items():
            m = inst.machine(*k)
            machine_ready[m] = max(machine_ready.get(m, state.time), end)
        #: The latest end of a frozen operation: no plan ends before it.
        self.floor = max(frozen_end.values(), default=0)
        self.release = []
        self.job_pred, self.job_succ = [], []
        for (j, s) in self.keys:
            r = max(state.release[(j, s)], machine_ready.get(inst.machine(j, s), state.time))
            if (j, s - 1) in frozen_end:
                r = max(r, frozen_end[(j, s - 1)])
            self.release.append(r)
            self.job_pred.append(self.index.get((j, s - 1), -1))
            self.job_succ.append(self.index.get((j, s + 1), -1))
        self.downtimes: dict[int, list[tuple[int, int]]] = {}
        for m, lo, hi in state.downtimes:
            self.downtimes.setdefault(m, []).append((lo, hi))
        starts = schedule.starts()
        self.seqs: list[list[int]] = [[] for _ in range(inst.num_machines)]
        for i in sorted(range(len(self.keys)), key=lambda i: (starts[self.keys[i]], i)):
            self.seqs[self.machine[i]].append(i)
        self.start: list[int] = []
        self.makespan = 0
        if not self.evaluate(self.seqs):
            raise ValueError("the schedule's machine order contradicts its job order")

    def _fit(self, machine: int, start: int, duration: int) -> int:
        moved = duration > 0
        while moved:
            moved = False
            for lo, hi in self.downtimes.get(machine, ()):
                if start < hi and lo < start + duration:
                    start, moved = hi, True
        return start

    def evaluate(self, seqs: list[list[int]]) -> bool:
        """Adopt ``seqs`` with their earliest starts; False (nothing adopted) when they are cyclic."""
        n = len(self.keys)
        mpred, msucc = [-1] * n, [-1] * n
        for seq in seqs:
            for a, b in pairwise(seq):
                msucc[a], mpred[b] = b, a
        indeg = [(self.job_pred[i] >= 0) + (mpred[i] >= 0) for i in range(n)]
        ready = deque(i for i in range(n) if indeg[i] == 0)
        earliest = list(self.release)
        start = [0] * n
        done = 0
        while ready:
            i = ready.popleft()
            done += 1
            start[i] = self._fit(self.machine[i], earliest[i], self.duration[i])
            end = start[i] + self.duration[i]
            for nxt in (self.job_succ[i], msucc[i]):
                if nxt >= 0:
                    earliest[nxt] = max(earliest[nxt], end)
                    indeg[nxt] -= 1
                    if indeg[nxt] == 0:
                        ready.append(nxt)
        if done < n:
            return False
        self.seqs, self.mpred, self.msucc, self.start = seqs, mpred, msucc, start
        self.makespan = max([self.floor, *(s + d for s, d in zip(start, self.duration, strict=True))])
        self.completion = sum(start[i] + self.duration[i] for i in range(n) if self.job_succ[i] < 0)
        self._order: list[int] | None = None
        self._tails: list[int] | None = None
        return True

    def order(self) -> list[int]:
        """The free operations in start order (ties by index); computed once per adopted sequence."""
        if self._order is None:
            self._order = sorted(range(len(self.keys)), key=lambda i: (self.start[i], i))
        return list(self._order)

    def tails(self) -> list[int]:
        """Per free operation, the longest path from its end to the end of the plan (downtimes ignored).

        Computed once per adopted sequence: a search step reads them twice (the window's critical path, the
        move's model), and they were a tenth of the search's Python time.
        """
        if self._tails is None:
            tail = [0] * len(self.keys)
            dur, jsucc, msucc = self.duration, self.job_succ, self.msucc
            for i in reversed(self.order()):
                best = 0
                for n in (jsucc[i], msucc[i]):
                    if n >= 0 and dur[n] + tail[n] > best:
                        best = dur[n] + tail[n]
                tail[i] = best
            self._tails = tail
        return list(self._tails)

    def critical(self, tails: Sequence[int]) -> list[int]:
        """The free operations on a longest path."""
        return [i for i in range(len(self.keys)) if self.start[i] + self.duration[i] + tails[i] == self.makespan]

    def resequenced(self, new_start: dict[int, int]) -> FreeSequences | None:
        """A copy with the given operations reordered on their machines by ``new_start`` (their positions
        reused), re-evaluated; None when that is cyclic."""
        seqs = [list(s) for s in self.seqs]
        for m in {self.machine[i] for i in new_start}:
            positions = [p for p, i in enumerate(seqs[m]) if i in new_start]
            ordered = sorted((seqs[m][p] for p in positions), key=lambda i: (new_start[i], self.start[i]))
            for p, i in zip(positions, ordered, strict=True):
                seqs[m][p] = i
        return self.adopted(seqs)

    def adopted(self, seqs: list[list[int]]) -> FreeSequences | None:
        """A copy holding the machine sequences ``seqs`` (indices into :attr:`keys`), re-evaluated; None when
        they are cyclic. ``self`` is unchanged."""
        copy = object.__new__(FreeSequences)
        copy.__dict__.update(self.__dict__)
        return copy if copy.evaluate(seqs) else None

    def to_schedule(self) -> Schedule:
        """The plan: frozen operations where they are, free ones at their earliest starts."""
        st, inst = self.state, self.state.instance
        ops = [Operation(job=k[0], step=k[1], machine=inst.machine(*k), start=s, end=s + st.durations[k])
               for k, s in st.frozen_starts().items()]
        ops += [Operation(job=k[0], step=k[1], machine=self.machine[i], start=self.start[i],
                          end=self.start[i] + self.duration[i]) for i, k in enumerate(self.keys)]
        return Schedule.from_operations(inst.name, ops)


def _move(seqs: FreeSequences, relaxed: list[int], seconds: float, seed: int,
          clock: SearchClock) -> tuple[FreeSequences, bool] | None:
    """Re-sequence ``relaxed``, the rest of the plan as fixed heads and tails; None when nothing came of it."""
    rel = set(relaxed)
    tails = seqs.tails()
    horizon = seqs.makespan
    # Locals for the per-operation loop: a move's model is built in Python, a sixth of its time.
    dur, start, mpred, msucc = seqs.duration, seqs.start, seqs.mpred, seqs.msucc
    model = new_model()
    new_int_var, new_interval, add = model.new_int_var, model.new_fixed_size_interval_var, model.add
    estimate = new_int_var(0, horizon, "estimate")
    starts: dict[int, cp_model.IntVar] = {}
    by_machine: dict[int, list[cp_model.IntervalVar]] = {}
    for i in relaxed:
        d = dur[i]
        lb = seqs.release[i]
        jp = seqs.job_pred[i]
        if jp >= 0 and jp not in rel:
            lb = max(lb, start[jp] + dur[jp])
        mp = mpred[i]
        while mp >= 0 and mp in rel:
            mp = mpred[mp]
        if mp >= 0:
            lb = max(lb, start[mp] + dur[mp])
        if lb + d > horizon:
            clock.charge_nothing()
            return None
        var = new_int_var(lb, horizon - d, f"s{i}")
        starts[i] = var
        by_machine.setdefault(seqs.machine[i], []).append(new_interval(var, d, f"i{i}"))
        tail = 0
        js = seqs.job_succ[i]
        if js >= 0 and js not in rel:
            tail = dur[js] + tails[js]
        ms = msucc[i]
        while ms >= 0 and ms in rel:
            ms = msucc[ms]
        if ms >= 0:
            tail = max(tail, dur[ms] + tails[ms])
        add(estimate >= var + d + tail)
    for i in relaxed:
        jp = seqs.job_pred[i]
        if jp >= 0 and jp in rel:
            add(starts[i] >= starts[jp] + dur[jp])
    for m, intervals in by_machine.items():
        # Downtimes are fixed blocks on the machine: the window's operations go around them.
        blocks = [model.new_fixed_size_interval_var(lo, hi - lo, f"down{m}-{lo}")
                  for lo, hi in seqs.downtimes.get(m, ()) if hi > seqs.state.time and lo < horizon]
        if len(intervals) + len(blocks) > 1:
            model.add_no_overlap(intervals + blocks)
    add_hints(model, ((starts[i], seqs.start[i]) for i in relaxed))
    model.minimize(estimate)
    solver = new_solver(seconds=seconds, workers=1, seed=seed, deterministic=clock.deterministic)
    # No LP relaxation: on these windows (heads and tails fixed, one makespan variable) it costs time and
    # proves little. Measured on the issue-17 tuning set (ta11-14, 40 cases, effort 1): the same moves use
    # about two thirds of the deterministic time, and the search's plans end 1.0085 of a 10 s global
    # re-solve's makespan instead of 1.0120.
    solver.parameters.linearization_level = 0
    # One presolve pass, no symmetry detection: a move model is small and loose (heads and tails fixed), and
    # presolve was about 40 % of a move's CPU for almost none of its deterministic time. Measured on the 90
    # kept cases of the issue-17 tuning and check sets at effort 1 and 2 (bench/README.md, "Repair time"):
    # 179 of 180 repaired plans identical, one shorter (swv07 multi-breakdown seed 1: 1957 -> 1953), the
    # median repair's CPU down about 8 %. Probing off or no presolve at all save more but change the search
    # (the multi-breakdown family's mean went 1.0037 -> 1.0067 and 1.0082 of full's makespan on the tuning set).
    solver.parameters.max_presolve_iterations = 1
    solver.parameters.symmetry_level = 0
    code = run_solver(solver, model, clock, where="a re-optimizing move")
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    # The plan is re-timed semi-actively from the new machine order (resequenced), so only the order counts.
    # A second solve that packed the window early at the estimate found cost as much as the move again and
    # ran to its limit nearly every time; without it the same budget buys more moves (tuning set, effort 1:
    # 1.0120 of full's makespan instead of 1.0158).
    # Read from the response's solution vector: solver.value per variable was most of this step.
    solution = solver.response_proto.solution
    new_start = {i: int(solution[v.index]) for i, v in starts.items()}
    moved = seqs.resequenced(new_start)
    return None if moved is None else (moved, code == cp_model.OPTIMAL)


def _window(seqs: FreeSequences, size: int, rng: random.Random) -> list[int]:
    order = seqs.order()
    critical = seqs.critical(seqs.tails())
    pivot = rng.choice(critical) if critical else rng.randrange(len(order))
    centre = order.index(pivot)
    first = min(max(0, centre - rng.randrange(size)), max(0, len(order) - size))
    return order[first:first + size]


def _resized(size: int, n: int, *, optimal: bool) -> int:
    """The next window size: larger after a move solved (or known) to optimality, smaller otherwise, within
    :data:`WINDOW`'s range and the ``n`` free operations."""
    _, lo, hi = WINDOW
    return min(hi, n, max(size + 1, int(size * 1.1))) if optimal else max(lo, int(size * 0.85))


def reoptimized(state: ExecutionState, plan: Schedule, *, seconds: float, bound: int, seed: int,
                clock: SearchClock, max_moves: int, stretches: int = STRETCHES,
                ceiling: float | None = None, gap_bound: int | None = None) -> Schedule | None:
    """Local search from ``plan`` for ``seconds`` nominal seconds of ``clock`` and ``max_moves`` moves
    (Python work between the solves is not on a deterministic clock: the move cap bounds it, and beyond
    ``searching.UNCHARGED_OPERATIONS`` free operations each move is charged :data:`MOVE_CHARGE_PER_OP` per
    operation for it), then up to
    ``stretches`` more stretches of :data:`STRETCH_SHARE` of both while the last stretch shortened the plan
    and it is still more than :data:`STRETCH_MIN_GAP` above ``gap_bound`` (``bound`` when not given: the bound the
    gap was tuned on); never more than ``ceiling`` nominal seconds in all (the caller's budget), when given. It
    stops at ``bound``.

    Returns:
        A shorter semi-active plan, or None when the search found none (or ``plan`` has no free operation).
    """
    if not state.free:
        return None
    try:
        best = FreeSequences(state, plan)
    except ValueError:
        return None
    rng = random.Random(seed)
    initial, lo, _ = WINDOW
    n = len(best.keys)
    size = max(min(initial, n), min(lo, n))
    began = clock.now()
    if ceiling is not None:
        seconds = min(seconds, ceiling)
    stretch, stretch_moves = seconds * STRETCH_SHARE, max(1, round(max_moves * STRETCH_SHARE))
    gained_at, moves = began, 0
    # Windows proven optimal without a change since the sequence last changed: a window inside one of them is
    # not solved again. Measured on the issue-17 tuning set at effort 1: 211 of 905 moves were such windows, and
    # every one of them returned the sequence unchanged and proven optimal (bench/README.md, "Repair time").
    settled: list[frozenset[int]] = []
    gap_bound = bound if gap_bound is None else gap_bound
    while best.makespan > bound and moves < max_moves:
        left = seconds - (clock.now() - began)
        if left < 0.01:
            # Out of time, not of moves: a search that ran out of moves has tried what its cap allows.
            still_gaining = gained_at > clock.now() - stretch
            grown = seconds + stretch if ceiling is None else min(seconds + stretch, ceiling)
            if not (stretches > 0 and grown > seconds and still_gaining
                    and best.makespan - gap_bound > STRETCH_MIN_GAP * gap_bound):
                break
            stretches -= 1
            seconds, max_moves = grown, max_moves + stretch_moves
            continue
        moves += 1
        step = clock.now()
        try:
            relaxed = _window(best, size, rng)
            window, move_seed = frozenset(relaxed), rng.randrange(1 << 30)
            if any(window <= done for done in settled):
                clock.charge_nothing()
                size = _resized(size, n, optimal=True)
                continue
            moved = _move(best, relaxed, min(MOVE_SECONDS, left), move_seed, clock)
            if moved is None:
                size = _resized(size, n, optimal=False)
                continue
            candidate, optimal = moved
            unchanged = candidate.seqs == best.seqs
            if optimal and unchanged:
                settled.append(window)
            if (candidate.makespan, candidate.completion) <= (best.makespan, best.completion):
                if candidate.makespan < best.makespan:
                    gained_at = clock.now()
                if not unchanged:
                    settled = []
                best = candidate
            size = _resized(size, n, optimal=optimal)
        finally:
            clock.charge_operations(step, n, MOVE_CHARGE_PER_OP)
    return best.to_schedule() if best.makespan < plan.makespan else None
