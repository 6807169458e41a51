"""Repair of a plan after a disruption: one entry point, five methods, validated results.

``repair(instance, schedule, disruption, method)`` checks its input, derives the execution state, runs the
method, has the independent validator (:mod:`alas_argo.jssp.validate`) judge the repaired plan, and measures
what the repair changed. No plan the validator rejects is ever returned.
"""

from __future__ import annotations

import time

from alas_argo.errors import ContractError, InputError
from alas_argo.jssp.disruption import Disruption, DurationChange
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.lcrp import lower_bound
from alas_argo.jssp.repair.methods import Repairer, RepairMethod, get_repairer
from alas_argo.jssp.repair.metrics import (
    moved_operations,
    resequenced_machines,
    total_start_shift,
    touched_machines,
    wip_moved,
)
from alas_argo.jssp.repair.result import RepairOutcome, RepairResult
from alas_argo.jssp.repair.tabu import DEFAULT_FIRST_EDIT, FirstEdit
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ValidationReport

__all__ = [
    "DEFAULT_FIRST_EDIT",
    "MAX_EFFORT",
    "MAX_STREAMS",
    "MAX_TOLERANCE",
    "FirstEdit",
    "RepairMethod",
    "RepairOutcome",
    "RepairResult",
    "Repairer",
    "check_effort",
    "check_plan_in_force",
    "check_tolerance",
    "get_repairer",
    "lower_bound",
    "repair",
]

#: The largest LCRP effort accepted: beyond it the time box approaches a global re-solve's budget.
MAX_EFFORT = 100.0
#: The largest makespan tolerance accepted (a fraction of the repair's makespan): a plan 10 % longer to keep
#: operations in place is a re-plan's decision, not a repair's.
MAX_TOLERANCE = 0.1
#: The most search streams a repair runs side by side (one thread each): more than a machine has cores only
#: makes each stream slower.
MAX_STREAMS = 16


def check_effort(effort: float) -> None:
    """Raise InputError unless ``effort`` is a usable LCRP time-box multiplier, in (0, MAX_EFFORT]."""
    if not 0 < effort <= MAX_EFFORT:
        raise InputError(f"effort must be in (0, {MAX_EFFORT:g}], got {effort:g}")


def check_tolerance(tolerance: float) -> None:
    """Raise InputError unless ``tolerance`` is a usable LCRP makespan tolerance, in [0, MAX_TOLERANCE]."""
    if not 0 <= tolerance <= MAX_TOLERANCE:
        raise InputError(f"tolerance must be in [0, {MAX_TOLERANCE:g}] (a fraction of the makespan, e.g. 0.005 "
                         f"for 0.5 %), got {tolerance:g}")


def _codes(report: ValidationReport) -> str:
    codes: dict[str, int] = {}
    for v in report.violations:
        codes[v.code.value] = codes.get(v.code.value, 0) + 1
    return ", ".join(f"{c} x{n}" for c, n in codes.items())


def check_plan_in_force(instance: Instance, schedule: Schedule, disruption: Disruption) -> None:
    """Reject a plan that was already invalid before the disruption.

    Durations may be nominal or already changed by a carried-forward event of the same disruption (a plan
    committed after an earlier disruption in a sequence).

    Raises:
        InputError: the plan in force fails validation; the message lists the violation codes.
    """
    changes = disruption.duration_changes
    planned = {o.key: o.duration for o in schedule.operations}
    already = [DurationChange(job=j, step=s, duration=d) for (j, s), d in changes.items()
               if planned.get((j, s)) == d]
    report = validate(instance, schedule, disruption=Disruption(time=0, events=already))
    if not report.valid:
        raise InputError(f"the plan in force is invalid before the disruption ({_codes(report)}); "
                         f"first: {report.violations[0].message}", where=f"schedule for {schedule.instance}")


