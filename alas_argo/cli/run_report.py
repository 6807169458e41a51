"""What `alas run` reports: the summary table for people, and the files `--out DIR` receives.

With several disruptions the figures are labelled: one row per repair (its reveal time, makespan change,
moves, time), a row of totals over all repairs, and the operations moved between the first plan and the
final one (what the Gantt chart's "after" panel outlines). The wall time covers everything the command did,
Gantt rendering included; the pipeline's own time is reported beside it. No cell shows ``None``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from alas_argo.cli.app import write_json_file
from alas_argo.errors import write_refused
from alas_argo.log import ExecutionLog
from alas_argo.pipeline import PipelineResult

__all__ = ["OWNED_FILES", "cell", "repair_totals", "summary_table", "write_outputs"]

#: Names of the files `run --out` owns in its directory: an earlier run's files by these names are replaced
#: as a set, so the directory never mixes two runs (other files are left alone).
OWNED_FILES = re.compile(r"^(v\d+\.json|final\.json|disruption_\d+\.json|report\.json|report\.md|gantt\.(png|html))\Z")


def cell(value: Any) -> str:
    """A value as people read it: ``-`` for nothing, yes/no for booleans, lists joined."""
    if value is None or value == []:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items())
    return str(value)


def repair_totals(repairs: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over every repair of a run (moves, shifts and seconds add up; fallbacks are counted)."""
    done = [r for r in repairs if "moved_operations" in r]
    return {"repairs": len(done), "moved_operations": sum(int(r["moved_operations"]) for r in done),
            "total_start_shift": sum(int(r.get("total_start_shift", 0)) for r in done),
            "repair_seconds": round(sum(float(r.get("seconds", 0.0)) for r in done), 4),
            "fallbacks": sum(bool(r.get("fallback")) for r in done)}


def moved_since_first(result: PipelineResult) -> int | None:
    """Operations whose start differs between the first committed plan and the final one."""
    if result.baseline is None or result.final is None:
        return None
    was = result.baseline.starts()
    return sum(1 for o in result.final.operations if was.get(o.key) != o.start)


def _repair_line(r: dict[str, Any], *, with_method: bool) -> str:
    """One repair of several: what the log holds for every version (makespans, moves, shift), then what its
    method recorded. A recovery rung records less (the patch of a repair that failed: its method only)."""
    parts = [f"makespan {r['baseline_makespan']} -> {r['makespan']}", f"moved {r['moved_operations']}",
             f"shift {r['total_start_shift']}"]
    if "edit_radius" in r:
        parts.append(f"radius {r['edit_radius']}")
    if "seconds" in r:
        parts.append(f"{r['seconds']} s")
    if with_method and r.get("method"):
        parts.append(f"by {r['method']}")
    if r.get("fallback"):
        parts.append("global fallback")
    return ", ".join(parts)


