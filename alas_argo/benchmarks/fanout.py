"""A benchmark fan-out's cases, read back from the execution log (`alas bench report`).

The ``alas-bench`` WorkflowTemplate (and a suite PlanRun, which submits it) runs every case of suite x
scenarios x seeds in its own pod and its own run of the log, named ``<run id>.<instance>.<scenario>.<seed>``.
Its aggregate step exports only a small summary (Argo's parameters are no place for hundreds of rows), so the
per-case table is read here from those runs: each case's recorded inputs, its committed versions and the
independent validator's verdict on its current plan (:func:`alas_argo.pipeline.outcome.read_result`), as
`alas log show` would show them. Nothing is run or written.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from alas_argo.benchmarks.tables import markdown_table, rows_to_csv
from alas_argo.deferred import deferred
from alas_argo.errors import InputError, IntegrityError
from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.disruption import DisruptionKind
from alas_argo.log import Event, EventType, ExecutionLog
from alas_argo.log.runs import run_status
from alas_argo.log.store import Store
from alas_argo.pipeline.config import RunConfig
from alas_argo.pipeline.inputs import input_digest
from alas_argo.pipeline.outcome import read_result

if TYPE_CHECKING:
    from matplotlib import figure
    from matplotlib.backends import backend_agg
else:  # imported when the chart is drawn (alas_argo.deferred)
    backend_agg, figure = deferred("matplotlib.backends.backend_agg"), deferred("matplotlib.figure")

__all__ = ["COLUMNS", "CaseRow", "ScenarioSummary", "case_row", "case_run_ids", "plot", "summarize", "to_markdown",
           "write_tables"]


@dataclass(frozen=True)
class CaseRow:
    """One case of a fan-out, as its run's log records it."""

    run_id: str
    instance: str
    scenario: str
    seed: int
    status: str
    # What the log says of the run; left at these when it cannot be read (``problem`` says why).
    makespan_before: int | None = None
    makespan_after: int | None = None
    upper_bound: int | None = None
    gap_percent: float | None = None
    moved_operations: int | None = None
    repair_method: str | None = None
    repair_seconds: float | None = None
    final_valid: bool = False
    seconds: float | None = None
    problem: str | None = None


COLUMNS = tuple(f.name for f in fields(CaseRow))


@dataclass(frozen=True)
class ScenarioSummary:
    """The cases of one scenario (or of all of them: ``scenario`` "all")."""

    scenario: str
    cases: int
    succeeded: int
    valid: int
    mean_gap_percent: float | None
    median_moved_operations: float | None
    median_repair_seconds: float | None
    median_seconds: float | None


def case_run_ids(store: Store, run_id: str) -> list[str]:
    """The run ids of ``run_id``'s cases in ``store`` (``<run id>.<instance>.<scenario>.<seed>``), sorted.

    Raises:
        InputError: The store holds none (exit 2: a wrong run id or a wrong store reads as that).
    """
    prefix = f"{run_id}."
    # Exactly <instance>.<scenario>.<seed> after the prefix: the cases of a fan-out named "<run id>.x" are not ours.
    ids = sorted(r for r in store.children(prefix="runs/") if r.startswith(prefix)
                 and r[len(prefix):].count(".") == 2 and r.rsplit(".", 1)[-1].isdigit())
    if not ids:
        raise InputError(f"no benchmark case runs of {run_id!r} in the log (a fan-out names them {run_id}.<instance>."
                         "<scenario>.<seed>; `alas log ls` lists the runs)", where=store.location)
    return ids


def case_row(log: ExecutionLog) -> CaseRow:
    """One case's row, from its run's log (a run that cannot be read says why in ``problem``: a tampered or
    damaged record is one case's problem, for `alas log verify` to name; a store that does not answer raises)."""
    *_, instance_name, scenario, seed = log.run_id.rsplit(".", 3)
    try:
        return _read_row(log, instance_name, scenario, int(seed))
    except (IntegrityError, ValidationError) as e:
        return CaseRow(log.run_id, instance_name, scenario, int(seed), "unreadable",
                       problem=f"{type(e).__name__}: {str(e).splitlines()[0]}")


def _read_row(log: ExecutionLog, instance_name: str, scenario: str, seed: int) -> CaseRow:
    events = log.events()
    status = run_status(events[-1] if events else None)
    empty = CaseRow(log.run_id, instance_name, scenario, seed, status, seconds=_seconds(events))
    recorded = next((e.payload for e in events if e.type is EventType.RUN_INPUTS), None)
    if recorded is None:
        return replace(empty, problem="no recorded inputs")
    fields_ = recorded.get("inputs")
    named = fields_.get("instance") if isinstance(fields_, dict) else None
    if not isinstance(fields_, dict) or not isinstance(named, dict) or not isinstance(named.get("name"), str):
        # Recorded by something else than `alas run` (every run of it records {"instance": {"name", "digest"}}):
        # one case's problem, not a report that fails on the shape.
        return replace(empty, problem="the recorded inputs name no instance (not inputs of alas run)")
    if isinstance(fields_.get("disrupt"), dict):  # a disruption file: its documents were recorded, not a path
        return replace(empty, problem="disruptions from a file (alas log show reads such a run)")
    try:
        instance = load_instance(named["name"])
    except InputError as e:
        return replace(empty, problem=f"instance {named['name']!r}: {e}")
    if input_digest(instance.to_json()) != named.get("digest"):
        return replace(empty, problem=f"instance {instance.name} differs from the one the run recorded")
    config = RunConfig.model_validate({**fields_, "instance": instance.name})
    count = config.disruptions if config.disrupt in {k.value for k in DisruptionKind} else 0
    result = read_result(log, config, instance, disruptions=count, seconds=0.0, events=events).summary()
    before, after, bound = result["makespan_before"], result["makespan_after"], result["upper_bound"]
    gap = round(100.0 * (after - bound) / bound, 2) if after is not None and bound else None
    return replace(empty, instance=instance.name, scenario=config.disrupt or "none", seed=config.seed,
                 makespan_before=before, makespan_after=after, upper_bound=bound, gap_percent=gap,
                 moved_operations=result["moved_operations"], repair_method=result["repair_method"],
                 repair_seconds=result["repair_seconds"], final_valid=bool(result["final_valid"]))


