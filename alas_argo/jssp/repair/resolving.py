"""Global re-solves with CP-SAT: ``full`` (makespan) and ``full-stable`` (then the least total shift).

Both re-plan every free operation of the execution state (pending and interrupted) with the frozen ones
pinned, warm-started from the AOR plan so that the answer is never worse than the sequence-keeping repair.
:func:`disrupted_request` is also the one place LCRP builds its neighbourhood subproblems from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from alas_argo.jssp.cpsat import SolveRequest, SolveResult, StabilityObjective, optimize
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock

__all__ = ["disrupted_request", "full", "full_stable"]


def disrupted_request(
    state: ExecutionState,
    *,
    pins: Mapping[Key, int],
    hint: Schedule | None,
    time_limit: float,
    seed: int = 0,
    workers: int = 2,
    stability: StabilityObjective = StabilityObjective.NONE,
    makespan_limit: int | None = None,
    stability_time_fraction: float = 0.5,
    precedences: Sequence[tuple[Key, Key]] = (),
    clock: SearchClock | None = None,
) -> SolveRequest:
    """A CP-SAT request for the disrupted problem with ``pins`` (frozen operations included) as constants.

    The stability reference is always the plan in force, so "shift" means distance from what the shop
    floor was told. The solve is charged to ``clock`` and limited the way it counts (deterministic time by
    default, see :mod:`alas_argo.jssp.searching`).
    """
    pins = {**pins, **state.frozen_starts()}
    return SolveRequest(
        instance=state.instance,
        time_limit=max(0.01, time_limit),
        workers=workers,
        seed=seed,
        hint=hint,
        durations=state.durations,
        fixed=pins,
        release=state.time,
        min_starts=state.min_starts(pins.keys()),
        downtimes=state.downtimes,
        reference=state.planned_starts() if stability is not StabilityObjective.NONE else None,
        stability=stability,
        stability_time_fraction=stability_time_fraction,
        makespan_limit=makespan_limit,
        precedences=precedences,
        deterministic=clock.deterministic if clock is not None else True,
        clock=clock,
    )


def full(state: ExecutionState, hint: Schedule, *, budget: float, seed: int = 0, workers: int = 2,
         clock: SearchClock | None = None) -> SolveResult:
    """Re-solve all free operations for the least makespan within ``budget`` nominal seconds of ``clock``.

    Raises:
        InfeasibleError: the disrupted problem has no solution (cannot happen when ``hint`` is feasible).
        NoSolutionError: no solution in time and no usable hint.
    """
    return optimize(disrupted_request(state, pins={}, hint=hint, time_limit=budget, seed=seed, workers=workers,
                                      clock=clock))


def full_stable(state: ExecutionState, hint: Schedule, *, budget: float, seed: int = 0, workers: int = 2,
                clock: SearchClock | None = None) -> SolveResult:
    """Re-solve all free operations: least makespan first, then the least total start shift at it.

    The budget is split evenly between the two phases.
    """
    return optimize(disrupted_request(state, pins={}, hint=hint, time_limit=budget, seed=seed, workers=workers,
                                      stability=StabilityObjective.TOTAL_SHIFT, clock=clock))
