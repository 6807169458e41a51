"""The repair benchmark: every repair method on the same baselines and the same disruptions.

For each instance a baseline plan is computed once (and cached as JSON in the output directory), then for
each scenario and seed one disruption is drawn and every method repairs it. Rows carry the independent
validator's verdict. The summary is per scenario and method, plus LCRP's ratios against every other method.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from alas_argo.benchmarks.tables import rows_to_csv
from alas_argo.errors import AlasError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption, DisruptionKind, generate_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.planning import plan
from alas_argo.jssp.repair import RepairMethod, check_effort, repair
from alas_argo.jssp.schedule import Schedule

__all__ = ["COLUMNS", "LcrpRatio", "MethodSummary", "RepairRow", "baseline", "lcrp_label", "lcrp_ratios",
           "run_repair_bench", "summarize", "to_csv", "to_markdown", "write_outputs"]

COLUMNS = ("instance", "size", "scenario", "seed", "method", "baseline_makespan", "makespan", "moved_operations",
           "total_start_shift", "edit_radius", "neighbourhood_growths", "wip_moved", "fallback", "seconds",
           "valid", "error")


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


@dataclass(frozen=True)
class MethodSummary:
    """One method over the cases of one scenario."""

    scenario: str
    method: str
    cases: int
    valid_rate: float
    mean_makespan_ratio: float  #: makespan / baseline makespan
    mean_moved: float
    median_seconds: float
    fallbacks: int


@dataclass(frozen=True)
class LcrpRatio:
    """LCRP against one other method over the cases both solved validly."""

    scenario: str
    against: str
    cases: int
    makespan_ratio: float  #: mean over cases of lcrp makespan / other makespan
    moved_ratio: float  #: total operations lcrp moved / total the other moved
    time_ratio: float  #: total lcrp seconds / total other seconds
    not_worse: int  #: cases where lcrp's makespan <= the other's
    lcrp: str = "lcrp"  #: which LCRP variant (see :func:`lcrp_label`)


def baseline(instance: Instance, *, time_limit: float, workers: int, cache: Path | None) -> Schedule:
    """The plan in force before any disruption: planned once, then read back from ``cache``."""
    path = None if cache is None else cache / f"{instance.name}.json"
    if path is not None and path.exists():
        return Schedule.model_validate(json.loads(path.read_text(encoding="utf-8")))
    schedule = plan(instance, time_limit=time_limit, workers=workers).schedule
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(schedule.to_json()), encoding="utf-8")
        tmp.replace(path)
    return schedule


def run_repair_bench(names: Sequence[str], *, scenarios: Sequence[DisruptionKind | str], seeds: int,
                     methods: Sequence[RepairMethod | str] = tuple(RepairMethod), time_limit: float = 10.0,
                     baseline_time_limit: float = 10.0, workers: int = 2, cache: Path | None = None,
                     on_row: Callable[[RepairRow], None] | None = None, lcrp_efforts: Sequence[float] = (1.0,)
                     ) -> list[RepairRow]:
    """Repair ``seeds`` disruptions per instance and scenario with every method.

    LCRP runs once per effort in ``lcrp_efforts``; its rows are named by :func:`lcrp_label`, so one run
    compares several time boxes against the same (slow) baselines.

    Raises:
        InputError: an unknown instance, scenario or method, or an unusable LCRP effort.
    """
    kinds = [DisruptionKind(s) if s in {k.value for k in DisruptionKind} else _bad_scenario(str(s))
             for s in scenarios]
    chosen = [RepairMethod.parse(m) for m in methods]
    for effort in lcrp_efforts:
        check_effort(effort)  # before the baselines: a bad effort should not cost minutes of planning
    runs = [(m, e) for m in chosen for e in (lcrp_efforts if m is RepairMethod.LCRP else (1.0,))]
    rows: list[RepairRow] = []
    for name in names:
        inst = get_instance(name)
        base = baseline(inst, time_limit=baseline_time_limit, workers=workers, cache=cache)
        for kind in kinds:
            for seed in range(seeds):
                disruption = generate_disruption(inst, base, kind, seed=seed)
                for method, effort in runs:
                    row = _one(inst, base, disruption, kind, seed, method, time_limit, workers, effort)
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
    return rows


def lcrp_label(effort: float) -> str:
    """How LCRP rows are named: ``lcrp`` at the default effort, ``lcrp@E`` otherwise."""
    return "lcrp" if effort == 1.0 else f"lcrp@{effort:g}"


def _is_lcrp(method: str) -> bool:
    """Whether a row's method names an LCRP variant (``lcrp`` or ``lcrp@E``, see :func:`lcrp_label`)."""
    return method.split("@")[0] == RepairMethod.LCRP.value


def _bad_scenario(name: str) -> DisruptionKind:
    raise InputError(f"unknown scenario {name!r}; known: {', '.join(k.value for k in DisruptionKind)}")


def _one(inst: Instance, base: Schedule, disruption: Disruption, kind: DisruptionKind, seed: int,
         method: RepairMethod, time_limit: float, workers: int, effort: float = 1.0) -> RepairRow:
    label = lcrp_label(effort) if method is RepairMethod.LCRP else method.value
    failed = RepairRow(instance=inst.name, size=inst.size, scenario=kind.value, seed=seed, method=label,
                       baseline_makespan=base.makespan, makespan=0, moved_operations=0, total_start_shift=0,
                       edit_radius=0, neighbourhood_growths=0, wip_moved=0, fallback=False, seconds=0.0,
                       valid=False)
    try:
        r = repair(inst, base, disruption, method, budget=time_limit, seed=seed, workers=workers, effort=effort)
    except AlasError as e:  # a failed case is a row, not a crashed benchmark
        return replace(failed, error=str(e))
    return replace(failed, makespan=r.makespan, moved_operations=r.moved_operations,
                   total_start_shift=r.total_start_shift, edit_radius=r.edit_radius,
                   neighbourhood_growths=r.neighbourhood_growths, wip_moved=r.wip_moved, fallback=r.fallback,
                   seconds=r.seconds, valid=r.valid)


