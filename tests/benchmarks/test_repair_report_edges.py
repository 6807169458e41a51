"""The repair report's numbers, tables, charts and refusals, each checked against values worked out by hand.

The figures LCRP is judged by (bench/README.md) come from here: a mean of per-case makespan ratios, totals for
the moves and the time, invalid rows out of every pair and every mean, one chart colour per method.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib import colors
from matplotlib import figure as mpl_figure
from matplotlib.collections import PathCollection

from alas_argo.benchmarks.repair import COLUMNS, RepairRow
from alas_argo.benchmarks.repair_report import (
    LcrpRatio,
    MethodSummary,
    from_csv,
    lcrp_ratios,
    summarize,
    to_csv,
    to_markdown,
    write_outputs,
)
from alas_argo.errors import InputError


def _row(method: str, *, instance: str = "a", scenario: str = "breakdown", seed: int = 0, baseline: int = 100,
         makespan: int = 100, moved: int = 0, seconds: float = 0.0, valid: bool = True, fallback: bool = False,
         went_global: bool = False, touched: int = 0, error: str = "") -> RepairRow:
    return RepairRow(instance=instance, size="20x15", scenario=scenario, seed=seed, method=method,
                     baseline_makespan=baseline, makespan=makespan, moved_operations=moved, total_start_shift=7,
                     edit_radius=3, neighbourhood_growths=0, wip_moved=1, fallback=fallback, seconds=seconds,
                     valid=valid, error=error, touched_machines=touched, went_global=went_global)


def _failed(method: str, **kw: Any) -> RepairRow:
    """A row as the benchmark writes a failed repair: makespan, moves and time all zero."""
    return _row(method, makespan=0, valid=False, **kw)


def test_summarize_means_over_valid_rows_and_counts_over_all() -> None:
    rows = [
        _row("full", seed=0, baseline=100, makespan=125, moved=10, seconds=1.0, touched=2),
        _row("full", seed=1, baseline=200, makespan=200, moved=30, seconds=3.0, touched=4, fallback=True),
        _failed("full", seed=2, fallback=True, went_global=True),
        _failed("lcrp", seed=0),  # a method that solved nothing: zeros, not a crash
        # aor only in the shock scenario: (breakdown, aor) has no row and is skipped, not the end of the table.
        _row("aor", scenario="shock", baseline=100, makespan=150, moved=5, seconds=0.5, touched=1, went_global=True),
    ]
    assert summarize(rows) == [
        MethodSummary(scenario="breakdown", method="full", cases=3, valid_rate=2 / 3, mean_makespan_ratio=1.125,
                      mean_moved=20.0, median_seconds=2.0, fallbacks=2, went_global=1, mean_touched_machines=3.0),
        MethodSummary(scenario="breakdown", method="lcrp", cases=1, valid_rate=0.0, mean_makespan_ratio=0.0,
                      mean_moved=0.0, median_seconds=0.0, fallbacks=0, went_global=0, mean_touched_machines=0.0),
        MethodSummary(scenario="shock", method="aor", cases=1, valid_rate=1.0, mean_makespan_ratio=1.5,
                      mean_moved=5.0, median_seconds=0.5, fallbacks=0, went_global=1, mean_touched_machines=1.0),
    ]


# Makespans chosen so that every ratio is a binary fraction: 258/256 = 1.0078125, 127/128 = 0.9921875.
RATIO_ROWS = [
    _row("full", seed=0, makespan=256, moved=40, seconds=0.25),
    _row("full-stable", seed=0, makespan=256, moved=20, seconds=0.5),
    _row("lcrp", seed=0, makespan=258, moved=10, seconds=0.125),
    _row("full", seed=1, makespan=100, moved=4, seconds=0.25),
    _row("full-stable", seed=1, makespan=100, moved=4, seconds=0.5),
    _row("lcrp", seed=1, makespan=100, moved=6, seconds=0.125),
    # An invalid LCRP row: the case is in no pair, whatever its (zero) makespan would do to a ratio.
    _row("full", instance="b", makespan=100, moved=50, seconds=5.0),
    _failed("lcrp", instance="b"),
    # A shock with no full-stable row: against full only. Full moved a single operation.
    _row("full", scenario="shock", makespan=128, moved=1, seconds=0.5),
    _row("lcrp", scenario="shock", makespan=127, moved=1, seconds=0.25),
]


def test_lcrp_ratios_pair_case_by_case_and_total_the_moves_and_the_time() -> None:
    def ratio(scenario: str, against: str, cases: int, makespan: float, moved: float, time: float, not_worse: int,
              worst: float, median: float) -> LcrpRatio:
        return LcrpRatio(scenario=scenario, against=against, cases=cases, makespan_ratio=makespan, moved_ratio=moved,
                         time_ratio=time, not_worse=not_worse, lcrp="lcrp", worst_makespan_ratio=worst,
                         lcrp_median_seconds=median)

    assert lcrp_ratios(RATIO_ROWS) == [
        # Moves 10 + 6 of 40 + 4: a mean of the per-case ratios (0.25 and 1.5) would say 0.875.
        ratio("breakdown", "full", 2, 1.00390625, 16 / 44, 0.25 / 0.5, 1, 1.0078125, 0.125),
        ratio("breakdown", "full-stable", 2, 1.00390625, 16 / 24, 0.25 / 1.0, 1, 1.0078125, 0.125),
        ratio("shock", "full", 1, 0.9921875, 1.0, 0.5, 1, 0.9921875, 0.25),
        ratio("all", "full", 3, 1.0, 17 / 45, 0.5 / 1.0, 2, 1.0078125, 0.125),
        ratio("all", "full-stable", 2, 1.00390625, 16 / 24, 0.25, 1, 1.0078125, 0.125),
    ]


def test_the_markdown_report_renders_every_table() -> None:
    rows = [_row("full", makespan=104, moved=8, seconds=0.5, touched=2),
            _row("lcrp", makespan=102, moved=2, seconds=0.25, touched=1),
            _failed("aor", fallback=True, error="boom")]
    assert to_markdown(rows, title="T", rerun="alas repair x") == "\n".join([
        "# T",
        "",
        "Rerun one row alone: `alas repair x`",
        "",
        "## Per scenario and method",
        "",
        "| scenario | method | cases | valid | makespan / baseline | moved (mean) | touched machines (mean) "
        "| median s | fallbacks | went global |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        "| breakdown | full | 1 | 100% | 1.0400 | 8.0 | 2.0 | 0.500 | 0 | 0 |",
        "| breakdown | lcrp | 1 | 100% | 1.0200 | 2.0 | 1.0 | 0.250 | 0 | 0 |",
        "| breakdown | aor | 1 | 0% | 0.0000 | 0.0 | 0.0 | 0.000 | 1 | 0 |",
        "",
        "## LCRP against each method",
        "",
        "| lcrp | scenario | against | cases | makespan ratio | worst case | moved ratio | time ratio "
        "| lcrp median s | lcrp not worse |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
        # 102 / 104 = 0.98077; the invalid aor row pairs with nothing.
        "| lcrp | breakdown | full | 1 | 0.9808 | 0.9808 | 0.250 | 0.500 | 0.250 | 1/1 |",
        "| lcrp | all | full | 1 | 0.9808 | 0.9808 | 0.250 | 0.500 | 0.250 | 1/1 |",
        "",
        "## LCRP against full by instance size",
        "",
        "| lcrp | size | cases | makespan ratio | moved ratio | lcrp median s |",
        "|---|---|---:|---:|---:|---:|",
        "| lcrp | 20x15 | 1 | 0.9808 | 0.250 | 0.250 |",
        "",
        "## All cases",
        "",
        "| instance | size | scenario | seed | method | baseline_makespan | makespan | moved_operations "
        "| total_start_shift | edit_radius | neighbourhood_growths | wip_moved | fallback | seconds | valid | error "
        "| touched_machines | went_global |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        "| a | 20x15 | breakdown | 0 | full | 100 | 104 | 8 | 7 | 3 | 0 | 1 | False | 0.5 | True |  | 2 | False |",
        "| a | 20x15 | breakdown | 0 | lcrp | 100 | 102 | 2 | 7 | 3 | 0 | 1 | False | 0.25 | True |  | 1 | False |",
        "| a | 20x15 | breakdown | 0 | aor | 100 | 0 | 0 | 7 | 3 | 0 | 1 | True | 0.0 | False | boom | 0 | False |",
    ]) + "\n"
    assert to_markdown(rows[:1], title="T").startswith("# T\n\n## Per scenario and method\n")  # no rerun line


def test_the_pareto_chart_plots_each_methods_valid_rows_in_its_own_colour(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: dict[str, mpl_figure.Figure] = {}
    save = mpl_figure.Figure.savefig

    def keep(fig: mpl_figure.Figure, path: Path, **kw: Any) -> None:
        drawn[Path(path).name] = fig
        save(fig, path, **kw)

    monkeypatch.setattr(mpl_figure.Figure, "savefig", keep)
    rows = [_row("full", baseline=100, makespan=110, moved=10),
            _row("full", seed=1, baseline=200, makespan=200, moved=30),
            _row("lcrp", baseline=100, makespan=105, moved=4),
            _failed("lcrp", seed=1),  # not a point at (0, 0)
            _row("aor", scenario="shock", makespan=150, moved=5),
            _row("lcrp", scenario="shock", makespan=120, moved=3)]
    write_outputs(rows, tmp_path / "nested" / "out", title="t")  # a directory whose parent does not exist yet
    png = (tmp_path / "nested" / "out" / "pareto-breakdown.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == (700, 500)
    diamond = mpl_figure.Figure().subplots().scatter([0], [0], marker="D").get_paths()[0].vertices

    def check(name: str, scenario: str, clouds: dict[str, tuple[int, list[tuple[float, float]]]]) -> None:
        fig = drawn[name]
        assert (tuple(fig.get_size_inches()), fig.dpi) == ((7.0, 5.0), 100)
        ax, = fig.axes
        assert (ax.get_xlabel(), ax.get_ylabel()) == ("moved operations", "makespan / baseline makespan")
        assert ax.get_title() == f"Repair trade-off, {scenario} (diamonds: means; lower left is better)"
        assert ax.title.get_fontsize() == 9
        legend = ax.get_legend()
        assert legend is not None
        assert [t.get_text() for t in legend.get_texts()] == list(clouds)
        assert all(t.get_fontsize() == 8 for t in legend.get_texts())
        drawn_sets = [c for c in ax.collections if isinstance(c, PathCollection)]
        assert len(drawn_sets) == len(ax.collections) == 2 * len(clouds)
        for i, (colour, points) in enumerate(clouds.values()):
            cloud, mean = drawn_sets[2 * i], drawn_sets[2 * i + 1]
            xs, ys = zip(*points, strict=True)
            assert np.asarray(cloud.get_offsets()).tolist() == [list(p) for p in points]
            assert (list(cloud.get_sizes()), cloud.get_alpha()) == ([14], 0.45)
            assert _rgba(cloud.get_facecolor()) == colors.to_rgba(f"C{colour}", 0.45)
            assert np.asarray(mean.get_offsets()).tolist() == [[sum(xs) / len(xs), sum(ys) / len(ys)]]
            assert list(mean.get_sizes()) == [90]
            assert np.array_equal(mean.get_paths()[0].vertices, diamond)
            assert _rgba(mean.get_facecolor()) == colors.to_rgba(f"C{colour}")
            assert _rgba(mean.get_edgecolor()) == colors.to_rgba("black")

    # Colours follow the methods' order over all rows (full C0, lcrp C1, aor C2), so a method keeps its colour
    # from one scenario's chart to the next.
    check("pareto-breakdown.png", "breakdown", {"full": (0, [(10.0, 1.1), (30.0, 1.0)]),
                                                "lcrp": (1, [(4.0, 1.05)])})
    check("pareto-shock.png", "shock", {"lcrp": (1, [(3.0, 1.2)]), "aor": (2, [(5.0, 1.5)])})


def _rgba(drawn: Any) -> tuple[float, ...]:
    """The one colour a scatter's points were drawn in."""
    rgba, = colors.to_rgba_array(drawn)
    return tuple(float(v) for v in rgba)


