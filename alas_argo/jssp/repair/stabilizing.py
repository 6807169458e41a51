"""Pulling a repaired plan back towards the plan in force, at its makespan.

Two tools LCRP finishes with: :func:`settled`, linear passes that re-time a plan in its own machine order
(:mod:`.settling`), and :func:`stabilized`, a count-only CP-SAT solve for the fewest moved operations inside
a neighbourhood (:func:`.subproblem.fewest_moves`). Both return the plan they were given unless the
validator accepts something that moves fewer operations at no longer makespan.
"""

from __future__ import annotations

from collections.abc import Callable, Set

from alas_argo.errors import InfeasibleError, NoSolutionError
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.repair.resolving import disrupted_request
from alas_argo.jssp.repair.settling import restore, settle
from alas_argo.jssp.repair.subproblem import fewest_moves
from alas_argo.jssp.schedule import Schedule

__all__ = ["MIN_SECONDS", "settled", "stabilized"]

#: Below this a count-only solve rarely gets past presolve: not worth building the model.
MIN_SECONDS = 0.03

Validator = Callable[[Schedule], bool]


def stabilized(state: ExecutionState, plan: Schedule, region: Set[Key], seconds: float, *, seed: int, workers: int,
               is_valid: Validator, notes: list[str]) -> Schedule:
    """What is left of the time box, spent keeping operations at their planned start: the fewest moved
    operations inside ``region`` at ``plan``'s makespan, everything outside it held where ``plan`` has it."""
    if seconds < MIN_SECONDS:
        return plan
    base, starts = state.baseline, plan.starts()
    planned = base.starts()
    # Only the operations ``plan`` moved may move: measured on 20x15 disruptions, the least-shift re-solve's
    # moved operations are nearly all among a repair's, and the smaller model counts much faster (0.70 instead
    # of 0.73 of a makespan-only re-solve's moves in 0.6 s).
    editable = {k for k in region if starts[k] != planned[k]}
    request = disrupted_request(state, pins={k: starts[k] for k in state.free - editable}, hint=plan, seed=seed,
                                workers=workers, time_limit=seconds, makespan_limit=plan.makespan)
    try:
        found = fewest_moves(request, planned)
    except (InfeasibleError, NoSolutionError):
        return plan
    if found is None:
        return plan
    # Counting leaves the moved operations wherever the search dropped them: settle them back.
    found = settled(state, found, plan.makespan, state.free - region, is_valid)
    before, after = moved_operations(base, plan), moved_operations(base, found)
    if after < before and found.makespan <= plan.makespan:
        if is_valid(found):
            notes.append(f"fewest moves in {seconds:.2f} s: {before} -> {after} moved")
            return found
        notes.append("fewest moves: candidate rejected by the validator")
    return plan


def settled(state: ExecutionState, plan: Schedule, target: int, held: Set[Key], is_valid: Validator) -> Schedule:
    """``plan`` settled in its machine order, then greedily restored: the result when it is valid and
    moves fewer operations, else ``plan``."""
    base = state.baseline
    best = plan
    candidate = restore(state, settle(state, plan, target, held=held))
    if (candidate.makespan <= max(target, plan.makespan)
            and moved_operations(base, candidate) < moved_operations(base, plan)
            and _holds(candidate, plan, held) and is_valid(candidate)):
        best = candidate
    return best


def _holds(candidate: Schedule, plan: Schedule, held: Set[Key]) -> bool:
    now, before = candidate.starts(), plan.starts()
    return all(now[k] == before[k] for k in held)
