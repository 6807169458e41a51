"""The repair benchmark: every repair method on the same baselines and the same disruptions.

For each instance a baseline plan is computed once (and cached as JSON in the output directory), then for
each scenario and seed one disruption is drawn and every method repairs it. Rows carry the independent
validator's verdict. The tables, ratios and plots are :mod:`.repair_report`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from alas_argo.errors import AlasError, InputError
from alas_argo.file_names import read_limited
from alas_argo.json_limits import load_json
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption, DisruptionKind, generate_disruption
from alas_argo.jssp.disruption_families import FAMILIES, generate_family, is_family
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.planning import plan
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit, RepairMethod, check_effort, check_tolerance, repair
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.repeats import repeated

__all__ = ["COLUMNS", "FIRST_EDIT_MARK", "LEGACY_COLUMNS", "TOLERANCE_MARK", "RepairRow", "baseline", "case_disruption",
           "case_path", "check_bench_arguments", "is_lcrp", "lcrp_label", "rerun_command", "run_repair_bench"]

#: The columns before the locality ones: a table with this header still reads back (:func:`.repair_report.from_csv`).
LEGACY_COLUMNS = ("instance", "size", "scenario", "seed", "method", "baseline_makespan", "makespan", "moved_operations",
                  "total_start_shift", "edit_radius", "neighbourhood_growths", "wip_moved", "fallback", "seconds",
                  "valid", "error")
COLUMNS = (*LEGACY_COLUMNS, "touched_machines", "went_global")
#: What separates an LCRP row's makespan tolerance from its effort in the method column (:func:`lcrp_label`).
TOLERANCE_MARK = "+tol"
#: What ends an LCRP row's method column when its first edit is not the re-dispatch (``lcrp@0.5+tabu``); an
#: unmarked LCRP row ran the re-dispatch, as every row did before the tabu search became the default.
FIRST_EDIT_MARK = "+"


@dataclass(frozen=True)
class RepairRow:
    """One method on one disrupted case."""

    instance: str
    size: str
    scenario: str
    seed: int
    method: str
    baseline_makespan: int
    makespan: int
    moved_operations: int
    total_start_shift: int
    edit_radius: int
    neighbourhood_growths: int
    wip_moved: int
    fallback: bool
    seconds: float
    valid: bool
    error: str = ""
    touched_machines: int = 0  #: machines with a moved operation
    went_global: bool = False  #: the repair edited beyond a local neighbourhood (see RepairResult.global_reason)


def baseline(instance: Instance, *, time_limit: float, workers: int, cache: Path | None) -> Schedule:
    """The plan in force before any disruption: planned once, then read back from ``cache``."""
    path = None if cache is None else cache / f"{instance.name}.json"
    if path is not None and path.exists():
        return _cached_baseline(path, instance)
    # Wall-clock planning, as the cached baselines of bench/results were made.
    schedule = plan(instance, time_limit=time_limit, workers=workers, deterministic=False).schedule
    if path is not None:
        _write(path, schedule.to_json())
    return schedule


def case_disruption(instance: Instance, base: Schedule, scenario: str, seed: int) -> Disruption:
    """The disruption a benchmark case repairs: a plain kind (:func:`generate_disruption`) or a family
    (:func:`generate_family`), both seeded.

    Raises:
        InputError: neither a kind nor a family.
    """
    if is_family(scenario):
        return generate_family(instance, base, scenario, seed=seed)
    return generate_disruption(instance, base, _kind(scenario), seed=seed)


def case_path(cases: Path, instance: str, scenario: str, seed: int) -> Path:
    """Where a benchmark keeps the disruption of one case, so that its rows can be rerun alone."""
    return cases / instance / f"{scenario}-{seed}.json"


def rerun_command(directory: str, row: RepairRow, *, time_limit: float, deterministic: bool) -> str:
    """The `alas repair` command that repeats one row on the inputs the benchmark kept in ``directory``."""
    label, first_edit = _first_edit_of(row.method)
    label, _, tolerance = label.partition(TOLERANCE_MARK)
    method, _, effort = label.partition("@")
    flags = f" --effort {effort}" if effort else ""
    flags += f" --tolerance {tolerance}" if tolerance else ""
    # Named always, not only when it is not the default: the command repeats the row after a default changes.
    flags += f" --first-edit {first_edit.value}" if method == RepairMethod.LCRP.value else ""
    flags += "" if deterministic else " --wall-clock --workers 2"
    return (f"alas repair --instance {row.instance} --schedule {directory}/baselines/{row.instance}.json "
            f"--disruption {directory}/cases/{row.instance}/{row.scenario}-{row.seed}.json --method {method} "
            f"--time-limit {time_limit:g} --seed {row.seed}{flags} --out r.json")


def check_bench_arguments(scenarios: Sequence[DisruptionKind | str], methods: Sequence[RepairMethod | str],
                          lcrp_efforts: Sequence[float], lcrp_tolerance: float) -> list[RepairMethod]:
    """Refuse an unknown scenario or method, or an unusable LCRP effort or tolerance, before anything is planned
    (a bad effort should not cost minutes of baselines). Returns the methods parsed.

    Raises:
        InputError: the first argument refused, named.
    """
    if not scenarios:
        raise InputError("no scenario given (--scenarios takes breakdown, shock, mixed or a family, "
                         "comma-separated)")
    if not methods:
        raise InputError("no repair method given (--methods takes "
                         f"{', '.join(m.value for m in RepairMethod)}, comma-separated)")
    for s in map(str, scenarios):
        if not is_family(s):
            _kind(s)
    chosen = [RepairMethod.parse(m) for m in methods]
    for effort in lcrp_efforts:
        check_effort(effort)
    check_tolerance(lcrp_tolerance)
    _once("scenario", [str(s) for s in scenarios])
    _once("method", [m.value for m in chosen])
    _once("LCRP effort", [f"{e:g}" for e in lcrp_efforts])
    return chosen


def _once(what: str, values: Sequence[str]) -> None:
    """Refuse a value given twice: its rows would be run and counted twice in every mean of the report."""
    twice = repeated(values)
    if twice:
        raise InputError(f"{what} {', '.join(twice)} given more than once")


def run_repair_bench(names: Sequence[str], *, scenarios: Sequence[DisruptionKind | str], seeds: int,
                     methods: Sequence[RepairMethod | str] = tuple(RepairMethod), time_limit: float = 10.0,
                     baseline_time_limit: float = 10.0, workers: int = 2, cache: Path | None = None,
                     on_row: Callable[[RepairRow], None] | None = None, lcrp_efforts: Sequence[float] = (1.0,),
                     deterministic: bool = False, cases: Path | None = None,
                     first_seed: int = 0, lcrp_tolerance: float = 0.0,
                     lcrp_first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> list[RepairRow]:
    """Repair ``seeds`` disruptions per instance and scenario with every method.

    A scenario is a disruption kind or a family of :mod:`alas_argo.jssp.disruption_families`. Seeds run from
    ``first_seed``; with ``cases`` every drawn disruption is written there (:func:`case_path`) next to the
    cached baseline, so any row can be repeated alone (:func:`rerun_command`).

    Repairs count their budget in wall time on ``workers`` workers (what this benchmark has measured), or with
    ``deterministic`` in CP-SAT deterministic time on one worker (what `alas run` and `alas repair` do by
    default). Baselines are planned under wall-clock limits either way, so both modes repair the same plans.

    LCRP runs once per effort in ``lcrp_efforts``, each with the makespan tolerance ``lcrp_tolerance`` and the
    first edit ``lcrp_first_edit`` (the re-dispatch when the compiled tabu search is not built); its rows are named
    by :func:`lcrp_label` for the first edit that ran (``lcrp+tabu`` at the defaults), so one run compares several
    time boxes against the same (slow) baselines.

    Raises:
        InputError: an unknown instance, scenario or method, or an unusable LCRP effort or tolerance.
    """
    names_of = [str(s) for s in scenarios]
    chosen = check_bench_arguments(names_of, methods, lcrp_efforts, lcrp_tolerance)
    first_edit = FirstEdit.parse(lcrp_first_edit)
    # Rows are named by what ran: without the compiled search a tabu repair is the re-dispatch's (and says so in
    # its notes), and a row named lcrp+tabu would claim a search that did not run.
    if first_edit is FirstEdit.TABU and tabu_kernel() is None:
        first_edit = FirstEdit.REDISPATCH
    runs = [(m, e) for m in chosen for e in (lcrp_efforts if m is RepairMethod.LCRP else (1.0,))]
    rows: list[RepairRow] = []
    for name in names:
        inst = get_instance(name)
        base = baseline(inst, time_limit=baseline_time_limit, workers=workers, cache=cache)
        for scenario in names_of:
            for seed in range(first_seed, first_seed + seeds):
                disruption = case_disruption(inst, base, scenario, seed)
                if cases is not None:
                    _write(case_path(cases, inst.name, scenario, seed), disruption.to_json())
                for method, effort in runs:
                    row = _one(inst, base, disruption, scenario, seed, method, time_limit, workers, effort,
                               deterministic, lcrp_tolerance if method is RepairMethod.LCRP else 0.0,
                               first_edit if method is RepairMethod.LCRP else FirstEdit.REDISPATCH)
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
    return rows


def lcrp_label(effort: float, tolerance: float = 0.0, first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> str:
    """How LCRP rows are named: ``lcrp`` at the default effort, ``lcrp@E`` otherwise, ``+tolT`` after either
    with a makespan tolerance (``lcrp@4+tol0.005``), and ``+tabu`` last with the tabu first edit
    (``lcrp@0.5+tabu``; ``lcrp+tabu`` at the defaults)."""
    label = "lcrp" if effort == 1.0 else f"lcrp@{effort:g}"
    label = f"{label}{TOLERANCE_MARK}{tolerance:g}" if tolerance else label
    edit = FirstEdit.parse(first_edit)
    return label if edit is FirstEdit.REDISPATCH else f"{label}{FIRST_EDIT_MARK}{edit.value}"


def _first_edit_of(method: str) -> tuple[str, FirstEdit]:
    """A row's method column without its first edit's mark, and that first edit (the re-dispatch when unmarked)."""
    for edit in FirstEdit:
        mark = f"{FIRST_EDIT_MARK}{edit.value}"
        if edit is not FirstEdit.REDISPATCH and method.endswith(mark):
            return method.removesuffix(mark), edit
    return method, FirstEdit.REDISPATCH


def is_lcrp(method: str) -> bool:
    """Whether a row's method names an LCRP variant (see :func:`lcrp_label`)."""
    return _first_edit_of(method)[0].partition(TOLERANCE_MARK)[0].split("@")[0] == RepairMethod.LCRP.value


