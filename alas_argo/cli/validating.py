"""`alas validate` and `alas bench validator`: check a schedule file, time the validator.

Bad input is caught here, before the library runs, and named by file and place (``s.json at
operations[3].start``): a document that is not an object, a missing field, a non-integer value, an entry
naming a job or step the instance lacks (the library would call that ``unknown_operation``; a file is
expected to be about its instance), a disruption naming a machine or operation that does not exist.
A schedule naming another instance is only a warning (``instance_mismatch``): validity is structural.
"""

from __future__ import annotations

import argparse
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from rich.console import Console
from rich.table import Table

from alas_argo.benchmarks.validator import benchmark_validator
from alas_argo.cli.app import Commands, add_instance_argument, print_json, read_json_file
from alas_argo.cli.flag_values import MAX_REPEATS, whole
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.disruption_rules import check_events
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import MAX_TIME, validate
from alas_argo.jssp.verdict import ValidationReport, Violation, ViolationCode

__all__ = ["load_disruption_file", "load_plan_of", "load_schedule_file", "register"]

M = TypeVar("M", bound=BaseModel)

#: Rows of the violation table shown to people; `--json` always has them all.
TABLE_ROWS = 50
_EVENT_TAGS = {"machine_breakdown", "duration_change"}


def _place(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in _EVENT_TAGS:  # pydantic puts the union tag in the path; people do not write it
            out += f".{part}" if out else part
    return out or "top level"


def _load(path: str, model: type[M], what: str) -> M:
    doc = read_json_file(path, what)
    if not isinstance(doc, dict):
        raise InputError(f"{what} file must hold a JSON object, not a {type(doc).__name__}", where=path)
    try:
        return model.model_validate(doc, strict=True)
    except ValidationError as e:
        err = e.errors()[0]
        got = "" if err["type"] == "missing" else f", got {err['input']!r}"[:80]
        more = f" (and {e.error_count() - 1} more)" if e.error_count() > 1 else ""
        raise InputError(f"{err['msg']}{got}{more}", where=f"{path} at {_place(err['loc'])}") from None


def load_schedule_file(path: str, instance: Instance, what: str = "schedule") -> Schedule:
    """Read a schedule file and check that each entry names an operation of ``instance``.

    Raises:
        InputError: the file is unreadable or malformed, or an entry names a job or step that does not
            exist, or a time lies outside ``+-MAX_TIME``; the message names the file and the entry.
    """
    schedule = _load(path, Schedule, what)
    for i, o in enumerate(schedule.operations):
        where = f"{path} at operations[{i}]"
        if not 0 <= o.job < instance.num_jobs:
            raise InputError(f"job {o.job} does not exist (instance {instance.name} has jobs "
                             f"0..{instance.num_jobs - 1})", where=where)
        if not 0 <= o.step < len(instance.jobs[o.job]):
            raise InputError(f"job {o.job} has no step {o.step} (it has steps 0..{len(instance.jobs[o.job]) - 1})",
                             where=where)
        for field in ("machine", "start", "end"):
            if abs(getattr(o, field)) > MAX_TIME:
                raise InputError(f"{field} {getattr(o, field)} is out of range (+-{MAX_TIME})", where=where)
    return schedule


#: What makes a schedule another instance's plan rather than a bad plan of this one: an operation missing or
#: twice, or on a machine this instance does not run it on. Durations may differ (a shock changed them).
_NOT_ITS_PLAN = (ViolationCode.MISSING_OPERATION, ViolationCode.DUPLICATE_OPERATION, ViolationCode.WRONG_MACHINE)


def load_plan_of(path: str, instance: Instance) -> Schedule:
    """Read a schedule file that must be a plan of ``instance`` (the plan a disruption is drawn from): every
    operation once, each on its machine.

    Raises:
        InputError: as :func:`load_schedule_file`, or the schedule is not a plan of ``instance``; the message
            counts the violations by code and gives the first.
    """
    schedule = load_schedule_file(path, instance)
    wrong = [v for v in validate(instance, schedule).violations if v.code in _NOT_ITS_PLAN]
    if wrong:
        codes: dict[str, int] = {}
        for v in wrong:
            codes[v.code.value] = codes.get(v.code.value, 0) + 1
        raise InputError(f"the schedule (for {schedule.instance}) is not a plan of {instance.name}: "
                         f"{', '.join(f'{c} x{n}' for c, n in codes.items())}; first: {wrong[0].message}",
                         where=path)
    return schedule


def load_disruption_file(path: str, instance: Instance) -> Disruption:
    """Read a disruption file and check that its events name machines and operations of ``instance``.

    Raises:
        InputError: the file is unreadable or malformed, or it breaks a rule of
            :func:`~alas_argo.jssp.disruption_rules.check_events`; the message names the file and the event.
    """
    d = _load(path, Disruption, "disruption")
    check_events(instance, d, source=path)
    return d


def _scope_cell(v: Violation, *keys: str) -> str:
    return "/".join(str(v.scope[k]) for k in keys if k in v.scope) or "-"


def _print_report(report: ValidationReport, schedule: Schedule, instance: Instance) -> None:
    console = Console()
    if report.violations:
        table = Table(title=f"{len(report.violations)} violation(s) in the schedule for {instance.name}")
        for col in ("code", "job/step", "machine", "with", "message"):
            table.add_column(col, overflow="fold")
        for v in report.violations[:TABLE_ROWS]:
            table.add_row(v.code.value, _scope_cell(v, "job", "step"), _scope_cell(v, "machine"),
                          _scope_cell(v, "other_job", "other_step"), v.message)
        console.print(table)
        if len(report.violations) > TABLE_ROWS:
            console.print(f"... {len(report.violations) - TABLE_ROWS} more (use --json to see all)")
    for w in report.warnings:
        console.print(f"warning: {w.code.value}: {w.message}", markup=False)
    if report.valid:
        console.print(f"valid: {len(schedule.operations)} operations of {instance.name}, makespan "
                      f"{schedule.makespan}", markup=False)
    else:
        counts = ", ".join(f"{c.value} {n}" for c, n in report.count_by_code().items())
        console.print(f"invalid: {counts}", markup=False)


def _validate(args: argparse.Namespace) -> int:
    instance = load_instance(args.instance)
    schedule = load_schedule_file(args.schedule, instance)
    disruption = load_disruption_file(args.disruption, instance) if args.disruption else None
    baseline = load_schedule_file(args.baseline, instance, "baseline") if args.baseline else None
    if baseline is not None and disruption is None:
        raise InputError("--baseline only matters with --disruption")
    report = validate(instance, schedule, disruption=disruption, baseline=baseline)
    if args.json:
        print_json(report.to_json())
    else:
        _print_report(report, schedule, instance)
    return 0 if report.valid else 1


def _bench(args: argparse.Namespace) -> int:
    instance = load_instance(args.instance)
    timings = benchmark_validator(instance, repeat=args.repeat)
    if args.json:
        doc: list[dict[str, Any]] = [t.model_dump(mode="json") for t in timings]
        print_json(doc)
    else:
        table = Table(title=f"validator throughput on {instance.name} ({instance.size}, "
                      f"{instance.num_operations} operations, {args.repeat} repeats)")
        for col in ("scenario", "median ms", "best ms", "operations/s", "valid"):
            table.add_column(col, justify="right")
        for t in timings:
            table.add_row(t.scenario, f"{t.median_seconds * 1e3:.3f}", f"{t.best_seconds * 1e3:.3f}",
                          f"{t.ops_per_second:,.0f}", "yes" if t.valid else "NO")
        Console().print(table)
    return 0 if all(t.valid for t in timings) else 1


def register(commands: Commands) -> None:
    """Add `validate` and `bench validator`."""
    p = commands.add(
        "validate", _validate, help="Check a schedule file against its instance (and a disruption).",
        description="Check a schedule with the independent validator and report every violation.\n"
        "Exit 0 valid, 1 invalid, 2 bad input. A schedule naming another instance is a warning only.\n"
        "With --disruption and --baseline (the plan in force before it), started operations must keep "
        "their start (unless a breakdown interrupted them), nothing new may start before the reveal time, "
        "and nothing may run during a downtime. Without --baseline, the frozen checks are skipped.")
    add_instance_argument(p, help="bundled instance name or instance file", metavar="I")
    p.add_argument("--schedule", required=True, metavar="S", help="schedule JSON file (docs/contracts.md)")
    p.add_argument("--disruption", metavar="D", help="disruption JSON file")
    p.add_argument("--baseline", metavar="B", help="schedule JSON file of the plan in force before D")
    p.add_argument("--json", action="store_true", help="print the validation report as JSON")
    commands.group("bench", "Benchmarks: static solving, repair, validator throughput.")
    p = commands.add("validator", _bench, group="bench", help="Validator throughput (operations per second).",
                     description="Time the validator on a valid semi-active schedule of an instance, with and "
                     "without a disruption, and print operations checked per second.")
    p.add_argument("--instance", default="ta71", help="bundled instance name or file (default: ta71, 100x20)")
    p.add_argument("--repeat", type=whole(1, MAX_REPEATS), default=50,
                   help="timed validate() calls per scenario (default: 50)")
    p.add_argument("--json", action="store_true", help="print the timings as JSON")
