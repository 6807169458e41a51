"""The tables of `alas bench llm --disruptions`: per scenario, per family and overall, and a paired test.

Every caption says "simulated" when any of its rows came from the simulator (no model was asked), and each
table names what every variant did under the disruption (:data:`~alas_argo.benchmarks.llm_disruption.REPAIRS`).
The paired test compares, instance by instance, the mean rate of ``alas`` with each other variant's
(Wilcoxon signed-rank, two-sided, scipy; ``None`` when fewer than two instances differ), per scenario and
over all scenarios together.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.benchmarks.llm_disruption import REPAIRS, LlmDisruptionRow
from alas_argo.benchmarks.tables import markdown_table as _table
from alas_argo.benchmarks.tables import rows_to_csv

__all__ = ["ALL_SCENARIOS", "disruption_markdown", "disruption_paired_tests", "summarize_disruption",
           "write_disruption_bench"]

#: The scenario label of the pooled paired test.
ALL_SCENARIOS = "all"


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 2) if values else None


def _percent(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def _summary(scenario: str, scope: str, variant: str, rows: list[LlmDisruptionRow]) -> dict[str, Any]:
    valid = [r for r in rows if r.valid]
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    repaired = [r for r in rows if r.static_valid]
    return {
        "scenario": scenario, "scope": scope, "variant": variant, "cases": len(rows),
        "static_valid_percent": _percent(len(repaired), len(rows)),
        "success_percent": _percent(len(valid), len(rows)),
        "rate": _mean([r.rate for r in rows]),
        "gap_percent_valid": _mean([r.gap_percent for r in valid if r.gap_percent is not None]),
        "moved_valid": _mean([float(r.moved_operations) for r in valid if r.moved_operations is not None]),
        "rounds": _mean([float(r.rounds) for r in repaired]),
        "requests": _mean([float(r.requests) for r in repaired]),
        "calls": _mean([float(r.calls) for r in repaired]),
        "prompt_tokens": _mean([float(r.prompt_tokens) for r in repaired]),
        "completion_tokens": _mean([float(r.completion_tokens) for r in repaired]),
        "seconds": _mean([r.seconds for r in repaired]),
        "cost_usd": round(sum(costs), 6) if len(costs) == len(rows) else None,
        "repair": rows[0].repair,
        "simulated": any(r.simulated for r in rows),
    }


def summarize_disruption(rows: Sequence[LlmDisruptionRow]) -> list[dict[str, Any]]:
    """Per scenario: per family and variant, then overall per variant (means over cases; cost summed). The
    repair-phase means (rounds, calls, tokens, seconds) are over the cases that had a plan in force."""
    out = []
    variants = list(dict.fromkeys(r.variant for r in rows))
    for scenario in dict.fromkeys(r.scenario for r in rows):
        mine = [r for r in rows if r.scenario == scenario]
        for family in dict.fromkeys(r.family for r in mine):
            for v in variants:
                cell = [r for r in mine if r.family == family and r.variant == v]
                if cell:
                    out.append(_summary(scenario, family, v, cell))
        for v in variants:
            cell = [r for r in mine if r.variant == v]
            if cell:
                out.append(_summary(scenario, "overall", v, cell))
    return out


def _per_instance(rows: Sequence[LlmDisruptionRow], variant: str) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    for r in rows:
        if r.variant == variant:
            by.setdefault(r.instance, []).append(r.rate)
    return {k: statistics.fmean(v) for k, v in by.items()}


def disruption_paired_tests(rows: Sequence[LlmDisruptionRow], reference: str = "alas") -> list[dict[str, Any]]:
    """Wilcoxon signed-rank on per-instance mean rates, ``reference`` against every other variant: per
    scenario, then over all scenarios (:data:`ALL_SCENARIOS`)."""
    from scipy.stats import wilcoxon

    scenarios = list(dict.fromkeys(r.scenario for r in rows))
    groups = [(s, [r for r in rows if r.scenario == s]) for s in scenarios]
    if len(scenarios) > 1:
        groups.append((ALL_SCENARIOS, list(rows)))
    out = []
    for scenario, group in groups:
        ref = _per_instance(group, reference)
        if not ref:
            continue
        for v in dict.fromkeys(r.variant for r in group):
            if v == reference:
                continue
            other = _per_instance(group, v)
            common = sorted(ref.keys() & other.keys())
            diffs = [ref[k] - other[k] for k in common]
            stat: float | None = None
            p: float | None = None
            if sum(1 for d in diffs if d != 0) >= 2:
                result = wilcoxon(diffs)
                stat, p = float(result.statistic), float(result.pvalue)
            out.append({"scenario": scenario, "reference": reference, "variant": v, "instances": len(common),
                        "mean_difference": _mean(diffs), "statistic": stat, "p_value": p})
    return out


def disruption_markdown(rows: Sequence[LlmDisruptionRow], caption: str) -> str:
    """Every table of the experiment under disruptions, as Markdown."""
    simulated = any(r.simulated for r in rows)
    title = caption + (" — SIMULATED planner: no model was asked" if simulated else "")
    shared = any(r.plan_in_force == "alas" for r in rows)
    refs = [r for r in rows if r.reference_makespan is not None]
    proved = sum("optimal" in r.reference_note for r in refs)
    lines = [f"## {title}", "",
             "Plan in force: " + ("the alas variant's static plan for every variant (shared)" if shared else
                                  "each variant's own static plan; an invalid one cannot be in force and the "
                                  "case fails before the disruption (static valid %)") + ". "
             "Success: the validator accepts the final plan against the disruption and the plan in force. "
             "Reference: the full re-solve (CP-SAT over every free operation) of the same plan in force and "
             f"disruption, time-boxed; proved optimal in {proved} of {len(refs)} cases. Rate: 100 x reference / "
             "makespan for a valid final plan (at most 100), 0 otherwise. Gap to the reference and moved "
             "operations (start changed against the plan in force): valid plans only. Rounds, requests (LLM "
             "exchanges), HTTP calls (0 when replayed), tokens, seconds and cost: the repair phase only, over "
             "the cases with a plan in force.", "",
             "What each variant does under the disruption:", ""]
    present = {r.variant for r in rows}
    lines += [f"- `{v.value}`: {REPAIRS[v]}" for v in LlmVariant if v.value in present]
    lines.append("")
    lines += _table(["scenario", "scope", "variant", "repair", "cases", "static valid %", "success %", "rate",
                     "gap % (valid)", "moved ops (valid)", "rounds", "requests", "HTTP calls", "prompt tok",
                     "completion tok", "seconds", "cost USD"],
                    [[s["scenario"], s["scope"], s["variant"], s["repair"], s["cases"], s["static_valid_percent"],
                      s["success_percent"], s["rate"], s["gap_percent_valid"], s["moved_valid"], s["rounds"],
                      s["requests"], s["calls"], s["prompt_tokens"], s["completion_tokens"], s["seconds"],
                      s["cost_usd"]]
                     for s in summarize_disruption(rows)])
    tests = disruption_paired_tests(rows) if "alas" in present else []
    if tests:
        lines += ["", "Paired test (Wilcoxon signed-rank, per-instance mean rate, alas vs each):", ""]
        lines += _table(["scenario", "variant", "instances", "mean difference", "statistic", "p"],
                        [[t["scenario"], t["variant"], t["instances"], t["mean_difference"], t["statistic"],
                          None if t["p_value"] is None else f"{t['p_value']:.3g}"] for t in tests])
    return "\n".join(lines) + "\n"


def write_disruption_bench(directory: Path, rows: Sequence[LlmDisruptionRow], caption: str) -> tuple[Path, Path]:
    """Every case as CSV, every table as Markdown."""
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = directory / "llm_disruption.csv", directory / "llm_disruption.md"
    csv_path.write_text(rows_to_csv(rows, list(LlmDisruptionRow.__dataclass_fields__)), encoding="utf-8")
    md_path.write_text(disruption_markdown(rows, caption), encoding="utf-8")
    return csv_path, md_path
