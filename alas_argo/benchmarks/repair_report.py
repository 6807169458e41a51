"""The repair benchmark's report: summaries, LCRP's ratios, the CSV and Markdown tables and the Pareto plots.

Pure functions of the rows of :mod:`.repair` (plus the writers), so that an earlier run's ``repair.csv`` can
be read back (:func:`from_csv`) and its report rendered again without repairing anything.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from alas_argo.benchmarks.repair import COLUMNS, LEGACY_COLUMNS, RepairRow, is_lcrp
from alas_argo.benchmarks.tables import rows_to_csv
from alas_argo.deferred import deferred
from alas_argo.errors import InputError
from alas_argo.json_limits import MAX_INT_DIGITS

if TYPE_CHECKING:
    from matplotlib import figure
    from matplotlib.backends import backend_agg
else:  # imported when the first chart is drawn (alas_argo.deferred)
    backend_agg, figure = deferred("matplotlib.backends.backend_agg"), deferred("matplotlib.figure")

__all__ = ["LcrpRatio", "MethodSummary", "SizeRatio", "case_key", "from_csv", "lcrp_ratios", "merge_tables",
           "size_ratios", "summarize", "to_csv", "to_markdown", "write_outputs"]


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
    went_global: int = 0  #: cases that edited beyond a local neighbourhood
    mean_touched_machines: float = 0.0  #: machines with a moved operation, mean over valid cases


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
    worst_makespan_ratio: float = 0.0  #: the largest lcrp makespan / other makespan over the cases
    lcrp_median_seconds: float = 0.0  #: lcrp's median repair time over the cases


@dataclass(frozen=True)
class SizeRatio:
    """One LCRP variant against ``full`` on the instances of one size: the repair targets are per size."""

    lcrp: str
    size: str
    cases: int
    makespan_ratio: float  #: mean over cases of lcrp makespan / full makespan
    moved_ratio: float  #: total operations lcrp moved / total full moved
    median_seconds: float  #: lcrp's median repair time


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
                fallbacks=sum(r.fallback for r in sel), went_global=sum(r.went_global for r in sel),
                mean_touched_machines=statistics.fmean(r.touched_machines for r in ok) if ok else 0.0))
    return out


def lcrp_ratios(rows: Sequence[RepairRow]) -> list[LcrpRatio]:
    """Every LCRP variant against every other method, per scenario and over all scenarios (``all``)."""
    methods = list(dict.fromkeys(r.method for r in rows))
    index, out = _index(rows), []
    for variant in filter(is_lcrp, methods):
        for scenario in [*dict.fromkeys(r.scenario for r in rows), "all"]:
            for other in (m for m in methods if not is_lcrp(m)):
                pairs = _pairs(index, variant, other, [r for r in rows if scenario in ("all", r.scenario)])
                if pairs:
                    out.append(LcrpRatio(
                        scenario=scenario, against=other, cases=len(pairs), makespan_ratio=_makespan_ratio(pairs),
                        moved_ratio=_moved_ratio(pairs),
                        time_ratio=sum(a.seconds for a, _ in pairs) / max(1e-9, sum(b.seconds for _, b in pairs)),
                        not_worse=sum(a.makespan <= b.makespan for a, b in pairs), lcrp=variant,
                        worst_makespan_ratio=max(a.makespan / b.makespan for a, b in pairs),
                        lcrp_median_seconds=statistics.median(a.seconds for a, _ in pairs)))
    return out


def size_ratios(rows: Sequence[RepairRow], *, against: str = "full") -> list[SizeRatio]:
    """Every LCRP variant against ``against`` per instance size, over the cases both solved validly."""
    index, out = _index(rows), []
    for variant in filter(is_lcrp, dict.fromkeys(r.method for r in rows)):
        for size in dict.fromkeys(r.size for r in rows):
            pairs = _pairs(index, variant, against, [r for r in rows if r.size == size])
            if pairs:
                out.append(SizeRatio(lcrp=variant, size=size, cases=len(pairs), makespan_ratio=_makespan_ratio(pairs),
                                     moved_ratio=_moved_ratio(pairs),
                                     median_seconds=statistics.median(a.seconds for a, _ in pairs)))
    return out


Pair = tuple[RepairRow, RepairRow]
Index = dict[tuple[str, str, int, str], RepairRow]


def _index(rows: Sequence[RepairRow]) -> Index:
    """The valid rows by (instance, scenario, seed, method)."""
    return {(r.instance, r.scenario, r.seed, r.method): r for r in rows if r.valid}


def _pairs(key: Index, variant: str, other: str, selected: Sequence[RepairRow]) -> list[Pair]:
    """(variant row, other row) for every case of the ``selected`` rows that both solved validly."""
    cases = dict.fromkeys((r.instance, r.scenario, r.seed) for r in selected)
    return [(key[(*c, variant)], key[(*c, other)]) for c in cases if (*c, variant) in key and (*c, other) in key]


def _makespan_ratio(pairs: Sequence[Pair]) -> float:
    return statistics.fmean(a.makespan / b.makespan for a, b in pairs)


def _moved_ratio(pairs: Sequence[Pair]) -> float:
    # Totals, not a mean of per-case ratios: a case where the other method moves nothing would dominate it.
    return sum(a.moved_operations for a, _ in pairs) / max(1, sum(b.moved_operations for _, b in pairs))


def to_csv(rows: Sequence[RepairRow]) -> str:
    """Every row, one line each."""
    return rows_to_csv(rows, COLUMNS)


def to_markdown(rows: Sequence[RepairRow], *, title: str, rerun: str | None = None) -> str:
    """Summary, LCRP ratios and the full table as Markdown; ``rerun`` says how to repeat one row."""
    lines = [f"# {title}", "", *([f"Rerun one row alone: `{rerun}`", ""] if rerun else []),
             "## Per scenario and method", "",
             "| scenario | method | cases | valid | makespan / baseline | moved (mean) | touched machines (mean) "
             "| median s | fallbacks | went global |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {s.scenario} | {s.method} | {s.cases} | {100 * s.valid_rate:.0f}% | {s.mean_makespan_ratio:.4f} "
              f"| {s.mean_moved:.1f} | {s.mean_touched_machines:.1f} | {s.median_seconds:.3f} | {s.fallbacks} "
              f"| {s.went_global} |" for s in summarize(rows)]
    lines += ["", "## LCRP against each method", "",
              "| lcrp | scenario | against | cases | makespan ratio | worst case | moved ratio | time ratio "
              "| lcrp median s | lcrp not worse |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {x.lcrp} | {x.scenario} | {x.against} | {x.cases} | {x.makespan_ratio:.4f} | "
              f"{x.worst_makespan_ratio:.4f} | {x.moved_ratio:.3f} | {x.time_ratio:.3f} | {x.lcrp_median_seconds:.3f} "
              f"| {x.not_worse}/{x.cases} |" for x in lcrp_ratios(rows)]
    lines += ["", "## LCRP against full by instance size", "",
              "| lcrp | size | cases | makespan ratio | moved ratio | lcrp median s |", "|---|---|---:|---:|---:|---:|"]
    lines += [f"| {x.lcrp} | {x.size} | {x.cases} | {x.makespan_ratio:.4f} | {x.moved_ratio:.3f} | "
              f"{x.median_seconds:.3f} |" for x in size_ratios(rows)]
    lines += ["", "## All cases", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(v) for v in asdict(r).values()) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _pareto(rows: Sequence[RepairRow], scenario: str, path: Path) -> None:
    fig = figure.Figure(figsize=(7, 5), dpi=100)
    backend_agg.FigureCanvasAgg(fig)
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


def write_outputs(rows: Sequence[RepairRow], directory: Path, *, title: str, rerun: str | None = None) -> list[Path]:
    """Write ``repair.csv``, ``repair.md`` and one ``pareto-<scenario>.png`` per scenario; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("repair.csv", to_csv(rows)), ("repair.md", to_markdown(rows, title=title, rerun=rerun))):
        path = directory / name
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    for scenario in dict.fromkeys(r.scenario for r in rows):
        path = directory / f"pareto-{scenario}.png"
        _pareto(rows, scenario, path)
        written.append(path)
    for stale in directory.glob("pareto-*.png"):
        # A chart of a scenario this run did not have is an earlier run's, beside tables that do not list it.
        if stale not in written:
            stale.unlink()
    return written


