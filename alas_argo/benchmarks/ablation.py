"""`alas bench ablation`: the ALAS paper's ablation (§4.2, Table 5) — full vs no-repair vs no-validator.

Each case is one instance; each trial of a case runs the whole pipeline. By default the faults come from
the planner (paper §4.2): ``--planner simulated`` with ``--optimizer none`` plans with the declared LLM
simulator in charge (:mod:`alas_argo.agents.simulated`), so a trial's plan is wrong exactly where the
simulated agents erred and the validator's feedback did not get it fixed. The variants then mean:

- ``full``: validator feedback to the agents for K rounds, then the deterministic patch;
- ``no_repair``: the same feedback rounds, no patch (an invalid last draft fails the run);
- ``no_validator``: no validation, so no feedback either: the agents' first answers are committed.

``--faults N`` additionally injects N labelled structural faults after the optimizer (the older protocol,
with which full 100 % / the others 0 % holds by construction when the planner itself makes no mistake).

Figures per variant, each judged afterwards by the independent validator: success rate (valid final
plans), optimal rate (100 x best known / makespan for a valid final plan, 0 otherwise; mean over trials),
share at the best known makespan, and the gap to it over the valid plans.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alas_argo.benchmarks.llm_bench import optimal_rate
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
    planner: str = "heuristic"
    optimal_rate: float = 0.0
    at_best: bool = False
    feedback_trace: str = ""


def run_ablation(names: Sequence[str], *, variants: Sequence[Variant] = tuple(Variant), trials: int = 20,
                 faults: int = 0, planner: str = "simulated", optimizer: str = "auto", feedback_rounds: int = 5,
                 time_limit: float = 1.0, seed: int = 0,
                 on_row: Callable[[AblationRow], None] | None = None) -> list[AblationRow]:
    """Run every (instance, variant, trial); the same seeds give every variant the same planner answers
    and the same injected faults. ``optimizer`` auto means none for the simulated planner (its faults must
    reach the validator) and the planner's default otherwise."""
    if optimizer == "auto" and planner in ("simulated", "llm"):
        optimizer = "none"
    rows: list[AblationRow] = []
    with tempfile.TemporaryDirectory(prefix="alas-ablation-") as tmp:
        store = FsStore(Path(tmp))
        for name in names:
            for variant in variants:
                for trial in range(trials):
                    config = RunConfig(instance=name, planner=planner, faults=faults, seed=seed + trial,
                                       variant=variant, time_limit=time_limit, repair_budget=time_limit,
                                       optimizer=optimizer, feedback_rounds=feedback_rounds)
                    log = ExecutionLog(store, f"{name}-{variant}-{trial}")
                    result = run_pipeline(config, log)
                    # A fresh run id per trial: the workflow always runs, so its outputs are there.
                    outputs = result.run.outputs if result.run is not None else {}
                    injected = outputs.get("inject", {}).get("faults", [])
                    makespan = result.final.makespan if result.final else None
                    best = result.instance.upper_bound
                    row = AblationRow(
                        instance=name, variant=str(variant), trial=trial, faults=faults,
                        injected=",".join(sorted({str(f["kind"]) for f in injected})),
                        status=str(result.status), final_valid=result.succeeded,
                        makespan=makespan, upper_bound=best, seconds=round(result.seconds, 3), planner=planner,
                        optimal_rate=round(optimal_rate(result.succeeded, makespan, best), 3),
                        at_best=result.succeeded and makespan is not None and best is not None and makespan <= best,
                        feedback_trace=" > ".join(str(int(r["violations"])) for r in result.feedback))
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
            "optimal_rate": round(statistics.fmean(r.optimal_rate for r in mine), 2) if mine else 0.0,
            "at_best_percent": round(100.0 * sum(r.at_best for r in mine) / len(mine), 1) if mine else 0.0,
            "simulated": any(r.planner == "simulated" for r in mine),
        })
    return out


def write_ablation(directory: Path, rows: Sequence[AblationRow]) -> tuple[Path, Path]:
    """Write every trial as CSV and the per-variant summary as Markdown."""
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = directory / "ablation.csv", directory / "ablation.md"
    csv_path.write_text(rows_to_csv(rows, list(AblationRow.__dataclass_fields__)), encoding="utf-8")
    summary = summarize_ablation(rows)
    planners = sorted({r.planner for r in rows})
    lines = [f"Planner: {', '.join(planners)}" + (" (SIMULATED: no model was asked)" if "simulated" in planners
                                                  else "") + ". Optimal rate: 100 x best known / makespan for a "
             "valid final plan, 0 otherwise.", "",
             "| variant | trials | valid final plans | valid % | optimal rate | at best % | mean makespan (valid) "
             "| mean gap % (valid) |", "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {s['variant']} | {s['trials']} | {s['valid_final_plans']} | {s['valid_rate_percent']} | "
              f"{s['optimal_rate']} | {s['at_best_percent']} | {s['mean_makespan_valid']} | "
              f"{s['mean_gap_percent_valid']} |" for s in summary]
    md_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return csv_path, md_path