def test_the_written_tables_are_utf8(tmp_path: Path) -> None:
    rows = [_row("full", makespan=104), _failed("aor", error="machine M\u00b73 d\u00e9j\u00e0 down")]
    write_outputs(rows, tmp_path, title="R\u00e9paration \u00d7 2")
    assert (tmp_path / "repair.md").read_bytes().startswith("# R\u00e9paration \u00d7 2\n".encode())
    assert from_csv((tmp_path / "repair.csv").read_bytes().decode("utf-8")) == rows


HEADER = ",".join(COLUMNS)
GOOD = to_csv([_row("full", makespan=104, seconds=0.5)]).splitlines()[1].split(",")


def _one_row_table(**cells: str) -> str:
    line = GOOD.copy()
    for column, text in cells.items():
        line[COLUMNS.index(column)] = text
    return f"{HEADER}\n{','.join(line)}\n"


def _refusal(text: str) -> str:
    with pytest.raises(InputError) as caught:
        from_csv(text)
    return caught.value.message


def test_a_refused_header_is_named_with_the_expected_one() -> None:
    assert _refusal("instance,makespan\na,1\n") == (
        f"repair.csv: not a repair benchmark table (header ['instance', 'makespan'], expected {HEADER})")
    # A long header is cut at 200 characters of its list.
    assert _refusal("x" * 300 + "\n1\n") == (
        f"repair.csv: not a repair benchmark table (header ['{'x' * 198}, expected {HEADER})")


