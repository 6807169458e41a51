"""`alas bench ablation`: the ALAS paper's ablation — full vs no-repair vs no-validator under injected faults.

Each case is one instance; each trial of a case runs the whole pipeline with structural faults injected
into the plan right before validation (kinds drawn from the seed). The figure that matters is the rate of
*valid final plans*, judged afterwards by the independent validator: a run that fails (e.g. the
revalidation loop's guard trips because nothing repairs) has no valid final plan.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alas_argo.benchmarks.tables import rows_to_csv
from alas_argo.log import ExecutionLog, FsStore
from alas_argo.pipeline import RunConfig, Variant, run_pipeline

__all__ = ["AblationRow", "run_ablation", "summarize_ablation", "write_ablation"]


@dataclass(frozen=True)
class AblationRow:
    """One trial."""

    instance: str
    variant: str
    trial: int
    faults: int
    injected: str
    status: str
    final_valid: bool
    makespan: int | None
    upper_bound: int | None
    seconds: float


def run_ablation(names: Sequence[str], *, variants: Sequence[Variant] = tuple(Variant), trials: int = 20,
                 faults: int = 1, planner: str = "heuristic", time_limit: float = 1.0, seed: int = 0,
                 on_row: Callable[[AblationRow], None] | None = None) -> list[AblationRow]:
    """Run every (instance, variant, trial); the same seeds give every variant the same faults."""
    rows: list[AblationRow] = []
    with tempfile.TemporaryDirectory(prefix="alas-ablation-") as tmp:
        store = FsStore(Path(tmp))
        for name in names:
            for variant in variants:
                for trial in range(trials):
                    config = RunConfig(instance=name, planner=planner, faults=faults, seed=seed + trial,
                                       variant=variant, time_limit=time_limit, repair_budget=time_limit)
                    log = ExecutionLog(store, f"{name}-{variant}-{trial}")
                    result = run_pipeline(config, log)
                    # A fresh run id per trial: the workflow always runs, so its outputs are there.
                    outputs = result.run.outputs if result.run is not None else {}
                    injected = outputs.get("inject", {}).get("faults", [])
                    row = AblationRow(
                        instance=name, variant=str(variant), trial=trial, faults=faults,
                        injected=",".join(sorted({str(f["kind"]) for f in injected})),
                        status=str(result.status), final_valid=result.succeeded,
                        makespan=result.final.makespan if result.final else None,
                        upper_bound=result.instance.upper_bound, seconds=round(result.seconds, 3))
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
    return rows


def summarize_ablation(rows: Sequence[AblationRow]) -> list[dict[str, Any]]:
    """Per variant: trials, valid-final-plan rate, mean makespan of the valid plans, mean gap to the UB."""
    out = []
    for variant in dict.fromkeys(r.variant for r in rows):
        mine = [r for r in rows if r.variant == variant]
        valid = [r for r in mine if r.final_valid and r.makespan is not None]
        gaps = [100.0 * (r.makespan - r.upper_bound) / r.upper_bound for r in valid
                if r.makespan is not None and r.upper_bound]
        out.append({
            "variant": variant,
            "trials": len(mine),
            "valid_final_plans": len(valid),
            "valid_rate_percent": round(100.0 * len(valid) / len(mine), 1) if mine else 0.0,
            "mean_makespan_valid": round(statistics.fmean(r.makespan for r in valid if r.makespan), 1)
            if valid else None,
            "mean_gap_percent_valid": round(statistics.fmean(gaps), 2) if gaps else None,
        })
    return out


def write_ablation(directory: Path, rows: Sequence[AblationRow]) -> tuple[Path, Path]:
    """Write every trial as CSV and the per-variant summary as Markdown."""
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = directory / "ablation.csv", directory / "ablation.md"
    csv_path.write_text(rows_to_csv(rows, list(AblationRow.__dataclass_fields__)), encoding="utf-8")
    summary = summarize_ablation(rows)
    lines = ["| variant | trials | valid final plans | valid % | mean makespan (valid) | mean gap % (valid) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {s['variant']} | {s['trials']} | {s['valid_final_plans']} | {s['valid_rate_percent']} | "
              f"{s['mean_makespan_valid']} | {s['mean_gap_percent_valid']} |" for s in summary]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path