def _kind(name: str) -> DisruptionKind:
    try:
        return DisruptionKind(name)
    except ValueError:
        raise InputError(f"unknown scenario {name!r}; known: "
                         f"{', '.join([*(k.value for k in DisruptionKind), *FAMILIES])}") from None


def _cached_baseline(path: Path, instance: Instance) -> Schedule:
    """A baseline read back from the cache, refused whole when it is not a valid plan of ``instance`` (a file
    edited, truncated or copied from another run): every case of the bench is drawn from it."""
    again = "; delete it to plan the baseline again"
    try:
        schedule = Schedule.model_validate(load_json(read_limited(path), where=str(path)))
    except InputError as e:
        raise InputError(f"{e.message}{again}", where=e.where) from None
    except ValidationError as e:
        first = e.errors()[0]
        raise InputError(f"not a schedule: {first['msg']} at {'.'.join(map(str, first['loc']))}{again}",
                         where=str(path)) from None
    report = validate(instance, schedule)
    if not report.valid:
        violation = report.violations[0]
        raise InputError(f"not a valid plan of {instance.name} ({len(report.violations)} violation(s), first "
                         f"{violation.code.value}: {violation.message}){again}", where=str(path))
    return schedule


def _write(path: Path, doc: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.replace(path)


def _one(inst: Instance, base: Schedule, disruption: Disruption, scenario: str, seed: int,
         method: RepairMethod, time_limit: float, workers: int, effort: float = 1.0,
         deterministic: bool = False, tolerance: float = 0.0,
         first_edit: FirstEdit = FirstEdit.REDISPATCH) -> RepairRow:
    label = lcrp_label(effort, tolerance, first_edit) if method is RepairMethod.LCRP else method.value
    failed = RepairRow(instance=inst.name, size=inst.size, scenario=scenario, seed=seed, method=label,
                       baseline_makespan=base.makespan, makespan=0, moved_operations=0, total_start_shift=0,
                       edit_radius=0, neighbourhood_growths=0, wip_moved=0, fallback=False, seconds=0.0,
                       valid=False)
    try:
        r = repair(inst, base, disruption, method, budget=time_limit, seed=seed, workers=workers, effort=effort,
                   tolerance=tolerance, deterministic=deterministic, first_edit=first_edit)
    except AlasError as e:  # a failed case is a row, not a crashed benchmark
        return replace(failed, error=str(e))
    return replace(failed, makespan=r.makespan, moved_operations=r.moved_operations,
                   total_start_shift=r.total_start_shift, edit_radius=r.edit_radius,
                   neighbourhood_growths=r.neighbourhood_growths, wip_moved=r.wip_moved, fallback=r.fallback,
                   seconds=r.seconds, valid=r.valid, touched_machines=len(r.touched_machines),
                   went_global=r.global_reason is not None)