def case_key(row: RepairRow) -> tuple[str, str, int, str]:
    """What a row measures: one method on one case (instance, scenario, seed)."""
    return row.instance, row.scenario, row.seed, row.method


def merge_tables(tables: Sequence[tuple[str, Sequence[RepairRow]]]) -> tuple[list[RepairRow], list[str]]:
    """The rows of several tables as one: a case a later table measured again replaces the earlier row (so a new
    run's LCRP rows can be set against an old run's baselines), and each replacement is said.

    Args:
        tables: (source name, rows) in the order given; each table holds a case at most once (:func:`from_csv`).

    Returns:
        The merged rows, in the order their cases first appear, and one note per table that replaced rows.

    Raises:
        InputError: Two tables repaired one case from plans of different makespans: their rows would be paired
            as if they repaired the same plan (runs merge only on the same baselines).
    """
    merged: dict[tuple[str, str, int, str], tuple[RepairRow, str]] = {}  # each case's row and its table
    notes = []
    for source, rows in tables:
        replaced: Counter[str] = Counter()
        for row in rows:
            if (earlier := merged.get(case_key(row))) is not None:
                replaced[earlier[1]] += 1
            merged[case_key(row)] = row, source
        notes += [f"{n} row{'' if n == 1 else 's'} of {source} replace the same cases of {earlier_source}"
                  for earlier_source, n in replaced.items()]
    baselines: dict[tuple[str, str, int], tuple[int, str]] = {}
    for key, (row, source) in merged.items():
        makespan, first = baselines.setdefault(key[:3], (row.baseline_makespan, source))
        if makespan != row.baseline_makespan:
            raise InputError(f"{row.instance} {row.scenario} seed {row.seed} was repaired from a plan of makespan "
                             f"{makespan} in {first} and of {row.baseline_makespan} in {source}: merge runs "
                             "on the same baselines (copy the first run's baselines/ into the second's --out)")
    return [row for row, _ in merged.values()], notes


