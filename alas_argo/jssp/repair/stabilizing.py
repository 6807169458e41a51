"""Pulling a repaired plan back towards the plan in force, at its makespan.

Two tools LCRP finishes with: :func:`settled`, linear passes that re-time a plan in its own machine order
(:mod:`.settling`), and :func:`stabilized`, count-only CP-SAT solves for the fewest moved operations inside
a neighbourhood (:func:`.subproblem.fewest_moves`), in chunks when there are many. Both return the plan they
were given unless the validator accepts something that moves fewer operations at no longer makespan.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Set

from alas_argo.errors import InfeasibleError, NoSolutionError
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations
from alas_argo.jssp.repair.resolving import disrupted_request
from alas_argo.jssp.repair.settling import restore, settle
from alas_argo.jssp.repair.subproblem import fewest_moves
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock

__all__ = ["CHUNK", "COUNT_CHARGE_PER_OP", "MIN_SECONDS", "NEIGHBOURHOOD_FIRST", "NEIGHBOURHOOD_JOBS",
           "NEIGHBOURHOOD_MIN_CHARGE", "NEIGHBOURHOOD_SECONDS", "WIP_WEIGHT", "settled", "stabilized",
           "weighted_moves"]

#: Below this a count-only solve rarely gets past presolve: not worth building the model.
MIN_SECONDS = 0.03
#: The most operations one count solve frees. Measured on 50x20 disruptions (0.7 s, about 550 moved
#: operations): chunks of 150 leave 1610 moved on 6 cases where one solve over all of them leaves 2558 (its
#: search does not converge in time); on 20x15, where a chunk is nearly the whole set, no difference.
CHUNK = 150
#: With ``every`` (a trade of makespan for moves), a count over every operation converges slowly: after the
#: first count (NEIGHBOURHOOD_FIRST of the time) the rest goes to count solves of at most NEIGHBOURHOOD_SECONDS
#: in which only the operations the plan moves and every operation of NEIGHBOURHOOD_JOBS random jobs may move.
#: Measured on the bench's own 20x15 scenarios (bench/README.md, "A count by neighbourhoods"): after LCRP at
#: effort 1, 1.4 nominal s of it leave 0.667 of a global re-solve's moves where one count leaves 0.717.
NEIGHBOURHOOD_JOBS = 4
NEIGHBOURHOOD_FIRST = 0.4
NEIGHBOURHOOD_SECONDS = 0.2
#: ... and each is charged at least this much: most of them prove their optimum at once, and building the model
#: is then their real cost, outside CP-SAT's deterministic time (dmu03 breakdown seed 0 at effort 2 and a
#: tolerance of 0.01: 273 neighbourhoods, 4.4 wall s for 1.30 nominal; charged at least 0.01 each, 51
#: neighbourhoods, 1.6 wall s, 55 moved instead of 46).
NEIGHBOURHOOD_MIN_CHARGE = 0.01
#: Count solves on large instances are also charged for the operations they hold: each builds, checks and
#: reads back a model over every free operation (the held ones pinned), and that Python-side cost is not in
#: CP-SAT's deterministic time. On a 300x40 instance (8,785 free operations, a breakdown) a count solve took 229
#: ms of wall time and was charged 4.6 ms, so a 5 s budget ran 1,080 count solves in 247 s. Each is charged at
#: least this per free operation beyond ``searching.UNCHARGED_OPERATIONS`` (there about 25 us each, on ta71 40).
COUNT_CHARGE_PER_OP = 20e-6
#: What moving one operation of the work in progress (started, or next on its machine: what the shop floor has
#: already staged, ALAS paper section 4.1.2) costs in the count, against one for any later operation.
WIP_WEIGHT = 4

Validator = Callable[[Schedule], bool]


def stabilized(state: ExecutionState, plan: Schedule, region: Set[Key], seconds: float, *, seed: int, workers: int,
               is_valid: Validator, notes: list[str], clock: SearchClock | None = None,
               makespan_limit: int | None = None, every: bool = False, chunk: int | None = None) -> Schedule:
    """What is left of the time box, spent keeping operations at their planned start: the fewest moved
    operations inside ``region`` at ``plan``'s makespan (or within ``makespan_limit``, when a caller trades
    makespan for stability), everything outside it held where ``plan`` has it.

    Only the operations ``plan`` moved may move: measured on 20x15 disruptions, the least-shift re-solve's
    moved operations are nearly all among a repair's, and the smaller model counts much faster (0.70 instead
    of 0.73 of a makespan-only re-solve's moves in 0.6 s). More than :data:`CHUNK` of them are counted a chunk
    of consecutive planned starts at a time, everything else held, in passes that alternate the chunk
    boundaries while a pass still gains. ``seconds`` are counted on ``clock`` (deterministic time by default).
    With ``every``, every operation of ``region`` may move, in chunks of ``chunk`` (default :data:`CHUNK`):
    what a makespan tolerance needs, since the moves it saves come from moving some operations ``plan`` kept
    (measured on the issue-17 tuning set at effort 4 and a tolerance of 0.005: 0.667 of full's moves with
    only the moved operations free, 0.635 with every one). There, when one count covers them all, it gets
    :data:`NEIGHBOURHOOD_FIRST` of the time and count solves over smaller neighbourhoods the rest
    (:func:`_by_neighbourhoods`).
    """
    clock = clock if clock is not None else SearchClock()
    limit = plan.makespan if makespan_limit is None else max(plan.makespan, makespan_limit)
    chunk = CHUNK if chunk is None else chunk
    started = clock.now()
    deadline = started + seconds
    planned = state.planned_starts()
    current, solves, offset = plan, 0, 0

    def count(keys: list[Key], seconds: float, hint: Schedule | None = None) -> Schedule:
        nonlocal solves
        solves += 1
        return _fewest(state, current if hint is None else hint, set(keys), seconds, seed, workers, planned, clock,
                       limit)

    while (left := deadline - clock.now()) >= MIN_SECONDS:
        starts = current.starts()
        movable = sorted((k for k in region if every or starts[k] != planned[k]), key=lambda k: (planned[k], k))
        if len(movable) <= chunk:
            current = count(movable, left * NEIGHBOURHOOD_FIRST if every else left)
            if every:
                current = _by_neighbourhoods(current, region, deadline, count, clock, planned, seed)
            break
        before = moved_operations(state.baseline, current)
        cuts = [0, *range(offset, len(movable), chunk)] if offset else list(range(0, len(movable), chunk))
        chunks = [movable[a:b] for a, b in zip(cuts, [*cuts[1:], len(movable)], strict=True) if b > a]
        for i, part in enumerate(chunks):
            left = deadline - clock.now()
            if left < MIN_SECONDS:
                break
            current = count(part, left / (len(chunks) - i))
        if moved_operations(state.baseline, current) >= before:
            # A pass that gains nothing: the rest of the time to all of them at once, from where the chunks are.
            left = deadline - clock.now()
            if left >= MIN_SECONDS:
                current = count(movable, left)
            break
        offset = chunk // 2 if offset == 0 else 0
    if current is plan:
        return plan
    # Counting leaves the moved operations wherever the search dropped them: settle them back.
    found = settled(state, current, limit, state.free - region, is_valid)
    base = state.baseline
    before, after = moved_operations(base, plan), moved_operations(base, found)
    weighed_before, weighed_after = weighted_moves(state, plan), weighted_moves(state, found)
    if weighed_after < weighed_before and found.makespan <= limit:
        if is_valid(found):
            traded = f", makespan {plan.makespan} -> {found.makespan}" if found.makespan != plan.makespan else ""
            # The count weighs work in progress: fewer weighted moves can be more operations moved.
            weighed = "" if after < before else (f" (weighted, work in progress x{WIP_WEIGHT}: "
                                                 f"{weighed_before} -> {weighed_after})")
            notes.append(f"fewest moves in {clock.now() - started:.2f} s ({solves} count solves): "
                         f"{before} -> {after} moved{weighed}{traded}")
            return found
        notes.append("fewest moves: candidate rejected by the validator")
    return plan


def _by_neighbourhoods(plan: Schedule, region: Set[Key], deadline: float,
                       count: Callable[[list[Key], float, Schedule], Schedule], clock: SearchClock,
                       planned: Mapping[Key, int], seed: int) -> Schedule:
    """Count solves until ``deadline``, each over the operations ``plan`` moves and every operation of
    :data:`NEIGHBOURHOOD_JOBS` random jobs in ``region`` (seeded: the same plan on every run); each keeps its
    result only when it counts no more (:func:`_fewest`)."""
    rng = random.Random(seed)
    jobs = sorted({j for j, _ in region})
    current = plan
    while (left := deadline - clock.now()) >= MIN_SECONDS:
        starts, picked = current.starts(), set(rng.sample(jobs, min(NEIGHBOURHOOD_JOBS, len(jobs))))
        editable = sorted(k for k in region if k[0] in picked or starts[k] != planned[k])
        began = clock.now()
        current = count(editable, min(NEIGHBOURHOOD_SECONDS, left), current)
        clock.charge_at_least(began, NEIGHBOURHOOD_MIN_CHARGE)
    return current


def _fewest(state: ExecutionState, plan: Schedule, editable: Set[Key], seconds: float, seed: int,
            workers: int, planned: Mapping[Key, int], clock: SearchClock, limit: int) -> Schedule:
    """One count-only solve with only ``editable`` free to move, work in progress weighted
    (:data:`WIP_WEIGHT`), at makespan ``limit`` at most: its plan when that weighted count is no higher, else
    ``plan``."""
    starts, began = plan.starts(), clock.now()
    request = disrupted_request(state, pins={k: starts[k] for k in state.free - editable}, hint=plan, seed=seed,
                                workers=workers, time_limit=seconds, makespan_limit=limit, clock=clock)
    weights = dict.fromkeys(state.wip(), WIP_WEIGHT)
    try:
        found = fewest_moves(request, planned, weights)
    except (InfeasibleError, NoSolutionError):
        return plan
    finally:
        clock.charge_operations(began, len(state.free), COUNT_CHARGE_PER_OP)
    if found is None or weighted_moves(state, found) > weighted_moves(state, plan):
        return plan
    return found


def weighted_moves(state: ExecutionState, plan: Schedule) -> int:
    """Moved operations, each of the work in progress counted :data:`WIP_WEIGHT` times."""
    wip = state.wip()
    return sum(WIP_WEIGHT if k in wip else 1 for k in moved_keys(state.baseline, plan))


def settled(state: ExecutionState, plan: Schedule, target: int, held: Set[Key], is_valid: Validator) -> Schedule:
    """``plan`` settled in its machine order, then greedily restored: the result when it is valid and
    moves fewer operations, else ``plan``."""
    base = state.baseline
    best = plan
    candidate = restore(state, settle(state, plan, target, held=held), target, held=held)
    if (candidate.makespan <= max(target, plan.makespan)
            and moved_operations(base, candidate) < moved_operations(base, plan)
            and _holds(candidate, plan, held) and is_valid(candidate)):
        best = candidate
    return best


def _holds(candidate: Schedule, plan: Schedule, held: Set[Key]) -> bool:
    now, before = candidate.starts(), plan.starts()
    return all(now[k] == before[k] for k in held)
