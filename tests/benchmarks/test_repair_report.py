"""The repair benchmark's report: ratios by instance size, and an earlier run's table read back."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from alas_argo.benchmarks.repair import COLUMNS, LEGACY_COLUMNS, RepairRow
from alas_argo.benchmarks.repair_report import (
    case_key,
    from_csv,
    lcrp_ratios,
    merge_tables,
    size_ratios,
    to_csv,
    write_outputs,
)
from alas_argo.cli import main
from alas_argo.errors import InputError


def _row(instance: str, size: str, seed: int, method: str, makespan: int, moved: int, seconds: float,
         valid: bool = True) -> RepairRow:
    return RepairRow(instance=instance, size=size, scenario="breakdown", seed=seed, method=method,
                     baseline_makespan=100, makespan=makespan, moved_operations=moved, total_start_shift=7,
                     edit_radius=moved, neighbourhood_growths=0, wip_moved=1, fallback=False, seconds=seconds,
                     valid=valid)


ROWS = [
    _row("a", "20x15", 0, "full", 100, 40, 1.5), _row("a", "20x15", 0, "lcrp", 101, 30, 0.2),
    _row("a", "20x15", 1, "full", 200, 60, 2.5), _row("a", "20x15", 1, "lcrp", 200, 30, 0.1),
    _row("a", "20x15", 1, "lcrp@2", 200, 20, 0.4),
    _row("b", "50x20", 0, "full", 300, 100, 9.0), _row("b", "50x20", 0, "lcrp", 306, 90, 0.9),
    # An invalid LCRP row does not count: the pair is left out.
    _row("b", "50x20", 1, "full", 300, 100, 9.0), _row("b", "50x20", 1, "lcrp", 1, 0, 0.5, valid=False),
]


def test_size_ratios_pair_each_variant_with_full_per_size() -> None:
    got = {(x.lcrp, x.size): x for x in size_ratios(ROWS)}
    assert set(got) == {("lcrp", "20x15"), ("lcrp", "50x20"), ("lcrp@2", "20x15")}
    small = got[("lcrp", "20x15")]
    assert small.cases == 2
    assert small.makespan_ratio == pytest.approx((1.01 + 1.0) / 2)
    assert small.moved_ratio == pytest.approx(60 / 100)  # totals, not a mean of per-case ratios
    assert small.median_seconds == pytest.approx(0.15)
    big = got[("lcrp", "50x20")]
    assert (big.cases, big.makespan_ratio, big.moved_ratio) == (1, pytest.approx(1.02), pytest.approx(0.9))
    assert got[("lcrp@2", "20x15")].moved_ratio == pytest.approx(20 / 60)


def test_a_table_reads_back_to_the_same_rows() -> None:
    rows = [*ROWS, replace(ROWS[0], method="aor", error="no, really: a comma")]
    assert from_csv(to_csv(rows)) == rows


def test_a_malformed_table_names_the_line() -> None:
    text = to_csv(ROWS)
    lines = text.splitlines()
    lines[3] = lines[3].replace(",True,", ",maybe,")
    with pytest.raises(InputError, match=r"runs\.csv, line 4: valid: expected True or False, got 'maybe'"):
        from_csv("\n".join(lines), source="runs.csv")
    with pytest.raises(InputError, match="not a repair benchmark table"):
        from_csv("instance,makespan\na,1\n")
    header = text.splitlines()[0]
    with pytest.raises(InputError, match=r"line 2: seed: expected an integer, got 'x'$"):
        from_csv(header + "\n" + ",".join(["x"] * 18) + "\n")
    row = lines[1].split(",")
    for column, bad, says in (("seconds", "fast", "expected a number, got 'fast'"),
                              ("seconds", "inf", "expected a finite number, got 'inf'"),
                              ("wip_moved", "9" * 40, "integer of more than")):
        cells = row.copy()
        cells[COLUMNS.index(column)] = bad
        with pytest.raises(InputError, match=f"line 2: {column}: {says}"):
            from_csv(header + "\n" + ",".join(cells) + "\n")
    with pytest.raises(InputError, match="line 2: went_global: missing cell"):
        from_csv(header + "\n" + ",".join(row[:-1]) + "\n")


def test_cli_renders_an_earlier_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "old.csv"
    source.write_text(to_csv(ROWS), encoding="utf-8")
    out = tmp_path / "report"
    assert main(["bench", "repair", "--from-csv", str(source), "--out", str(out), "--json"]) == 1  # an invalid row
    doc = json.loads(capsys.readouterr().out)
    assert {(x["lcrp"], x["size"]) for x in doc["by_size"]} == {("lcrp", "20x15"), ("lcrp", "50x20"),
                                                                ("lcrp@2", "20x15")}
    assert (out / "repair.csv").read_text(encoding="utf-8") == source.read_text(encoding="utf-8")
    report = (out / "repair.md").read_text(encoding="utf-8")
    assert "re-rendered from old.csv" in report and "## LCRP against full by instance size" in report
    assert (out / "pareto-breakdown.png").stat().st_size > 0
    assert main(["bench", "repair", "--from-csv", str(tmp_path / "missing.csv"), "--out", str(out)]) == 2
    assert "--from-csv: no file" in capsys.readouterr().err
    # Saved again by a spreadsheet with a byte order mark: the header read "\ufeffinstance", not the table's.
    marked = tmp_path / "marked.csv"
    marked.write_text(to_csv(ROWS), encoding="utf-8-sig")
    assert main(["bench", "repair", "--from-csv", str(marked), "--out", str(tmp_path / "again")]) == 1
    assert (tmp_path / "again" / "repair.csv").read_text(encoding="utf-8") == source.read_text(encoding="utf-8")


def test_lcrp_ratios_report_the_worst_case_and_lcrp_time() -> None:
    x = next(r for r in lcrp_ratios(ROWS) if r.lcrp == "lcrp" and r.scenario == "all" and r.against == "full")
    assert x.cases == 3 and x.worst_makespan_ratio == pytest.approx(1.02)
    assert x.lcrp_median_seconds == pytest.approx(0.2)


def test_a_table_from_before_the_locality_columns_still_reads() -> None:
    rows = [replace(r, touched_machines=3, went_global=True) for r in ROWS]
    old = [line.rsplit(",", 2)[0] for line in to_csv(rows).splitlines()]
    assert old[0] == ",".join(LEGACY_COLUMNS)
    back = from_csv("\n".join(old) + "\n")
    assert back == [replace(r, touched_machines=0, went_global=False) for r in rows]
    assert from_csv(to_csv(rows)) == rows


def test_a_chart_of_an_earlier_run_is_not_left_beside_the_new_tables(tmp_path: Path) -> None:
    # A first run over breakdowns and shocks, then one over breakdowns only: pareto-shock.png stayed, a chart
    # of rows the new repair.csv does not hold.
    shocks = [replace(r, scenario="shock") for r in ROWS]
    write_outputs([*ROWS, *shocks], tmp_path, title="first")
    assert (tmp_path / "pareto-shock.png").is_file()
    (tmp_path / "notes.png").write_bytes(b"the user's own")
    paths = write_outputs(ROWS, tmp_path, title="second")
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["notes.png", "pareto-breakdown.png"]
    assert sorted(p.name for p in paths) == ["pareto-breakdown.png", "repair.csv", "repair.md"]


def test_merged_tables_keep_one_row_per_case_the_later_one(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    # Two files with the same LCRP case: the summary counted both rows and the ratios used the later one, so the
    # report gave two answers for one method.
    newer = [replace(r, makespan=r.makespan - 1) for r in ROWS if r.method == "lcrp" and r.valid]
    rows, notes = merge_tables([("old.csv", ROWS), ("new.csv", newer)])
    assert [case_key(r) for r in rows] == [case_key(r) for r in ROWS]  # every case once, in its first place
    assert [r.makespan for r in rows if r.method == "lcrp"] == [100, 199, 305, 1]  # three replaced, one kept
    assert notes == ["3 rows of new.csv replace the same cases of old.csv"]
    assert merge_tables([("a.csv", ROWS[:1]), ("b.csv", ROWS[1:])]) == (ROWS, [])
    for name, table in (("old.csv", ROWS), ("new.csv", newer)):
        (tmp_path / name).write_text(to_csv(table), encoding="utf-8")
    out = tmp_path / "merged"
    sources = f"{tmp_path / 'old.csv'},{tmp_path / 'new.csv'}"
    assert main(["bench", "repair", "--from-csv", sources, "--out", str(out), "--json"]) == 1  # the invalid row
    captured = capsys.readouterr()
    assert f"note: 3 rows of {tmp_path / 'new.csv'} replace the same cases of {tmp_path / 'old.csv'}" in captured.err
    summary = {s["method"]: s for s in json.loads(captured.out)["summary"]}
    assert summary["lcrp"]["cases"] == 4
    assert from_csv((out / "repair.csv").read_text(encoding="utf-8")) == rows


def test_a_table_that_holds_a_case_twice_is_refused() -> None:
    lines = to_csv(ROWS).splitlines()
    with pytest.raises(InputError, match=r"^runs\.csv, line 3: lcrp on a breakdown seed 0 appears twice$"):
        from_csv("\n".join([lines[0], lines[2], lines[2]]) + "\n", source="runs.csv")


def test_runs_on_different_baselines_do_not_merge() -> None:
    # Their rows would be paired case by case as if both had repaired the same plan.
    other = [replace(ROWS[1], baseline_makespan=120)]
    with pytest.raises(InputError, match=r"^a breakdown seed 0 was repaired from a plan of makespan 100 in old\.csv "
                                         r"and of 120 in new\.csv: merge runs on the same baselines"):
        merge_tables([("old.csv", ROWS), ("new.csv", other)])