def summarize(rows: Sequence[RepairRow]) -> list[MethodSummary]:
    """Per scenario and method: validity, mean makespan ratio to the baseline, moves, median time."""
    out = []
    for scenario in dict.fromkeys(r.scenario for r in rows):
        for method in dict.fromkeys(r.method for r in rows):
            sel = [r for r in rows if r.scenario == scenario and r.method == method]
            ok = [r for r in sel if r.valid]
            if not sel:
                continue
            out.append(MethodSummary(
                scenario=scenario, method=method, cases=len(sel), valid_rate=len(ok) / len(sel),
                mean_makespan_ratio=statistics.fmean(r.makespan / r.baseline_makespan for r in ok) if ok else 0.0,
                mean_moved=statistics.fmean(r.moved_operations for r in ok) if ok else 0.0,
                median_seconds=statistics.median(r.seconds for r in ok) if ok else 0.0,
                fallbacks=sum(r.fallback for r in sel)))
    return out


def lcrp_ratios(rows: Sequence[RepairRow]) -> list[LcrpRatio]:
    """Every LCRP variant against every other method, per scenario and over all scenarios (``all``)."""
    key = {(r.instance, r.scenario, r.seed, r.method): r for r in rows if r.valid}
    methods = list(dict.fromkeys(r.method for r in rows))
    out = []
    for variant in filter(_is_lcrp, methods):
        for scenario in [*dict.fromkeys(r.scenario for r in rows), "all"]:
            for other in (m for m in methods if not _is_lcrp(m)):
                pairs = [(key[(*c, variant)], key[(*c, other)])
                         for c in dict.fromkeys((r.instance, r.scenario, r.seed) for r in rows
                                                if scenario in ("all", r.scenario))
                         if (*c, variant) in key and (*c, other) in key]
                if not pairs:
                    continue
                out.append(LcrpRatio(
                    scenario=scenario, against=other, cases=len(pairs),
                    makespan_ratio=statistics.fmean(a.makespan / b.makespan for a, b in pairs),
                    moved_ratio=sum(a.moved_operations for a, _ in pairs) / max(1, sum(b.moved_operations
                                                                                      for _, b in pairs)),
                    time_ratio=sum(a.seconds for a, _ in pairs) / max(1e-9, sum(b.seconds for _, b in pairs)),
                    not_worse=sum(a.makespan <= b.makespan for a, b in pairs), lcrp=variant))
    return out


def to_csv(rows: Sequence[RepairRow]) -> str:
    """Every row, one line each."""
    return rows_to_csv(rows, COLUMNS)


def to_markdown(rows: Sequence[RepairRow], *, title: str) -> str:
    """Summary, LCRP ratios and the full table as Markdown."""
    lines = [f"# {title}", "", "## Per scenario and method", "",
             "| scenario | method | cases | valid | makespan / baseline | moved (mean) | median s | fallbacks |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {s.scenario} | {s.method} | {s.cases} | {100 * s.valid_rate:.0f}% | {s.mean_makespan_ratio:.4f} "
              f"| {s.mean_moved:.1f} | {s.median_seconds:.3f} | {s.fallbacks} |" for s in summarize(rows)]
    lines += ["", "## LCRP against each method", "",
              "| lcrp | scenario | against | cases | makespan ratio | moved ratio | time ratio | lcrp not worse |",
              "|---|---|---|---:|---:|---:|---:|---:|"]
    lines += [f"| {x.lcrp} | {x.scenario} | {x.against} | {x.cases} | {x.makespan_ratio:.4f} | {x.moved_ratio:.3f} | "
              f"{x.time_ratio:.3f} | {x.not_worse}/{x.cases} |" for x in lcrp_ratios(rows)]
    lines += ["", "## All cases", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(v) for v in asdict(r).values()) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _pareto(rows: Sequence[RepairRow], scenario: str, path: Path) -> None:
    fig = Figure(figsize=(7, 5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for i, method in enumerate(dict.fromkeys(r.method for r in rows)):
        sel = [r for r in rows if r.scenario == scenario and r.method == method and r.valid]
        if not sel:
            continue
        xs = [r.moved_operations for r in sel]
        ys = [r.makespan / r.baseline_makespan for r in sel]
        color = f"C{i}"
        ax.scatter(xs, ys, s=14, alpha=0.45, color=color)
        ax.scatter([statistics.fmean(xs)], [statistics.fmean(ys)], s=90, marker="D", color=color,
                   edgecolor="black", label=method)
    ax.set_xlabel("moved operations")
    ax.set_ylabel("makespan / baseline makespan")
    ax.set_title(f"Repair trade-off, {scenario} (diamonds: means; lower left is better)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")


def write_outputs(rows: Sequence[RepairRow], directory: Path, *, title: str) -> list[Path]:
    """Write ``repair.csv``, ``repair.md`` and one ``pareto-<scenario>.png`` per scenario; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("repair.csv", to_csv(rows)), ("repair.md", to_markdown(rows, title=title))):
        path = directory / name
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    for scenario in dict.fromkeys(r.scenario for r in rows):
        path = directory / f"pareto-{scenario}.png"
        _pareto(rows, scenario, path)
        written.append(path)
    return written