def _seconds(events: Sequence[Event]) -> float | None:
    """Wall seconds from the run's last start to its last terminal event, from the events' timestamps."""
    starts = [e for e in events if e.type is EventType.RUN_STARTED]
    ends = [e for e in events if e.type in (EventType.RUN_SUCCEEDED, EventType.RUN_FAILED)]
    if not starts or not ends or ends[-1].seq < starts[-1].seq:
        return None
    began, ended = datetime.fromisoformat(starts[-1].timestamp), datetime.fromisoformat(ends[-1].timestamp)
    return round((ended - began).total_seconds(), 3)


def _median(values: Iterable[float | int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(float(statistics.median(known)), 3) if known else None


def summarize(rows: Sequence[CaseRow]) -> list[ScenarioSummary]:
    """One summary per scenario, in the order the scenarios first appear, then "all"."""
    scenarios = list(dict.fromkeys(r.scenario for r in rows))
    out = []
    for name, group in [*((s, [r for r in rows if r.scenario == s]) for s in scenarios), ("all", list(rows))]:
        gaps = [r.gap_percent for r in group if r.gap_percent is not None and r.final_valid]
        out.append(ScenarioSummary(
            scenario=name, cases=len(group), succeeded=sum(r.status == "succeeded" for r in group),
            valid=sum(r.final_valid for r in group),
            mean_gap_percent=round(statistics.fmean(gaps), 2) if gaps else None,
            median_moved_operations=_median(r.moved_operations for r in group),
            median_repair_seconds=_median(r.repair_seconds for r in group),
            median_seconds=_median(r.seconds for r in group)))
    return out


def to_markdown(run_id: str, rows: Sequence[CaseRow], summaries: Sequence[ScenarioSummary]) -> str:
    """The summary table, then every case."""
    lines = [f"# Benchmark fan-out {run_id}: {len(rows)} cases, read from the execution log", "",
             *markdown_table([f.name for f in fields(ScenarioSummary)], [list(asdict(s).values()) for s in summaries]),
             "", *markdown_table(COLUMNS, [list(asdict(r).values()) for r in rows])]
    return "\n".join(lines) + "\n"


def write_tables(run_id: str, rows: Sequence[CaseRow], summaries: Sequence[ScenarioSummary],
                 directory: Path) -> tuple[Path, Path, Path]:
    """``cases.csv``, ``cases.md`` and the chart ``cases.png`` in ``directory``; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, png_path = directory / "cases.csv", directory / "cases.md", directory / "cases.png"
    csv_path.write_text(rows_to_csv(rows, COLUMNS), encoding="utf-8")
    md_path.write_text(to_markdown(run_id, rows, summaries), encoding="utf-8")
    plot(run_id, rows, png_path)
    return csv_path, md_path, png_path


def plot(run_id: str, rows: Sequence[CaseRow], path: Path) -> None:
    """Per scenario, each valid case's gap to the best known makespan and the operations its repair moved (box
    plots over the dots): where a fan-out of hundreds of rows is easier to look at than to read."""
    fig = figure.Figure(figsize=(9, 4), dpi=100)
    backend_agg.FigureCanvasAgg(fig)
    gap_ax, moved_ax = fig.subplots(1, 2)
    scenarios = list(dict.fromkeys(r.scenario for r in rows))
    for ax, field, label in ((gap_ax, "gap_percent", "gap to the best known makespan (%)"),
                             (moved_ax, "moved_operations", "operations the repair moved")):
        series = [[getattr(r, field) for r in rows if r.scenario == s and r.final_valid
                   and getattr(r, field) is not None] for s in scenarios]
        shown = [(s, values) for s, values in zip(scenarios, series, strict=True) if values]
        if shown:
            ax.boxplot([values for _, values in shown], showfliers=False)
            for i, (_, values) in enumerate(shown, start=1):
                ax.scatter([i] * len(values), values, s=8, alpha=0.35, color="C0")
            ax.set_xticks(range(1, len(shown) + 1), [s for s, _ in shown])
        else:
            ax.text(0.5, 0.5, "no valid case with a value", ha="center", va="center", transform=ax.transAxes)
        ax.set_ylabel(label, fontsize=9)
    valid = sum(r.final_valid for r in rows)
    fig.suptitle(f"{run_id}: {len(rows)} cases, {valid} with a valid plan (read from the execution log)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")
