"""The LCRP subproblem solves: a neighbourhood's least makespan then least start shift
(:func:`solve_neighbourhood`), and the fewest moved operations at a makespan (:func:`fewest_moves`).

An adapter over the optimizer's model builder (:func:`alas_argo.jssp.modeling.build_model`, the same request
semantics as :func:`alas_argo.jssp.cpsat.optimize`) so that LCRP controls its phases: their budgets, which
phase runs at all (at the lower bound the makespan phase is skipped), the objectives and the solver
parameters. Pinned operations are constants, so the model only holds the neighbourhood.
"""

from __future__ import annotations

from collections.abc import Mapping

from alas_argo.jssp.cpsat import SolveRequest
from alas_argo.jssp.execution import Key
from alas_argo.jssp.modeling import OperationModel, build_model
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.searching import cp_model, new_solver, run_solver

__all__ = ["fewest_moves", "solve_neighbourhood"]


def _solver(request: SolveRequest, seconds: float) -> cp_model.CpSolver:
    return new_solver(seconds=seconds, workers=request.workers, seed=request.seed,
                      deterministic=request.deterministic)


def _read(request: SolveRequest, m: OperationModel, solver: cp_model.CpSolver) -> Schedule:
    inst = request.instance
    ops = [Operation(job=j, step=s, machine=inst.machine(j, s), start=start, end=start + d)
           for (j, s), (start, d) in m.constants.items()]
    for (j, s), var in m.starts.items():
        start = int(solver.value(var))
        ops.append(Operation(job=j, step=s, machine=inst.machine(j, s), start=start, end=start + m.durations[(j, s)]))
    return Schedule.from_operations(inst.name, ops)


def solve_neighbourhood(request: SolveRequest, reference: Mapping[Key, int], *, minimize_makespan: bool,
                        makespan_share: float = 0.5) -> Schedule | None:
    """Solve a neighbourhood request: the least makespan (optionally), then the least total shift.

    Args:
        request: The subproblem (pins, downtimes, release, precedences, ``makespan_limit``, a feasible hint).
        reference: The plan in force's starts; the shift is measured from it.
        minimize_makespan: Run the makespan phase; otherwise the makespan only has to stay within the limit.
        makespan_share: Share of ``request.time_limit`` for the makespan phase.

    Returns:
        The best schedule found; the hint when no phase found one in time but the hint satisfies the request;
        None otherwise (the caller keeps its incumbent).

    Raises:
        InfeasibleError: The subproblem is infeasible before search (pins contradict each other or the
            makespan limit).
    """
    m = _model(request)
    best: Schedule | None = None
    limit = request.makespan_limit
    budget = request.time_limit
    clock = request.search_clock()
    if minimize_makespan:
        m.model.minimize(m.makespan)
        solver = _solver(request, budget * makespan_share)
        began = clock.now()
        if run_solver(solver, m.model, clock, where="a neighbourhood solve") in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            best = _read(request, m, solver)
            limit = best.makespan if limit is None else min(limit, best.makespan)
            m.model.clear_hints()
            for key, var in m.starts.items():
                m.model.add_hint(var, best.by_key()[key].start)
        # A makespan phase that proves optimality early leaves its unused time to the stability phase.
        budget -= clock.now() - began
    if limit is not None:
        m.model.add(m.makespan <= limit)
    shifts = []
    for key, var in m.starts.items():
        if key in reference:
            ref = reference[key]
            shift = m.model.new_int_var(0, m.horizon + abs(ref), f"shift{key}")
            m.model.add_max_equality(shift, [var - ref, ref - var])  # |var - ref| without add_abs_equality
            shifts.append(shift)
    m.model.minimize(sum(shifts))
    solver = _solver(request, budget)
    if run_solver(solver, m.model, clock, where="a neighbourhood solve") in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        candidate = _read(request, m, solver)
        if best is None or candidate.makespan <= best.makespan:
            best = candidate
    if best is None and m.hint_makespan is not None and request.hint is not None:
        # Out of time before the first solution (a loaded machine): a hint that satisfies the request is
        # still an answer, and saying so keeps the caller local instead of sending it to a global fallback.
        best = _hint(request)
    return best


def _model(request: SolveRequest) -> OperationModel:
    return build_model(request.instance, durations=request.durations, fixed=request.fixed, release=request.release,
                       min_starts=request.min_starts, downtimes=request.downtimes, precedences=request.precedences,
                       makespan_limit=request.makespan_limit, horizon=request.horizon, hint=request.hint)


def _moved_flags(m: OperationModel, reference: Mapping[Key, int]) -> list[cp_model.IntVar]:
    """One boolean per free operation with a reference start: false forces it to keep that start."""
    flags = []
    for key, var in m.starts.items():
        if key in reference:
            flag = m.model.new_bool_var(f"moved{key}")
            m.model.add(var == reference[key]).only_enforce_if(~flag)
            flags.append(flag)
    return flags


def _hint(request: SolveRequest) -> Schedule | None:
    return None if request.hint is None else Schedule.from_operations(request.instance.name,
                                                                      list(request.hint.operations))


def fewest_moves(request: SolveRequest, reference: Mapping[Key, int],
                 weights: Mapping[Key, int] | None = None) -> Schedule | None:
    """The fewest operations away from ``reference`` within ``request.makespan_limit``, nothing else.

    ``weights`` makes moving some operations cost more than one (work in progress, see
    :data:`alas_argo.jssp.repair.stabilizing.WIP_WEIGHT`); the others cost one.

    Measured on 20x15 disruptions (hint: a makespan-optimal plan, 2 workers), counting alone beats counting
    with the total shift as a tie-break by a wide margin at short limits (0.70 vs 0.77 of the hint's moves in
    1 s): the shift terms make every move look different and the search wanders. Where the moved operations
    land is left to the caller's settle pass.

    Returns:
        The best schedule found; the hint when the search found none but the hint satisfies the request;
        None otherwise.

    Raises:
        InfeasibleError: The subproblem is infeasible before search.
    """
    m = _model(request)
    if request.makespan_limit is not None:
        m.model.add(m.makespan <= request.makespan_limit)
    flags = _moved_flags(m, reference)
    if request.hint is not None and m.hint_makespan is not None:
        # A complete hint: without the flags' values CP-SAT must repair it first (measured on 20x15
        # disruptions, 0.3 s: 0.81 instead of 0.84 of a makespan-only re-solve's moves).
        starts = request.hint.starts()
        for key, flag in zip((k for k in m.starts if k in reference), flags, strict=True):
            m.model.add_hint(flag, starts[key] != reference[key])
    keys = [k for k in m.starts if k in reference]
    m.model.minimize(sum((weights or {}).get(k, 1) * f for k, f in zip(keys, flags, strict=True)))
    solver = _solver(request, request.time_limit)
    # Measured on 20x15 disruptions with the moved operations as the only variables (0.2 s boxes): presolve
    # costs more than it saves (0.74 instead of 0.79 of a makespan-only re-solve's moves).
    solver.parameters.cp_model_presolve = False
    if run_solver(solver, m.model, request.search_clock(), where="a count solve") in (
            cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _read(request, m, solver)
    return _hint(request) if m.hint_makespan is not None else None