def repair(
    instance: Instance,
    schedule: Schedule,
    disruption: Disruption,
    method: RepairMethod | str = "lcrp",
    budget: float = 10.0,
    *,
    seed: int = 0,
    workers: int = 2,
    effort: float = 1.0,
    tolerance: float = 0.0,
    deterministic: bool = True,
    streams: int = 1,
    first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT,
) -> RepairResult:
    """Repair ``schedule`` (the plan in force) after ``disruption``.

    Args:
        instance: The instance.
        schedule: The plan in force when the disruption is revealed.
        disruption: What happened.
        method: ``lcrp`` (default), ``aor``, ``right-shift``, ``full`` or ``full-stable``.
        budget: Nominal seconds of CP-SAT time the method may use.
        seed: CP-SAT seed.
        workers: CP-SAT workers (one under a deterministic limit).
        effort: LCRP's time-box multiplier (more seconds, usually a shorter plan); other methods ignore it.
        tolerance: How much longer than its own makespan (a fraction) LCRP's plan may end to move fewer
            operations; 0, the default, trades nothing. Other methods ignore it.
        deterministic: Count every budget in CP-SAT deterministic time on one worker (the default: the same
            inputs give the same repair, which replay checks); False counts wall time on ``workers`` workers
            (see :mod:`alas_argo.jssp.searching`).
        streams: LCRP's re-optimizing search as this many independent streams side by side, one thread each,
            the shortest plan kept (1, the default: one search). Each stream is reproducible, so the repair is;
            a slightly shorter plan for about ``streams`` times the CPU (bench/README.md, "Search streams").
            Recorded in the result's limits as ``search_streams``, which replay passes back.
        first_edit: ``tabu`` (the default, :data:`DEFAULT_FIRST_EDIT`): where the local plan is above the
            lower bound, a compiled tabu search of a fixed number of iterations, seeded with ``seed``
            (:mod:`.tabu`), before LCRP's CP-SAT search, every stage in a smaller time box; or ``redispatch``
            (the earlier default: the first edit, AOR or the re-dispatched plan, and CP-SAT alone). Without
            the compiled search (an install without a C compiler) ``tabu`` repairs as ``redispatch`` does and
            a note says so. Recorded in the limits as ``first_edit`` when the search was there to run. Other
            methods ignore it.

    Returns:
        The repaired plan, validated against the disruption and the plan in force, with its metrics.

    Raises:
        InputError: unknown method, a disruption that does not fit the instance or plan, or a plan in force
            that was already invalid.
        InfeasibleError: no plan can honour the disruption.
        ContractError: a method produced a plan the validator rejects (a bug; never silently returned).
    """
    chosen = RepairMethod.parse(method)
    if budget <= 0:
        raise InputError(f"budget must be positive, got {budget}")
    check_effort(effort)
    check_tolerance(tolerance)
    first = FirstEdit.parse(first_edit)
    check_disruption(instance, schedule, disruption)
    check_plan_in_force(instance, schedule, disruption)
    started = time.monotonic()
    state = ExecutionState.at(instance, schedule, disruption)

    # The verdicts given during the repair, by plan (the plan kept too, so that its id stays its own): the
    # plan a method returns has usually been judged already, and is not validated twice.
    judged: dict[int, tuple[Schedule, ValidationReport]] = {}

    def judge(plan: Schedule) -> ValidationReport:
        seen = judged.get(id(plan))
        if seen is not None and seen[0] is plan:
            return seen[1]
        report = validate(instance, plan, disruption=disruption, baseline=schedule)
        judged[id(plan)] = (plan, report)
        return report

    def is_valid(plan: Schedule) -> bool:
        return judge(plan).valid

    if not 1 <= streams <= MAX_STREAMS:
        raise InputError(f"streams must be in [1, {MAX_STREAMS}], got {streams}")
    clock = SearchClock(deterministic=deterministic, streams=streams)
    outcome = get_repairer(chosen)(state, budget=budget, seed=seed, workers=workers, is_valid=is_valid,
                                   effort=effort, tolerance=tolerance, clock=clock, first_edit=first)
    report = judge(outcome.schedule)
    if not report.valid:
        raise ContractError(f"{chosen.value} produced a plan the validator rejects ({_codes(report)}); "
                            f"first: {report.violations[0].message}")
    plan = outcome.schedule
    limits = clock.record(workers)
    if tolerance and chosen is RepairMethod.LCRP:
        limits["tolerance"] = tolerance
    # What ran: without the compiled search a tabu first edit repairs as the default does (and a note says so),
    # and a replay must not run the search it did not.
    if first is FirstEdit.TABU and chosen is RepairMethod.LCRP and tabu_kernel() is not None:
        limits["first_edit"] = first.value
    return RepairResult(
        schedule=plan,
        method=chosen.value,
        makespan=plan.makespan,
        baseline_makespan=schedule.makespan,
        moved_operations=moved_operations(schedule, plan),
        total_start_shift=total_start_shift(schedule, plan),
        edit_radius=len(outcome.neighbourhood),
        edit_machines=sorted({instance.machine(*k) for k in outcome.neighbourhood}),
        neighbourhood_growths=outcome.growths,
        wip_moved=wip_moved(state, plan),
        touched_machines=touched_machines(schedule, plan),
        resequenced_machines=resequenced_machines(schedule, plan),
        global_reason=outcome.global_reason,
        fallback=outcome.fallback,
        seconds=round(time.monotonic() - started, 4),
        valid=report.valid,
        notes=outcome.notes,
        limits=limits,
    )