def test_a_refused_cell_quotes_twenty_characters_of_it() -> None:
    for column, says in (("valid", "expected True or False"), ("seconds", "expected a number")):
        assert _refusal(_one_row_table(**{column: "y" * 25})) == (
            f"repair.csv, line 2: {column}: {says}, got '{'y' * 20}'")
    # Signs do not count towards the digit limit: 15 characters left, not an integer.
    assert _refusal(_one_row_table(seed="+" * 10 + "y" * 15)) == (
        f"repair.csv, line 2: seed: expected an integer, got '{'+' * 10}{'y' * 10}'")
    assert _refusal(_one_row_table(seconds="-inf" + " " * 20)) == (  # float() takes the spaces
        f"repair.csv, line 2: seconds: expected a finite number, got '-inf{' ' * 16}'")


def test_integers_of_up_to_the_digit_limit_read() -> None:
    assert from_csv(_one_row_table(wip_moved="9" * 18))[0].wip_moved == 10**18 - 1
    assert _refusal(_one_row_table(wip_moved="+" + "9" * 19)) == (
        "repair.csv, line 2: wip_moved: integer of more than 18 digits")


def test_rows_the_benchmark_could_not_have_written_are_refused() -> None:
    positive = "repair.csv, line 2: makespans must be positive"
    negative = "repair.csv, line 2: counts and seconds must not be negative"
    assert _refusal(_one_row_table(baseline_makespan="0")) == positive  # the valid row's makespan is fine
    assert _refusal(_one_row_table(makespan="0")) == positive
    assert _refusal(_one_row_table(edit_radius="-1")) == negative  # seconds fine
    assert _refusal(_one_row_table(seconds="-0.5")) == negative
    # The smallest makespans and a repair timed at zero seconds are a benchmark's rows.
    row, = from_csv(_one_row_table(baseline_makespan="1", makespan="1", seconds="0"))
    assert (row.baseline_makespan, row.makespan, row.seconds) == (1, 1, 0.0)
    # A failed repair's makespan is 0: it divides nothing, being in no pair and no mean.
    assert from_csv(_one_row_table(makespan="0", valid="False"))[0].makespan == 0


