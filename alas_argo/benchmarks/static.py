"""The static benchmark: plan every instance of a suite, validate independently, tabulate the gaps.

The ``valid`` column comes from :func:`alas_argo.jssp.validate.validate`, which shares no code with the
planners, so a planner bug shows up as an invalid row rather than as a good-looking makespan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from alas_argo.benchmarks.tables import rows_to_csv
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import SolveMethod, plan
from alas_argo.jssp.validate import validate

__all__ = ["COLUMNS", "StaticRow", "StaticSummary", "run_static", "summarize", "to_csv", "to_markdown",
           "write_tables"]

#: Table columns, in order.
COLUMNS = ("instance", "size", "makespan", "upper_bound", "gap_percent", "valid", "seconds", "status",
           "bound")


@dataclass(frozen=True)
class StaticRow:
    """One instance's outcome."""

    instance: str
    size: str
    makespan: int  #: of the planned schedule, as validated (not the planner's objective)
    upper_bound: int | None
    gap_percent: float | None  #: 100 * (makespan - upper_bound) / upper_bound
    valid: bool  #: verdict of the independent validator
    seconds: float
    status: str
    bound: int


@dataclass(frozen=True)
class StaticSummary:
    """Aggregates over a benchmark run."""

    instances: int
    mean_gap_percent: float | None  #: over instances with a known upper bound
    valid_rate: float  #: share of valid schedules, 0..1
    total_seconds: float


def run_static(names: Sequence[str], *, time_limit: float, workers: int = 2, seed: int = 0,
               method: SolveMethod | str = SolveMethod.AUTO,
               on_row: Callable[[StaticRow], None] | None = None,
               progress: Callable[[str, ProgressEvent], None] | None = None,
               deterministic: bool = False) -> list[StaticRow]:
    """Plan and validate each named instance.

    Args:
        names: Bundled instance names.
        time_limit: Seconds per instance.
        workers: CP-SAT workers.
        seed: Seed passed to the planner.
        method: Planner method (see :class:`~alas_argo.jssp.planning.SolveMethod`).
        on_row: Called after each instance with its row.
        progress: Called with (instance name, event) while an instance is being planned.
        deterministic: Limit each plan by deterministic time on one worker (what `alas run` and `alas solve`
            do by default) instead of wall time on ``workers`` workers (what this benchmark has measured).
    """
    rows = []
    for name in names:
        instance = get_instance(name)
        report = None if progress is None else (lambda e, n=name: progress(n, e))
        result = plan(instance, time_limit=time_limit, workers=workers, seed=seed, method=method,
                      progress=report, deterministic=deterministic)
        ub = instance.upper_bound
        # The schedule's own makespan, which the validator checks, not the planner's claim about it.
        makespan = result.schedule.makespan
        row = StaticRow(instance=instance.name, size=instance.size, makespan=makespan, upper_bound=ub,
                        gap_percent=round(100.0 * (makespan - ub) / ub, 2) if ub else None,
                        valid=validate(instance, result.schedule).valid, seconds=round(result.seconds, 2),
                        status=result.status.value, bound=result.bound)
        rows.append(row)
        if on_row:
            on_row(row)
    return rows


def summarize(rows: Sequence[StaticRow]) -> StaticSummary:
    """Mean gap and valid rate of a run."""
    gaps = [r.gap_percent for r in rows if r.gap_percent is not None]
    return StaticSummary(
        instances=len(rows), mean_gap_percent=round(sum(gaps) / len(gaps), 2) if gaps else None,
        valid_rate=sum(r.valid for r in rows) / len(rows) if rows else 0.0,
        total_seconds=round(sum(r.seconds for r in rows), 1))


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "NO"
    return str(value)


def to_csv(rows: Sequence[StaticRow]) -> str:
    """The table as CSV (header row first)."""
    return rows_to_csv(rows, COLUMNS)


def to_markdown(rows: Sequence[StaticRow], *, title: str, command: str | None = None) -> str:
    """The table as Markdown, with the summary underneath (and the command that made it, when given)."""
    lines = [f"# {title}", "", *([f"Command: `{command}`", ""] if command else []),
             "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(_cell(getattr(r, c)) for c in COLUMNS) + " |" for r in rows]
    s = summarize(rows)
    lines += ["", f"Instances: {s.instances}. Mean gap to the upper bound: "
              f"{'n/a' if s.mean_gap_percent is None else f'{s.mean_gap_percent:.2f}%'}. "
              f"Valid: {100 * s.valid_rate:.1f}%. Total time: {s.total_seconds} s.", ""]
    return "\n".join(lines)


def write_tables(rows: Sequence[StaticRow], directory: Path, *, title: str,
                 command: str | None = None) -> tuple[Path, Path]:
    """Write ``static.csv`` and ``static.md`` into ``directory`` (created); returns both paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = (directory / "static.csv", directory / "static.md")
    for path, text in zip(paths, (to_csv(rows), to_markdown(rows, title=title, command=command)), strict=True):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # a crash never leaves half a table
    return paths
