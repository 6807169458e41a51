"""LCRP, the localized cascading repair (docs/lcrp.md).

LCRP works in a time box scaled to the number of free operations (:data:`TOTAL_PER_OP`, about 0.2 s for the
200 free operations of a 20x15 instance disrupted mid-plan) and to ``effort``, capped by the caller's budget:
a repair that takes as long as a global re-solve has lost its point.

1. Freeze what has started (the execution state) and take the cheapest edit first: AOR, which shifts only
   the operations the disruption reaches through job and machine successors (the *cascade*), or, when it is
   shorter, the free operations re-dispatched in their planned order (:mod:`.redispatching`, an active
   schedule that closes the gaps AOR leaves). Its plan is feasible and is the incumbent: LCRP is never worse
   than AOR (nor than right-shift, which AOR dominates) unless a tolerance trades makespan for moves
   (docs/lcrp.md, step 8).
   The operations it moved are the cascade.
   With ``first_edit="tabu"`` (the default, :data:`.tabu.DEFAULT_FIRST_EDIT`) and the compiled search built,
   every stage below gets :data:`TABU_BOX_SCALE` of its time, and step 2b starts with the tabu search.
2. The first neighbourhood is the cascade itself: when the makespan is above the lower bound (the larger of
   job chains and machine loads after the reveal, and the one-machine relaxation with heads and tails:
   :mod:`.bounds`), CP-SAT re-sequences the cascade's operations for the least
   makespan, hinted with the first edit, with every other operation pinned at its planned start, so it keeps
   it (:data:`CASCADE_PER_OP` seconds per free operation, times ``effort``; it stops early when it proves
   optimality). Measured on 20x15 disruptions, the operations a 10 s least-shift global re-solve moves are
   nearly all in the cascade, so its makespan is often reachable there, in a smaller model than the whole
   plan. A cascade of nearly every free operation (:data:`PROBE_MIN_SHARE`) is not solved: that would be a
   global CP-SAT solve, which on one worker rarely leaves its hint in this time.
2b. But a cascade proven optimal is optimal only with everything outside it pinned: while the plan is above
   the bound, a *re-optimizing search* (:mod:`.reoptimizing`: large-neighbourhood search over the machine
   sequences of every free operation, critical-path windows re-sequenced by small CP-SAT models) starts
   from the local plan, for :data:`REOPT_PER_OP` seconds per free operation times ``effort`` on top of the
   time box, more the further the plan is above the bound (:func:`_search_cap`), plus what the cascade left
   of its time. With ``first_edit="tabu"`` a compiled tabu search over the same machine sequences
   (:mod:`.tabu`, a fixed number of iterations charged to the clock) runs first, from the local plan; the
   CP-SAT search then starts from its plan when it is shorter, and only while it is above the bound. Each
   plan is taken only when shorter and valid; then
   LCRP has gone global and says why (``global_reason``), and the stabilization (step 5) buys back the
   moves. A local edit that reaches the bound, or that the search cannot beat, stays local; an absorbed
   breakdown (the first edit moves nothing) on a plan in force above the bound goes straight to the search.
   A search still gaining when its time runs out, far above the bound, runs on
   (:data:`.reoptimizing.STRETCHES`); a search that ends more than :data:`RESTART_MIN_GAP` above the bound
   is followed by one from the first edit (another random stream), and the shorter plan is kept: the
   cascade's plan, solved with everything else pinned, can be a poor start, and a search's outcome swings
   with its stream.
   Measured on the
   issue-17 disruption families (``bench/README.md``, tuning set): with the global CP-SAT probe it replaces,
   LCRP's makespan was 1.0258 of a 10 s global re-solve at effort 1 and 1.0098 at effort 16; with the search,
   1.0158 at effort 1, 1.0078 at effort 2 and 1.0019 at effort 4; with its cheaper moves (no packing solve,
   no LP relaxation), 1.0074, 1.0006 and 0.9984; with its time scaled by the gap, 1.0006 at effort 1; with
   the stretches and the second search, 0.9974 at effort 1 and no case above 2 % (was 2).
3. Only when the cascade solve runs out of time without gaining do time windows after the reveal on the
   machines the disruption touched join the cascade: there CP-SAT may re-sequence freely, the rest of the
   cascade only slides within its machine order, everything else is pinned. A window solve
   (:data:`STEP_PER_OP` seconds per editable operation) seeks a shorter makespan, then the least total start
   shift at the incumbent's makespan (:mod:`.subproblem`). The window doubles while its subproblem is
   infeasible or cannot meet the makespan in its time slice, and after it meets it, while the last growth
   gained more (makespan weighted by the number of free operations, plus operations kept in place) than it
   cost (:data:`EDIT_COST` per operation newly exposed). A step whose plan fails validation is discarded and
   the window grows.
4. Fallback: when no neighbourhood step succeeds at all, a full re-solve hinted with the incumbent runs in
   what is left of the box; ``fallback`` is reported and the neighbourhood is every free operation.
5. Stabilization: what is left of the time box goes to the fewest moved operations at the makespan reached,
   with only the operations the plan moved free to move (count-only CP-SAT solves,
   :func:`.subproblem.fewest_moves`, over chunks of consecutive planned starts when there are many:
   :func:`.stabilizing.stabilized`; everything else held). Moving work in progress (started, or next on its
   machine) costs :data:`.stabilizing.WIP_WEIGHT` moves. Count solves often prove their optimum early; what
   they leave of a large box (``effort``) goes to up to :data:`EXTRA_ROUNDS` more rounds of the re-optimizing
   search and a stabilization, while the plan is above the bound. Measured in ``bench/README.md``.
6. Polish: the settle pass re-times the plan in its own machine order, each operation at its planned start
   where the slack allows (operations outside the neighbourhood held), then a greedy pass restores planned
   starts that became feasible and end within the makespan; the polished plan is kept only when the
   validator accepts it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from alas_argo.errors import InfeasibleError, NoSolutionError
from alas_argo.jssp.cpsat import SolveStatus, optimize
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.repair.bounds import cheap_bound, lower_bound
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations, total_start_shift
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.reoptimizing import reoptimized
from alas_argo.jssp.repair.resolving import disrupted_request, full
from alas_argo.jssp.repair.result import RepairOutcome
from alas_argo.jssp.repair.shifting import aor, disruption_size
from alas_argo.jssp.repair.stabilizing import settled, stabilized
from alas_argo.jssp.repair.subproblem import solve_neighbourhood
from alas_argo.jssp.repair.tabu import DEFAULT_FIRST_EDIT, FirstEdit, tabu_first_edit
from alas_argo.jssp.repair.tabu import unavailable as tabu_unavailable
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock

__all__ = [
    "CASCADE_FLOOR",
    "CASCADE_MAX_SHARE",
    "CASCADE_PER_OP",
    "EDIT_COST",
    "EXTRA_ROUNDS",
    "GAP_MAX_FACTOR",
    "GAP_UNIT",
    "MAKESPAN_EXPONENT",
    "MAX_GROWTHS",
    "PROBE_FLOOR",
    "PROBE_MIN_SHARE",
    "REOPT_FLOOR",
    "REOPT_MOVES",
    "REOPT_PER_OP",
    "RESTART_MIN_GAP",
    "RESTART_STREAM",
    "STABILITY_FROM",
    "STABILITY_RESERVE",
    "STEP_FLOOR",
    "STEP_PER_OP",
    "STREAM_SEED_STEP",
    "TABU_BOX_SCALE",
    "TOTAL_FLOOR",
    "TOTAL_PER_OP",
    "TRADE_CHUNK",
    "TRADE_FLOOR",
    "TRADE_PER_OP",
    "lcrp",
    "lower_bound",
]

#: Growth steps after the first window; the window doubles each time.
MAX_GROWTHS = 6
#: The time box of the whole repair: seconds per free operation, and its floor (the budget caps it).
#: Measured on 20x15 instances (about 200 free operations after a mid-plan disruption), 2 cores: the box
#: that keeps the median repair near 0.2 s.
TOTAL_PER_OP = 0.001
TOTAL_FLOOR = 0.1
#: Seconds per free operation for the cascade's makespan solve (it stops early when it proves optimality),
#: and its floor; it only runs when AOR is above the cheap lower bound.
CASCADE_PER_OP = 0.0006
CASCADE_FLOOR = 0.05
#: ... and at most this share of the time box: the rest is the stabilization's.
CASCADE_MAX_SHARE = 0.75
#: Seconds per editable operation for one window solve, and its floor: neighbourhoods are small.
STEP_PER_OP = 0.0005
STEP_FLOOR = 0.03
#: What exposing one more operation to editing costs, in moved operations.
EDIT_COST = 0.1
#: The share of the free operations above which the cascade counts as global already (no cascade solve: its
#: time goes to the re-optimizing search), and half the least time worth another round of that search.
PROBE_MIN_SHARE = 0.8
PROBE_FLOOR = 0.03
#: How the makespan stage grows with ``effort``: effort ** MAKESPAN_EXPONENT.
MAKESPAN_EXPONENT = 1.0
#: Rounds of (re-optimizing search, stabilization) on what the first round left of the box, and the share
#: of what is left each keeps for its stabilization.
EXTRA_ROUNDS = 2
STABILITY_RESERVE = 0.3
#: The re-optimizing local search over every free operation (:mod:`.reoptimizing`), run when the local plan is
#: still above the bound: nominal seconds per free operation, times ``effort``, and its floor; on top of the
#: time box. Its moves are capped too (per free operation, times ``effort``): the Python work between its
#: solves is not on a deterministic clock.
REOPT_PER_OP = 0.0005
REOPT_FLOOR = 0.05
REOPT_MOVES = 0.25
#: The search's time grows with the local plan's relative gap to the bound: one more share per GAP_UNIT of
#: gap, at most GAP_MAX_FACTOR shares (:func:`_search_cap`). Measured on the issue-17 tuning set at effort 1
#: (``bench/README.md``): without it 1.0074 of a 10 s global re-solve's makespan (multi-breakdown 1.0203);
#: GAP_UNIT 0.05, 1.0006 (1.0037) for the same median nominal seconds per repair and 1.8 times the mean;
#: 0.025, 0.9989 (1.0012) at 2.5 times the mean. The largest gap there was 0.33 (a factor of 7.6): the cap
#: only bounds plans further off, for which a repair as long as a global re-solve would have lost its point.
GAP_UNIT = 0.05
GAP_MAX_FACTOR = 8.0
#: A search that ends more than this (relative) above the bound gets a second search, from the first edit,
#: with another random stream: the cascade's plan, solved with everything else pinned, can be a poor start
#: for the global moves (ta11 shock-sweep seed 0 of the issue-17 tuning set: the search from the cascade's 1550
#: stalls at 1517, from AOR's 1561 it reaches 1497; a 10 s global re-solve 1485), and with no cascade plan
#: the search's outcome swings with its stream (the bench's own shock, ta14 seed 1: 1512; 1468 for the global
#: re-solve). Measured at effort 1 (bench/README.md, "The bench's own scenarios"): also from a first edit,
#: the bench's own scenarios on TA 20x15 1.0019 -> 0.9997 of full's makespan (shock 1.0062 -> 1.0022, worst
#: case 1.0300 -> 1.0107), the families' tuning set 0.9974 -> 0.9964, their held-out set 0.9931 -> 0.9915,
#: for 1.5-1.7 times the mean nominal seconds and the same median on the families.
RESTART_MIN_GAP = 0.03
#: Added to the seed for that second search's random stream.
RESTART_STREAM = 7919
#: The seed of the re-optimizing search's stream ``k`` when a repair asks for several side by side (``streams``,
#: recorded as ``search_streams``) is the search's own plus ``k`` times this. The streams' moves are random
#: windows and two streams of the search alone end far apart: from the first edit on the bench's own 20x15
#: scenarios (ta11-ta14, 24 cases, 0.3 nominal s each; scripts/search_streams.py), one stream 1.0069 of a 10 s
#: global re-solve's makespan (worst 1.0418), the better of two 1.0044 (worst 1.0268). Whole repairs gain much
#: less (about 0.1 %, for about twice the CPU: bench/README.md, "Search streams"), so one stream stays the
#: default.
STREAM_SEED_STEP = 104_729
#: The trade stage, run only when the caller allows a makespan tolerance: count solves (chunked as the
#: stabilization's; one count then smaller neighbourhoods when one chunk holds them all,
#: :data:`.stabilizing.NEIGHBOURHOOD_JOBS`) for the fewest moved operations at a makespan up to ``tolerance``
#: above the repair's, for TRADE_PER_OP nominal seconds per free operation times ``effort`` (and its floor),
#: within the budget. Measured on the issue-17 sets (bench/README.md, "Trading makespan for moves", "A count by
#: neighbourhoods").
TRADE_PER_OP = 0.002
TRADE_FLOOR = 0.05
#: Its chunk: every free operation of a 20x15 disruption in one count solve, as measured.
TRADE_CHUNK = 300
#: What ``effort`` is multiplied by when the tabu search is there to run (``first_edit="tabu"``, the kernel built,
#: at most ``tabu.MAX_OPERATIONS`` free operations, the first edit above the bound): every stage's time (the box,
#: the cascade, the re-optimizing search and its moves, the trade) was tuned from the re-dispatch's plan, 2-10 %
#: above the bound, and the tabu's plan leaves the CP-SAT stages much less to close. Measured on the bench's own
#: TA 20x15 scenarios (bench/README.md, issue 17, "The tabu search as the default"), 30,000 iterations, 0.25 /
#: 0.3 / 0.35 of the box: 0.9989 / 0.9987 / 0.9987 of a 10 s global re-solve's makespan, 0.860 / 0.847 / 0.824 of
#: its moves, nominal median 0.173 / 0.215 / 0.227 s; 0.3 was the smallest that kept the shocks within 0.3 %.
TABU_BOX_SCALE = 0.3
#: The effort above which the trade stage runs with no tolerance too, at the makespan the repair reached, for
#: ``min(1, effort - STABILITY_FROM)`` of the time it has under a tolerance: the default effort keeps its time
#: box, and what a caller pays for above it buys stability as well as makespan. The stabilization before it frees
#: only the operations the plan moved; the count over every free operation finds plans that move fewer (a moved
#: operation put back needs room another one gives up). Measured on the bench's own TA 20x15 scenarios
#: (bench/README.md, issue 17, "Stability for the effort"): at effort 2 / 4, 0.837 / 0.781 of a 10 s global
#: re-solve's moves without it, 0.755 / 0.718 with it, at the same makespan.
STABILITY_FROM = 1.0

Validator = Callable[[Schedule], bool]


def _arcs(plan: Schedule, window: set[Key], free: set[Key]) -> list[tuple[Key, Key]]:
    """Keep the incumbent's machine order among free operations outside the window, and keep every window
    operation between its nearest outside neighbours: only the window is re-sequenced."""
    arcs: list[tuple[Key, Key]] = []
    for seq in plan.machine_sequences().values():
        ops = [k for k in seq if k in free]
        last_out: Key | None = None
        pending_window: list[Key] = []
        for k in ops:
            if k in window:
                if last_out is not None:
                    arcs.append((last_out, k))
                pending_window.append(k)
            else:
                if last_out is not None:
                    arcs.append((last_out, k))
                arcs.extend((w, k) for w in pending_window)
                pending_window, last_out = [], k
    return arcs


def _cascade(state: ExecutionState, first: Schedule, affected: set[Key], budget: float, seed: int, workers: int,
             is_valid: Validator, notes: list[str], clock: SearchClock,
             label: str = "cascade") -> tuple[Schedule | None, bool]:
    """The first neighbourhood, the cascade: a time-boxed makespan solve in which only the ``affected``
    operations may move (everything else pinned at its planned start), hinted with the first edit; it stops
    early when it proves optimality. Returns its plan when shorter than the first edit's and valid (else None),
    and whether the solve proved that nothing shorter exists in the cascade."""
    planned = state.planned_starts()
    pins = {k: planned[k] for k in state.free - affected}
    request = disrupted_request(state, pins=pins, hint=first, time_limit=budget, seed=seed, workers=workers,
                                makespan_limit=first.makespan, clock=clock)
    try:
        result = optimize(request)
    except (InfeasibleError, NoSolutionError) as e:
        notes.append(f"{label}: {type(e).__name__}; the first edit stays")
        return None, False
    notes.append(f"{label} ({len(affected)} ops): makespan {result.objective} ({result.status.value}, "
                 f"bound {result.bound}, {result.seconds:.2f} s)")
    proven = result.status is SolveStatus.OPTIMAL
    if result.objective < first.makespan and is_valid(result.schedule):
        return result.schedule, proven
    return None, proven


def _caps(state: ExecutionState, budget: float, effort: float = 1.0) -> tuple[float, float]:
    """Seconds for the whole repair and for the cascade solve, scaled to the number of free operations and to
    ``effort``, capped by the budget.

    Absolute, not shares of the budget: a repair that takes as long as a global re-solve has lost its point,
    and CP-SAT hinted with AOR gets most of what a short global search can get in a fraction of a second.
    """
    n = len(state.free)
    total = min(budget, effort * max(TOTAL_FLOOR, TOTAL_PER_OP * n))
    # The makespan stage grows with the effort (MAKESPAN_EXPONENT = 1): on the disruption families
    # (bench/README.md) the makespan is what LCRP lacks against a global re-solve, not the moves; measured on
    # ta11-ta12 (20 cases), effort 8: 1.0068 of full's makespan instead of 1.0149 with the square root.
    return total, min(total * CASCADE_MAX_SHARE, effort ** MAKESPAN_EXPONENT * max(CASCADE_FLOOR, CASCADE_PER_OP * n))


def lcrp(state: ExecutionState, *, budget: float, seed: int = 0, workers: int = 2,
         is_valid: Validator, effort: float = 1.0, tolerance: float = 0.0,
         clock: SearchClock | None = None, first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> RepairOutcome:
    """Localized cascading repair of the plan in force.

    Args:
        state: The execution state at the reveal time.
        budget: Upper bound in seconds for the whole repair, fallback included; LCRP usually stops well
            before it (see :func:`_caps`).
        seed: CP-SAT seed.
        workers: CP-SAT workers.
        is_valid: The independent validator's verdict on a candidate plan; no plan it rejects is returned.
        effort: Multiplies the time box and the makespan stage. 1 keeps a 20x15 repair near 0.2 s of search;
            larger efforts buy a shorter plan (``bench/README.md``, the effort/quality curve) and, above
            :data:`STABILITY_FROM`, a count over every free operation for fewer moves at the makespan reached.
        tolerance: How much longer than the repair's own makespan (a fraction of it) the plan may end to keep
            more operations at their planned start: 0 (the default) trades nothing. Above 0 a last count
            solve (:data:`TRADE_PER_OP`) looks for the fewest moves within ``makespan * (1 + tolerance)``.
        clock: What the time box is counted in: deterministic time spent by the solves (the default, so the
            same inputs give the same repair), or wall time (see :mod:`alas_argo.jssp.searching`).
        first_edit: ``tabu`` (the default, :data:`.tabu.DEFAULT_FIRST_EDIT`: the local plan improved by the
            compiled tabu search of :mod:`.tabu` when it is built and the plan is above the bound; its time goes
            on top of the time box, as the re-optimizing search's does, and every stage gets
            :data:`TABU_BOX_SCALE` of its time) or ``redispatch`` (AOR, or the re-dispatched plan when shorter,
            and CP-SAT alone).
    """
    clock = clock if clock is not None else SearchClock()
    first_edit = FirstEdit.parse(first_edit)
    # The search runs on top of the time box, but never past the caller's budget: `--time-limit` bounds the
    # whole repair (swv06 shock-sweep seed 1 of the issue-17 check set searches 3.7 nominal s at effort 1).
    limit = clock.now() + budget
    inst, base = state.instance, state.baseline
    free = state.free
    incumbent, bound = aor(state), lower_bound(state)
    # The search's time and its thresholds (GAP_UNIT, RESTART_MIN_GAP, reoptimizing.STRETCH_MIN_GAP) were tuned
    # on the gap to the cheap bound and scale with it; the tighter bound only says where the makespan is
    # optimal, so nothing searches on past it.
    gap_bound = min(bound, cheap_bound(state))
    notes = [f"aor: makespan {incumbent.makespan}"]
    # Re-dispatching can only help above the bound; each plan is validated once.
    active = redispatch(state) if incumbent.makespan > bound else None
    if active is not None and active.makespan < incumbent.makespan and is_valid(active):
        notes.append(f"re-dispatched in planned order: makespan {active.makespan}")
        incumbent = active
    elif not is_valid(incumbent):
        notes.append("aor plan rejected by the validator; global fallback")
        total = _caps(state, budget, effort)[0]
        notes[0] += f"; time box {total:.2f} s"
        return _fallback(state, incumbent, total, seed, workers, is_valid, notes, growths=0, clock=clock)
    total, cascade_cap = _caps(state, budget, effort)
    changed = state.interrupted | {k for k in free if state.durations[k] != inst.duration(*k)}
    affected = moved_keys(base, incumbent) | changed
    # A breakdown in idle time moves nothing. The plan in force then stays, unless it is above the bound: a
    # disruption is also the moment the plan is revised, and a global re-solve would shorten it (ta14
    # long-breakdown seed 1 of the issue-17 tuning set: the plan in force 1440, 10 s full 1391, the search from
    # the plan 1385), so the re-optimizing search gets its gap-scaled time as for any local plan above the
    # bound. With no events at all there is nothing new to act on (not even for the tabu search).
    absorbed = not affected and bool(state.downtimes) and incumbent.makespan > bound
    if not affected and not absorbed:
        notes[0] += f"; time box {total:.2f} s"
        return RepairOutcome(incumbent, set(), 0, False, [*notes, "0 affected operations", "nothing to repair"])
    global_reason: str | None = None
    asked_effort = effort
    # With the tabu search to run where a global search is needed, every stage gets the tabu's (smaller) box.
    if first_edit is FirstEdit.TABU and incumbent.makespan > bound and tabu_unavailable(len(free)) is None:
        effort *= TABU_BOX_SCALE
        total, cascade_cap = _caps(state, budget, effort)
    deadline = min(limit, clock.now() + total)
    notes[0] += f"; time box {total:.2f} s"
    notes.append(f"{len(affected)} affected operations")
    region = set(affected)
    first = incumbent
    growths = 0
    # Whether a solve over every free operation proved its makespan optimal: then only stability is left.
    settled_globally = False
    # An absorbed disruption has no cascade to solve: straight to the search.
    open_makespan = incumbent.makespan > bound and not absorbed
    # Success: a shorter plan in the cascade, or proof that none exists there (at the bound, none exists
    # anywhere). Either way what is left to gain is stability, and the count solve gets it faster than window
    # solves (measured on the 63 20x15 cases of bench/README.md: 0.73 instead of 0.79 of full's moves at the
    # same makespan). The windows are for a cascade solve that ran out of time without gaining.
    succeeded = not open_makespan
    carried = 0.0
    if open_makespan:
        began = clock.now()
        # The cascade gets the makespan stage, unless it is nearly every free operation: then a CP-SAT solve
        # over it is a global solve, which rarely leaves the first edit in this time (ta13 shock-sweep seed 1:
        # 1740, AOR's makespan, after the whole stage), and the re-optimizing search gets the time instead.
        # What the cascade leaves of its time (it stops when it proves its optimum) goes to that search too.
        if len(affected) >= PROBE_MIN_SHARE * len(free):
            cascade, proven, succeeded = None, False, True
            notes.append(f"cascade ({len(affected)} ops): nearly every free operation; to the re-optimizing search")
        else:
            cascade, proven = _cascade(state, incumbent, affected, cascade_cap, seed, workers, is_valid, notes,
                                       clock)
            succeeded = cascade is not None or proven
        settled_globally = proven and affected >= free
        if cascade is not None:
            incumbent = settled(state, cascade, cascade.makespan, free - region, is_valid)
        carried = max(0.0, cascade_cap - (clock.now() - began))
    if not succeeded:
        incumbent, region, growths, succeeded = _windows(state, incumbent, affected, deadline, seed=seed,
                                                         workers=workers, is_valid=is_valid, notes=notes,
                                                         clock=clock)
    if succeeded and incumbent.makespan > bound:
        # Above the bound the cascade has not settled the makespan, even when it proved its own optimum
        # (everything outside it was pinned): local search over every free operation from the local plan, on
        # top of the time box (so the stabilization keeps its share). The local plan stays unless it is beaten.
        # With first_edit="tabu" the compiled tabu search goes first, from the local plan: a plan that is
        # already at the bound (a local edit reaching what a global one would) never sees it.
        began = clock.now()
        where = (f"the disruption moved nothing, the plan in force is at makespan {incumbent.makespan}" if absorbed
                 else f"the cascade ({len(affected)} operations) stopped at makespan {incumbent.makespan}")
        if first_edit is FirstEdit.TABU:
            improved = tabu_first_edit(state, incumbent, bound=bound, seed=seed, notes=notes, clock=clock,
                                       seconds=limit - clock.now())
            if improved is not None and is_valid(improved):
                global_reason = (f"{where}, above the bound {bound}; the tabu search over all {len(free)} free "
                                 f"operations reached {improved.makespan}")
                incumbent, region = improved, set(free)
            elif improved is not None:
                notes.append("tabu first edit: plan rejected by the validator; the local plan stands")
        found = None
        if incumbent.makespan > bound:
            cap = _search_cap(state, incumbent.makespan, gap_bound, effort)
            found = _search(state, incumbent, cap + carried, (bound, gap_bound), effort, seed, is_valid, notes,
                            clock, limit=limit)
            reached = incumbent if found is None else found
            if reached.makespan > max(bound, gap_bound * (1 + RESTART_MIN_GAP)):
                again = _search(state, first, cap, (bound, gap_bound), effort, seed + RESTART_STREAM, is_valid,
                                notes, clock, label="from the first edit", limit=limit)
                if again is not None and again.makespan < reached.makespan:
                    found = again
        if found is not None:
            global_reason = global_reason or (
                f"{where}, above the bound {bound}; local search over all {len(free)} free operations reached "
                f"{found.makespan}")
            incumbent, region = found, set(free)
        deadline = min(limit, deadline + clock.now() - began - carried)
    if succeeded:
        incumbent = stabilized(state, incumbent, region, deadline - clock.now(), seed=seed, workers=workers,
                               is_valid=is_valid, notes=notes, clock=clock)
        # The count solves often prove their optimum early: what they leave of a large box goes back to the
        # makespan, a global solve hinted with the stabilized plan, then to stability again.
        for _ in range(EXTRA_ROUNDS):
            left = deadline - clock.now()
            if settled_globally or incumbent.makespan <= bound or left < 2 * PROBE_FLOOR:
                break
            probe = _search(state, incumbent, left * (1 - STABILITY_RESERVE), (bound, gap_bound), effort, seed,
                            is_valid, notes, clock, limit=limit)
            if probe is None:
                break
            global_reason = global_reason or (
                f"with {left:.2f} s of the box left at makespan {incumbent.makespan}, above the bound {bound}, "
                f"local search over all {len(free)} free operations reached {probe.makespan}")
            region = set(free)
            incumbent = stabilized(state, probe, region, deadline - clock.now(), seed=seed, workers=workers,
                                   is_valid=is_valid, notes=notes, clock=clock)
    polished = settled(state, incumbent, incumbent.makespan, free - region, is_valid)
    if polished is not incumbent:
        notes.append(f"settle and restore: {moved_operations(base, incumbent) - moved_operations(base, polished)}"
                     " operations back at their planned start")
        incumbent = polished
    if not succeeded:
        return _fallback(state, incumbent, deadline - clock.now(), seed, workers, is_valid, notes, growths,
                         clock=clock)
    # Above effort 1 the count stage runs without a tolerance too, at the makespan reached (see STABILITY_FROM).
    share = 1.0 if tolerance > 0 else min(1.0, max(0.0, asked_effort - STABILITY_FROM))
    if share > 0:
        # Stability bought with makespan the caller allowed, or with the effort: on top of the box, as the search is.
        # Every free operation may move, so the neighbourhood grows by whatever the count moves outside it.
        seconds = min(limit - clock.now(), share * effort * max(TRADE_FLOOR, TRADE_PER_OP * len(free)))
        if tolerance == 0:
            notes.append(f"effort {asked_effort:g}: every free operation may move for fewer moves at makespan "
                         f"{incumbent.makespan}")
        incumbent = stabilized(state, incumbent, free, seconds, seed=seed, workers=workers, is_valid=is_valid,
                               notes=notes, clock=clock, every=True, chunk=TRADE_CHUNK,
                               makespan_limit=math.floor(incumbent.makespan * (1 + tolerance)))
        region |= moved_keys(base, incumbent)
    return RepairOutcome(incumbent, region, growths, False, notes, global_reason=global_reason)


def _search_cap(state: ExecutionState, makespan: int, bound: int, effort: float) -> float:
    """Nominal seconds for the re-optimizing search after the local plan: per free operation, times ``effort``,
    and times how far the plan is above the bound (one more share of :data:`GAP_UNIT` per ``GAP_UNIT`` of
    relative gap, at most :data:`GAP_MAX_FACTOR` in all).

    The gap is where the makespan is lost: measured on the issue-17 tuning set at effort 1, LCRP's excess over
    a 10 s global re-solve grew with the first edit's gap to the bound (every case above 2 % had a gap of at
    least 0.077, the four multi-breakdown ones 0.15-0.24: two machines down early), while plans near the
    bound stop early anyway, so the median repair keeps its time.
    """
    scale = min(GAP_MAX_FACTOR, 1 + max(0, makespan - bound) / max(1, bound) / GAP_UNIT)
    return effort * max(REOPT_FLOOR, REOPT_PER_OP * len(state.free)) * scale


def _search(state: ExecutionState, incumbent: Schedule, seconds: float, bounds: tuple[int, int], effort: float,
            seed: int, is_valid: Validator, notes: list[str], clock: SearchClock, *, limit: float,
            label: str = "") -> Schedule | None:
    """The re-optimizing local search from ``incumbent`` (:mod:`.reoptimizing`), its stretches included never
    past ``limit`` on ``clock``: its plan when shorter and valid, else None. ``bounds``: where it stops (the
    lower bound) and what its stretches measure the gap against (the cheap bound)."""
    bound, gap_bound = bounds
    began = clock.now()
    ceiling = max(0.0, limit - began)
    moves = max(1, round(effort * REOPT_MOVES * len(state.free)))
    if clock.streams <= 1:
        found = reoptimized(state, incumbent, seconds=seconds, bound=bound, seed=seed, clock=clock, max_moves=moves,
                            ceiling=ceiling, gap_bound=gap_bound)
    else:
        found = _side_by_side(state, incumbent, seconds=seconds, bound=bound, seed=seed, clock=clock,
                              max_moves=moves, ceiling=ceiling, gap_bound=gap_bound)
    # A search still gaining far above the bound runs on (reoptimizing.STRETCHES): say how long it ran.
    notes.append(f"re-optimizing search{' ' + label if label else ''} ({min(seconds, ceiling):.2f} s, "
                 f"{clock.now() - began:.2f} s used): "
                 f"{'makespan ' + str(found.makespan) if found is not None else 'nothing shorter'}")
    if found is not None and not is_valid(found):
        notes.append("re-optimizing search: candidate rejected by the validator")
        return None
    return found


def _side_by_side(state: ExecutionState, incumbent: Schedule, *, seconds: float, bound: int, seed: int,
                  clock: SearchClock, max_moves: int, ceiling: float, gap_bound: int | None = None) -> Schedule | None:
    """The re-optimizing search as ``clock.streams`` independent streams side by side (one thread each, seeds
    :data:`STREAM_SEED_STEP` apart, stream 0 the one a single stream runs), each with the whole time: the
    shortest plan, the lowest stream on ties.

    Each stream is reproducible on its own and the pick is a fixed rule, so the repair is too. The clock is
    charged the longest stream's time: the streams run at the same time, each on its own core (CP-SAT releases
    the GIL while it solves; the Python work between the solves takes turns).
    """
    forks = [clock.fork() for _ in range(clock.streams)]
    with ThreadPoolExecutor(max_workers=len(forks), thread_name_prefix="alas-search") as pool:
        futures = [pool.submit(reoptimized, state, incumbent, seconds=seconds, bound=bound,
                               seed=seed + k * STREAM_SEED_STEP, clock=fork, max_moves=max_moves, ceiling=ceiling,
                               gap_bound=gap_bound)
                   for k, fork in enumerate(forks)]
        found = [f.result() for f in futures]
    clock.join(forks)
    shorter = [(plan.makespan, k, plan) for k, plan in enumerate(found) if plan is not None]
    return min(shorter, key=lambda t: t[:2])[2] if shorter else None


def _windows(state: ExecutionState, incumbent: Schedule, affected: set[Key], deadline: float, *, seed: int,
             workers: int, is_valid: Validator, notes: list[str],
             clock: SearchClock) -> tuple[Schedule, set[Key], int, bool]:
    """Growing time windows on the touched machines (plus the cascade): re-sequence inside, everything else
    pinned, while a step is infeasible or gains more than it costs; each step seeks a shorter makespan first.
    Returns the incumbent, the neighbourhood, the growth steps and whether any step succeeded."""
    inst, base, free = state.instance, state.baseline, state.free
    planned = state.planned_starts()
    weight = max(1, len(free))

    def cost(plan: Schedule) -> tuple[int, int, int]:
        return plan.makespan, moved_operations(base, plan), total_start_shift(base, plan)

    def worth(plan: Schedule) -> float:
        return weight * plan.makespan + moved_operations(base, plan)

    touched = {inst.machine(*k) for k in affected} | {m for m, _, _ in state.downtimes}
    horizon_end = max((planned[k] for k in free), default=state.time)
    # Start with a window of about twice the disruption: enough room to absorb it in the best case.
    width = max(2 * disruption_size(state), 2 * sum(state.durations.values()) // max(1, len(state.durations)))
    region, growths, succeeded = set(affected), 0, False
    for step in range(MAX_GROWTHS + 1):
        remaining = deadline - clock.now()
        if remaining <= 0.01:
            notes.append("time box spent")
            break
        covers_all = state.time + width > horizon_end
        machines = set(range(inst.num_machines)) if covers_all else touched
        window = {k for k in free if planned[k] < state.time + width and inst.machine(*k) in machines}
        new_region = window | affected
        if new_region - region and step:
            growths += 1
        pins = {k: planned[k] for k in free if k not in new_region}
        step_limit = max(STEP_FLOOR, STEP_PER_OP * len(new_region))
        # The incumbent's makespan is a hard limit: a neighbourhood that cannot meet it is too small.
        request = disrupted_request(
            state, pins=pins, hint=incumbent, seed=seed, workers=workers, time_limit=min(step_limit, remaining),
            makespan_limit=incumbent.makespan, precedences=_arcs(incumbent, window, free - set(pins)), clock=clock)
        try:
            found = solve_neighbourhood(request, planned, minimize_makespan=True)
        except (InfeasibleError, NoSolutionError) as e:
            found = None
            notes.append(f"window {width}: {type(e).__name__}; growing")
        if found is None or not is_valid(found):
            if found is not None:
                notes.append(f"window {width}: candidate rejected by the validator; growing")
            elif not notes[-1].startswith(f"window {width}:"):
                notes.append(f"window {width}: makespan {incumbent.makespan} not met in {step_limit:.2f} s; "
                             "growing")
            region = new_region if succeeded else region
            if covers_all:
                break
            width *= 2
            continue
        succeeded = True
        gain, edit_cost = worth(incumbent) - worth(found), EDIT_COST * len(new_region - region)
        notes.append(f"window {width} ({len(window)} ops, {len(new_region)} editable): makespan "
                     f"{found.makespan}, gain {gain}, edit cost {edit_cost}")
        # Makespan first, then moves and shift: a shorter plan wins even when it moves more.
        if cost(found) <= cost(incumbent):
            incumbent = found
        region = new_region
        if covers_all or gain <= edit_cost:
            if not covers_all:
                notes.append("gain no longer exceeds the edit cost; stop")
            break
        width *= 2
    return incumbent, region, growths, succeeded


def _fallback(state: ExecutionState, incumbent: Schedule, budget: float, seed: int, workers: int,
              is_valid: Validator, notes: list[str], growths: int, *, clock: SearchClock) -> RepairOutcome:
    """Global re-solve hinted with the incumbent; the incumbent stays when the re-solve is no better."""
    try:
        plan = full(state, incumbent, budget=max(0.05, budget), seed=seed, workers=workers, clock=clock).schedule
    except (InfeasibleError, NoSolutionError) as e:
        notes.append(f"fallback failed: {e}")
        plan = incumbent
    if not is_valid(plan):
        notes.append("fallback plan rejected by the validator; keeping the incumbent")
        plan = incumbent
    return RepairOutcome(plan, set(state.free), growths, True, [*notes, "global fallback"],
                         global_reason="no local step produced a plan the validator accepts: global fallback")
