"""The tables of `alas bench llm`: per family and overall, a paired test, and prompt sizes.

Every caption says "simulated" when any of its rows came from the simulator (no model was asked).
The paired test compares, instance by instance, the mean optimal rate of the reference variant (``alas``)
with each other variant's (Wilcoxon signed-rank, two-sided, scipy; ``None`` when every difference is zero or
fewer than two instances differ).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from alas_argo.benchmarks.llm_bench import LlmCaseRow
from alas_argo.benchmarks.tables import markdown_table as _table
from alas_argo.benchmarks.tables import rows_to_csv

__all__ = ["llm_markdown", "paired_tests", "prompt_sizes", "summarize_llm", "write_llm_bench"]


def _label(r: LlmCaseRow) -> str:
    return r.variant if r.context_scope == "normal" or r.agent_prompt_tokens is None else \
        f"{r.variant}[{r.context_scope}]"


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 2) if values else None


def _summary(scope: str, variant: str, rows: list[LlmCaseRow]) -> dict[str, Any]:
    valid = [r for r in rows if r.valid]
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    return {
        "scope": scope, "variant": variant, "cases": len(rows),
        "success_percent": round(100.0 * len(valid) / len(rows), 1),
        "patched_percent": round(100.0 * sum(r.patched for r in rows) / len(rows), 1),
        "optimal_rate": _mean([r.optimal_rate for r in rows]),
        "at_best_percent": round(100.0 * sum(r.at_best for r in rows) / len(rows), 1),
        "gap_percent_valid": _mean([r.gap_percent for r in valid if r.gap_percent is not None]),
        "rounds": _mean([float(r.rounds) for r in rows]),
        "calls": _mean([float(r.calls) for r in rows]),
        "prompt_tokens": _mean([float(r.prompt_tokens) for r in rows]),
        "completion_tokens": _mean([float(r.completion_tokens) for r in rows]),
        "seconds": _mean([r.seconds for r in rows]),
        "cost_usd": round(sum(costs), 6) if len(costs) == len(rows) else None,
        "simulated": any(r.simulated for r in rows),
    }


def summarize_llm(rows: Sequence[LlmCaseRow]) -> list[dict[str, Any]]:
    """Per family and variant, then overall per variant (means over cases; cost summed)."""
    out = []
    variants = list(dict.fromkeys(_label(r) for r in rows))
    for family in dict.fromkeys(r.family for r in rows):
        for v in variants:
            mine = [r for r in rows if r.family == family and _label(r) == v]
            if mine:
                out.append(_summary(family, v, mine))
    for v in variants:
        out.append(_summary("overall", v, [r for r in rows if _label(r) == v]))
    return out


def _per_instance(rows: Sequence[LlmCaseRow], variant: str) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    for r in rows:
        if _label(r) == variant:
            by.setdefault(r.instance, []).append(r.optimal_rate)
    return {k: statistics.fmean(v) for k, v in by.items()}


def paired_tests(rows: Sequence[LlmCaseRow], reference: str = "alas") -> list[dict[str, Any]]:
    """Wilcoxon signed-rank on per-instance mean optimal rates: ``reference`` against every other variant."""
    from scipy.stats import wilcoxon

    ref = _per_instance(rows, reference)
    out = []
    for v in dict.fromkeys(_label(r) for r in rows):
        if v == reference:
            continue
        other = _per_instance(rows, v)
        common = sorted(ref.keys() & other.keys())
        diffs = [ref[k] - other[k] for k in common]
        p: float | None = None
        stat: float | None = None
        if sum(1 for d in diffs if d != 0) >= 2:
            result = wilcoxon(diffs)
            stat, p = float(result.statistic), float(result.pvalue)
        out.append({"reference": reference, "variant": v, "instances": len(common),
                    "mean_difference": _mean(diffs), "statistic": stat,
                    "p_value": p})
    return out


def prompt_sizes(rows: Sequence[LlmCaseRow]) -> list[dict[str, Any]]:
    """Per instance and context scope: the mean first-round prompt of one job agent against the
    single-agent prompt for the whole instance."""
    out = []
    for name in dict.fromkeys(r.instance for r in rows):
        single = next(r.single_prompt_tokens for r in rows if r.instance == name)
        for scope in dict.fromkeys(r.context_scope for r in rows):
            agent = [r.agent_prompt_tokens for r in rows if r.instance == name and r.context_scope == scope
                     and r.agent_prompt_tokens is not None]
            if not agent:
                continue
            mean_agent = statistics.fmean(agent)
            out.append({"instance": name, "scope": scope, "agent_prompt_tokens": round(mean_agent, 1),
                        "single_prompt_tokens": single,
                        "agent_over_single_percent": round(100.0 * mean_agent / single, 1),
                        "saved_percent": round(100.0 - 100.0 * mean_agent / single, 1)})
    return out


def llm_markdown(rows: Sequence[LlmCaseRow], caption: str) -> str:
    """Every table of the experiment, as Markdown."""
    simulated = any(r.simulated for r in rows)
    title = caption + (" — SIMULATED planner: no model was asked" if simulated else "")
    summary = summarize_llm(rows)
    lines = [f"## {title}", "", "Optimal rate: 100 x best known / makespan for a valid final plan, 0 for an "
             "invalid one (mean over cases); patched: the deterministic patch made the plan after K rounds; "
             "at best: share of cases whose valid plan reaches the best known "
             "makespan; gap: (makespan - best known) / best known, valid plans only.", ""]
    lines += _table(["scope", "variant", "cases", "success %", "patched %", "optimal rate", "at best %",
                     "gap % (valid)", "rounds", "calls", "prompt tok", "completion tok", "seconds", "cost USD"],
                    [[s["scope"], s["variant"], s["cases"], s["success_percent"], s["patched_percent"],
                      s["optimal_rate"],
                      s["at_best_percent"], s["gap_percent_valid"], s["rounds"], s["calls"], s["prompt_tokens"],
                      s["completion_tokens"], s["seconds"], s["cost_usd"]] for s in summary])
    tests = paired_tests(rows) if any(_label(r) == "alas" for r in rows) else []
    if tests:
        lines += ["", "Paired test (Wilcoxon signed-rank, per-instance mean optimal rate, alas vs each):", ""]
        lines += _table(["variant", "instances", "mean difference", "statistic", "p"],
                        [[t["variant"], t["instances"], t["mean_difference"], t["statistic"],
                          None if t["p_value"] is None else f"{t['p_value']:.3g}"] for t in tests])
    sizes = prompt_sizes(rows)
    if sizes:
        lines += ["", "Prompt size (tokens, four characters a token): one job agent's first prompt vs the "
                  "single-agent prompt for the whole instance:", ""]
        lines += _table(["instance", "scope", "agent prompt", "single-agent prompt", "agent / single %", "saved %"],
                        [[s["instance"], s["scope"], s["agent_prompt_tokens"], s["single_prompt_tokens"],
                          s["agent_over_single_percent"], s["saved_percent"]] for s in sizes])
    return "\n".join(lines) + "\n"


def write_llm_bench(directory: Path, rows: Sequence[LlmCaseRow], caption: str) -> tuple[Path, Path]:
    """Every case as CSV, every table as Markdown."""
    directory.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = directory / "llm_bench.csv", directory / "llm_bench.md"
    csv_path.write_text(rows_to_csv(rows, list(LlmCaseRow.__dataclass_fields__)), encoding="utf-8")
    md_path.write_text(llm_markdown(rows, caption), encoding="utf-8")
    return csv_path, md_path