def summary_table(s: dict[str, Any]) -> Table:
    """The run summary as a two-column table."""
    table = Table(title=f"ALAS run {s['run_id']}: {s['instance']} ({s['size']}), {s['status']}", show_header=False)
    table.add_column("what")
    table.add_column("value")
    rows: list[tuple[str, Any]] = [
        ("makespan before", s["makespan_before"]), ("makespan after", s["makespan_after"]),
        ("best known (upper bound)", s["upper_bound"]), ("disruptions", s["disruptions"]),
        ("repair method", s["repair_method"])]
    repairs = [r for r in s.get("repairs") or [] if "moved_operations" in r]
    if len(repairs) > 1:
        mixed = len({r.get("method") for r in repairs}) > 1  # e.g. a recovery patched one of them
        for k, r in enumerate(repairs, start=1):
            rows.append((f"repair {k} of {len(repairs)}", _repair_line(r, with_method=mixed)))
        totals = s.get("repair_totals") or repair_totals(repairs)
        rows += [("all repairs: moved operations", totals["moved_operations"]),
                 ("all repairs: total start shift", totals["total_start_shift"]),
                 ("all repairs: time (s)", totals["repair_seconds"]),
                 ("all repairs: global fallbacks", totals["fallbacks"])]
    else:
        rows += [("moved operations", s["moved_operations"]), ("total start shift", s["total_start_shift"]),
                 ("edit radius (operations)", s["edit_radius"]), ("repair time (s)", s["repair_seconds"]),
                 ("fallback to global re-solve", s["fallback"])]
    if len(repairs) > 1 and s.get("moved_since_first") is not None:
        rows.append(("moved between v1 and the final plan", s["moved_since_first"]))
    rows += [("versions committed", s["versions_committed"]), ("final version", s["final_version"]),
             ("final plan valid (independent validator)", s["final_valid"]),
             ("wall time (s), outputs included", s["seconds"])]
    if s.get("feedback_trace"):
        label = "validator feedback: violations per round" + (" (simulated LLM)" if s["planner"] == "simulated" else "")
        rows.append((label, " -> ".join(str(v) for v in s["feedback_trace"])))
    if s.get("llm"):
        llm = s["llm"]
        rows.append(("llm calls / tokens", f"{cell(llm.get('calls'))} / {cell(llm.get('total_tokens'))}"))
        missed, unusable = int(llm.get("failures") or 0), int(llm.get("unusable") or 0)
        if missed or unusable:
            # Each such job was planned by the fallback planner: a run against a dead endpoint succeeds, and
            # without this row its table reads like an LLM's plan.
            rows.append(("llm answers missing / unusable", f"{missed} / {unusable} of {cell(llm.get('exchanges'))} "
                         "exchanges: the fallback planner stood in (see `alas log show`)"))
    for what, value in rows:
        table.add_row(what, cell(value))
    return table


def write_outputs(out: Path, result: PipelineResult, log: ExecutionLog, *, summary: dict[str, Any] | None = None,
                  started: float | None = None) -> None:
    """DIR receives every committed plan, the disruptions, a before/after Gantt chart, and a report.

    The report is written last, so that its wall time (from ``started``, a ``time.perf_counter()`` value)
    includes the chart. The directory holds one run's outputs: files an earlier run wrote there under the
    same names (``v3.json`` from a run with more versions, say) are removed once the new set is written.
    """
    summary = dict(summary if summary is not None else result.summary())
    written: set[str] = set()

    def put(name: str, doc: Any) -> None:
        write_json_file(out / name, doc)
        written.add(name)

    try:
        out.mkdir(parents=True, exist_ok=True)
        for version in result.versions:
            put(f"v{version}.json", log.plan(version))
        if result.final is not None:
            put("final.json", result.final.to_json())
        for k, d in enumerate(result.disruptions, start=1):
            put(f"disruption_{k}.json", d.to_json())
        if result.baseline is not None and result.final is not None:
            from alas_argo.jssp.gantt import save_gantt  # matplotlib only when a chart is drawn

            count = len(result.disruptions)
            title = (f"{result.instance.name}: v1 and the final plan v{result.final_version}"
                     + (f" after {count} disruptions" if count > 1 else ""))
            for name in ("gantt.png", "gantt.html"):  # the PNG for reports, the HTML to explore
                save_gantt(out / name, result.instance, result.final, before=result.baseline,
                           disruptions=result.disruptions, title=title)
                written.add(name)
        if started is not None:
            summary["seconds"] = round(time.perf_counter() - started, 3)
        put("report.json", summary)
        lines = [f"# ALAS run {summary['run_id']}", "", "| what | value |", "|---|---|"]
        lines += [f"| {k} | {cell(v)} |" for k, v in summary.items()
                  if k not in ("repairs", "errors", "feedback_rounds")]
        (out / "report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.add("report.md")
        for stale in out.iterdir():
            if OWNED_FILES.match(stale.name) and stale.name not in written and stale.is_file():
                stale.unlink()
    except OSError as e:  # the place was checked before the run; a disk that filled up since lands here
        raise write_refused(e, "cannot write the run's outputs", str(out)) from None