def from_csv(text: str, *, source: str = "repair.csv") -> list[RepairRow]:
    """Rows read back from :func:`to_csv` output, to re-render the tables and plots of an earlier run.

    Raises:
        InputError: The header is not the benchmark's, a row has more cells than it, or a cell does not parse;
            the message names the line.
    """
    reader = csv.DictReader(io.StringIO(text))
    try:
        header = tuple(reader.fieldnames or ())
        if header not in (COLUMNS, LEGACY_COLUMNS):
            raise InputError(f"{source}: not a repair benchmark table (header {str(reader.fieldnames)[:200]}, "
                             f"expected {','.join(COLUMNS)})")
        rows, seen = [], set()
        for record in reader:
            try:
                if None in record:  # DictReader keeps the cells past the header under the key None
                    raise ValueError(f"{len(header) + len(record[None])} cells, the header has {len(header)}")
                row = _checked(RepairRow(**{name: _cell(name, kind, record[name])
                                            for name, kind in _TYPES.items() if name in header}))
                if (key := case_key(row)) in seen:  # a bench run writes each case once; a second would count twice
                    raise ValueError(f"{row.method} on {row.instance} {row.scenario} seed {row.seed} appears twice")
                seen.add(key)
                rows.append(row)
            except (TypeError, ValueError) as e:
                # The line the record ends on: blank lines are skipped, not rows, and a quoted cell may span lines.
                raise InputError(f"{source}, line {reader.line_num}: {str(e)[:200]}") from None
    except csv.Error as e:  # a field past the csv module's size limit, a quote where none may be
        # The csv reader's own count: DictReader's stops at the last row it returned, the line before this one.
        raise InputError(f"{source}, line {reader.reader.line_num}: not CSV: {e}") from None
    return rows


_TYPES = {f.name: f.type for f in fields(RepairRow)}


def _checked(row: RepairRow) -> RepairRow:
    """A row the benchmark could have written: the ratios divide by makespans, so they must be positive."""
    if row.baseline_makespan < 1 or (row.valid and row.makespan < 1):
        raise ValueError("makespans must be positive")
    counts = (row.moved_operations, row.total_start_shift, row.edit_radius, row.neighbourhood_growths, row.wip_moved,
              row.touched_machines)
    if min(counts) < 0 or row.seconds < 0:
        raise ValueError("counts and seconds must not be negative")
    return row


def _cell(name: str, kind: object, text: str | None) -> Any:
    """The value of column ``name``'s cell; ValueError naming the column when it is missing or not its type."""
    if text is None:
        raise ValueError(f"{name}: missing cell")
    if kind == "bool":
        if text not in ("True", "False"):
            raise ValueError(f"{name}: expected True or False, got {text[:20]!r}")
        return text == "True"
    if kind == "int":
        if len(text.strip().lstrip("+-")) > MAX_INT_DIGITS:
            raise ValueError(f"{name}: integer of more than {MAX_INT_DIGITS} digits")
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{name}: expected an integer, got {text[:20]!r}") from None
    if kind == "float":
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{name}: expected a number, got {text[:20]!r}") from None
        if not math.isfinite(value):
            raise ValueError(f"{name}: expected a finite number, got {text[:20]!r}")
        return value
    return text