def test_a_refusal_names_the_line_of_the_file_it_is_on() -> None:
    # The line was DictReader's count of the rows before: a cell past the csv module's limit on line 2 was
    # reported on line 1, and after a blank line (skipped) every later row was named one line too early.
    assert _refusal(_one_row_table(error="e" * 200_000)) == (
        "repair.csv, line 2: not CSV: field larger than field limit (131072)")
    seed = COLUMNS.index("seed")
    first, second, third = (",".join([*GOOD[:seed], str(k), *GOOD[seed + 1:]]) for k in (0, 1, 2))  # three cases
    assert _refusal(f"{HEADER}\n{first}\n\n{second}\n{third.replace('True', 'maybe')}\n") == (
        "repair.csv, line 5: valid: expected True or False, got 'maybe'")
    assert _refusal(f"{HEADER}\n{first}\n\n{second}\n{third}\n{'e' * 200_000}\n") == (
        "repair.csv, line 6: not CSV: field larger than field limit (131072)")


def test_a_row_with_more_cells_than_the_header_is_refused() -> None:
    # csv.DictReader keeps cells past the header aside, so such a row read as if they were not there: an
    # 18-cell row under the 16 columns of an older table lost its locality cells without a word.
    assert _refusal(_one_row_table().rstrip("\n") + ",surplus\n") == (
        "repair.csv, line 2: 19 cells, the header has 18")
    legacy = ",".join(COLUMNS[:16])
    assert _refusal(f"{legacy}\n{','.join(GOOD)}\n") == "repair.csv, line 2: 18 cells, the header has 16"
    assert from_csv(f"{legacy}\n{','.join(GOOD[:16])}\n") == [_row("full", makespan=104, seconds=0.5)]
