"""The CP-SAT job-shop optimizer: one request model, one result model, named errors instead of None.

Only *free* operations become interval variables. Pinned operations (``fixed``) and machine downtimes are
constant intervals in the machines' no-overlap constraints, and pinned intervals that end before every
free operation on their machine could start are dropped altogether, so that re-optimizing a small
neighbourhood inside a 100x20 instance builds and solves in milliseconds.

The result is never worse than a feasible hint: if the search ends with nothing at least as good, the hint
comes back with status ``HINT`` (a solution only equal to it is the solver's own, not ``improved``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from alas_argo.errors import ContractError, InfeasibleError, InputError, NoSolutionError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import Key, OperationModel, ProgressEvent, build_model
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.searching import SearchClock, cp_model, new_solver, run_solver

__all__ = ["ProgressEvent", "SolveRequest", "SolveResult", "SolveStatus", "StabilityObjective", "optimize"]

_EMPTY: Mapping[Key, int] = MappingProxyType({})


class StabilityObjective(StrEnum):
    """How the optimizer trades makespan against moving operations away from a reference plan."""

    NONE = "none"  #: makespan only
    TOTAL_SHIFT = "total_shift"  #: lexicographic: best makespan, then min sum |start - reference|
    WEIGHTED = "weighted"  #: one phase: makespan * weight + sum |start - reference|


class SolveStatus(StrEnum):
    """What the solver achieved."""

    OPTIMAL = "optimal"  #: makespan proven optimal (for the request's constraints)
    FEASIBLE = "feasible"  #: a solution, optimality not proven
    HINT = "hint"  #: the hint came back because the search found nothing better


@dataclass(frozen=True)
class SolveRequest:
    """Everything one CP-SAT solve needs. Times are integers; keys are (job, step).

    Attributes:
        instance: The instance; its nominal durations apply unless ``durations`` overrides them.
        time_limit: Nominal seconds: deterministic time (see ``deterministic``) or wall time.
        workers: CP-SAT search workers.
        seed: CP-SAT random seed.
        hint: A warm start. When it is feasible for this request the result is never worse than it.
        durations: (job, step) -> duration overriding the nominal one (disruptions).
        fixed: (job, step) -> pinned start. Pinned operations are constants, not variables: they keep their
            start exactly and block their machine; neighbourhood repair pins everything outside it.
        release: Every non-fixed operation starts at or after this time (the disruption's reveal time).
        min_starts: (job, step) -> earliest start of that non-fixed operation (e.g. an interrupted
            operation restarting after a downtime).
        downtimes: (machine, start, end): nothing runs on the machine in [start, end).
        reference: A previous plan's starts, for the stability objective and ``total_shift``.
        stability: The stability objective (see :class:`StabilityObjective`).
        stability_time_fraction: Share of ``time_limit`` given to the second phase of TOTAL_SHIFT.
        makespan_limit: Require makespan <= this (InfeasibleError when proven impossible).
        horizon: Latest end of any operation; derived from the data when None.
        deterministic: Budget in CP-SAT deterministic time on one search worker (the default), so that the
            same request and seed reproduce the same schedule on any machine under any load (replay, resume);
            False: ``time_limit`` wall seconds on ``workers`` workers (see :mod:`alas_argo.jssp.searching`).
        precedences: Extra (a, b) pairs: operation a ends before operation b starts. LNS uses them to keep
            the machine order of the operations outside its neighbourhood.
        makespan_weight: Weight of the makespan in the WEIGHTED objective; None means the number of
            operations with a reference start (one time unit of makespan is worth one unit of shift on
            every operation).
        clock: The clock a caller spending one budget over several solves reads (each solve is charged to
            it); None: the solve keeps its own.
    """

    instance: Instance
    time_limit: float = 10.0
    workers: int = 2
    seed: int = 0
    hint: Schedule | None = None
    durations: Mapping[Key, int] = field(default_factory=lambda: _EMPTY)
    fixed: Mapping[Key, int] = field(default_factory=lambda: _EMPTY)
    release: int = 0
    min_starts: Mapping[Key, int] = field(default_factory=lambda: _EMPTY)
    downtimes: Sequence[tuple[int, int, int]] = ()
    reference: Mapping[Key, int] | None = None
    stability: StabilityObjective = StabilityObjective.NONE
    stability_time_fraction: float = 0.5
    makespan_limit: int | None = None
    horizon: int | None = None
    deterministic: bool = True
    precedences: Sequence[tuple[Key, Key]] = ()
    makespan_weight: int | None = None
    clock: SearchClock | None = field(default=None, compare=False, repr=False)

    def search_clock(self) -> SearchClock:
        """The request's clock, or a new one of its kind."""
        return self.clock if self.clock is not None else SearchClock(deterministic=self.deterministic)


@dataclass(frozen=True)
class SolveResult:
    """What a solve produced.

    Attributes:
        schedule: The complete schedule (pinned operations included).
        status: OPTIMAL, FEASIBLE or HINT.
        objective: Its makespan.
        bound: A proven lower bound on the makespan under the request's constraints.
        seconds: Wall time spent.
        total_shift: Sum of |start - reference| over operations with a reference start, else None.
        improved: True when the schedule is strictly shorter than the hint (always True without a hint).
        limits: What makes the search reproducible (:meth:`SearchClock.record`): the kind of limit, search
            workers, deterministic time spent.
    """

    schedule: Schedule
    status: SolveStatus
    objective: int
    bound: int
    seconds: float
    total_shift: int | None
    improved: bool
    limits: Mapping[str, Any] = field(default_factory=dict)


def _reporter(model: OperationModel, phase: str, started: float,
              progress: Callable[[ProgressEvent], None]) -> cp_model.CpSolverSolutionCallback:
    """A solution callback forwarding each improving solution to the caller's progress callback."""

    # Defined per call, not at import: OR-Tools is imported when a solve first needs it (alas_argo.deferred).
    class _Reporter(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            progress(ProgressEvent(phase=phase, makespan=int(self.value(model.makespan)),
                                   bound=int(self.best_objective_bound) if phase == "cpsat" else 0,
                                   seconds=time.monotonic() - started))

    return _Reporter()


def _parameters(request: SolveRequest, seconds: float) -> cp_model.CpSolver:
    return new_solver(seconds=seconds, workers=request.workers, seed=request.seed,
                      deterministic=request.deterministic)


def _schedule(request: SolveRequest, m: OperationModel, solver: cp_model.CpSolver) -> Schedule:
    ops = [Operation(job=j, step=s, machine=request.instance.machine(j, s), start=start, end=start + d)
           for (j, s), (start, d) in m.constants.items()]
    for (j, s), var in m.starts.items():
        start = int(solver.value(var))
        ops.append(Operation(job=j, step=s, machine=request.instance.machine(j, s), start=start,
                             end=start + m.durations[(j, s)]))
    return Schedule.from_operations(request.instance.name, ops)


def _total_shift(schedule: Schedule, reference: Mapping[Key, int] | None) -> int | None:
    if reference is None:
        return None
    return sum(abs(o.start - reference[o.key]) for o in schedule.operations if o.key in reference)


def _add_shift_terms(request: SolveRequest, m: OperationModel) -> list[cp_model.IntVar]:
    terms = []
    for key, var in m.starts.items():
        if request.reference is None or key not in request.reference:
            continue
        diff = var - request.reference[key]
        shift = m.model.new_int_var(0, m.horizon + abs(request.reference[key]), f"shift{key}")
        m.model.add_max_equality(shift, [diff, -diff])  # |diff|, without add_abs_equality
        terms.append(shift)
    return terms


def optimize(request: SolveRequest, *, progress: Callable[[ProgressEvent], None] | None = None) -> SolveResult:
    """Solve the request with CP-SAT.

    Raises:
        InputError: The request names operations or machines the instance does not have.
        InfeasibleError: The request is proven infeasible (pinned operations collide, the makespan limit
            cannot be met, ...).
        NoSolutionError: The time ran out before any solution and there was no usable hint.
    """
    started = time.monotonic()
    clock = request.search_clock()
    began = clock.now()
    if request.stability is not StabilityObjective.NONE and request.reference is None:
        raise InputError(f"stability objective {request.stability.value} needs a reference plan")
    if request.makespan_weight is not None and request.makespan_weight < 1:
        # A weight of 0 would drop the makespan from the objective; it was read as "not given" before.
        raise InputError("the makespan weight must be at least 1 (None for the default), got "
                         f"{request.makespan_weight}")
    m = build_model(request.instance, durations=request.durations, fixed=request.fixed,
                    release=request.release, min_starts=request.min_starts, downtimes=request.downtimes,
                    precedences=request.precedences, makespan_limit=request.makespan_limit,
                    horizon=request.horizon, hint=request.hint)
    hint_makespan = m.hint_makespan  # None when there is no hint or it is infeasible for this request
    shifts = _add_shift_terms(request, m) if request.stability is not StabilityObjective.NONE else []
    two_phase = request.stability is StabilityObjective.TOTAL_SHIFT and bool(shifts)
    if request.stability is StabilityObjective.WEIGHTED and shifts:
        m.model.minimize(_weight(request) * m.makespan + sum(shifts))
    else:
        m.model.minimize(m.makespan)
    first_share = 1.0 - request.stability_time_fraction if two_phase else 1.0
    solver = _parameters(request, request.time_limit * first_share)
    callback = _reporter(m, "cpsat", started, progress) if progress else None
    code = run_solver(solver, m.model, clock, callback, where="the CP-SAT solve")
    if code == cp_model.MODEL_INVALID:
        raise ContractError(f"CP-SAT rejected the model: {m.model.validate()}")
    if code == cp_model.INFEASIBLE:
        raise InfeasibleError("no schedule satisfies the request's constraints", where=request.instance.name)
    bound = max(m.trivial_bound, int(solver.best_objective_bound)
                if request.stability is not StabilityObjective.WEIGHTED or not shifts else 0)
    hint = _usable_hint(request, hint_makespan)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        schedule = _schedule(request, m, solver)
    elif hint is not None:
        schedule = hint
    else:
        raise NoSolutionError(f"no solution within {request.time_limit:g} s", where=request.instance.name)
    proven = code == cp_model.OPTIMAL and not (request.stability is StabilityObjective.WEIGHTED and shifts)
    if hint is not None and _key(request, hint) < _key(request, schedule):
        schedule = hint  # the search found nothing as good as the warm start
    if two_phase:
        # Phase 2: hold the best makespan found, minimize the total shift, start from that schedule.
        m.model.clear_hints()
        by_key = schedule.by_key()
        for key, var in m.starts.items():
            m.model.add_hint(var, by_key[key].start)
        m.model.add(m.makespan <= schedule.makespan)
        m.model.minimize(sum(shifts))
        solver2 = _parameters(request, max(0.05, request.time_limit - (clock.now() - began)))
        callback2 = _reporter(m, "stability", started, progress) if progress else None
        if run_solver(solver2, m.model, clock, callback2, where="the stability solve") in (
                cp_model.OPTIMAL, cp_model.FEASIBLE):
            candidate = _schedule(request, m, solver2)
            if _key(request, candidate) <= _key(request, schedule):
                schedule = candidate
    seconds = time.monotonic() - started
    limits = clock.record(request.workers)
    if hint is not None and schedule is hint:
        return SolveResult(schedule=hint, status=SolveStatus.HINT, objective=hint.makespan,
                           bound=min(bound, hint.makespan), seconds=seconds,
                           total_shift=_total_shift(hint, request.reference), improved=False, limits=limits)
    status = SolveStatus.OPTIMAL if proven or schedule.makespan <= bound else SolveStatus.FEASIBLE
    return SolveResult(schedule=schedule, status=status, objective=schedule.makespan,
                       bound=min(bound, schedule.makespan), seconds=seconds,
                       total_shift=_total_shift(schedule, request.reference),
                       improved=hint is None or schedule.makespan < hint.makespan, limits=limits)


def _usable_hint(request: SolveRequest, hint_makespan: int | None) -> Schedule | None:
    """The hint, normalized, when it is feasible for the request; else None."""
    if request.hint is None or hint_makespan is None:
        return None
    return Schedule.from_operations(request.instance.name, list(request.hint.operations))


def _weight(request: SolveRequest) -> int:
    """Makespan weight of the WEIGHTED objective: as given, else the number of free operations with a
    reference start."""
    if request.makespan_weight is not None:
        return request.makespan_weight
    jobs = request.instance.jobs
    reference = request.reference or {}
    return max(1, sum(1 for j, s in reference if (j, s) not in request.fixed
                      and 0 <= j < len(jobs) and 0 <= s < len(jobs[j])))


def _key(request: SolveRequest, schedule: Schedule) -> tuple[int, int]:
    """How the request ranks schedules (smaller is better): by its objective, makespan first."""
    shift = _total_shift(schedule, request.reference) or 0
    if request.stability is StabilityObjective.WEIGHTED and request.reference is not None:
        return (_weight(request) * schedule.makespan + shift, 0)
    if request.stability is StabilityObjective.TOTAL_SHIFT:
        return (schedule.makespan, shift)
    return (schedule.makespan, 0)
