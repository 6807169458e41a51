"""`alas bench static` and its library: rows, independent validity, tables, summary."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from alas_argo.benchmarks.static import COLUMNS, StaticRow, run_static, summarize, to_markdown, write_tables
from alas_argo.cli import main
from alas_argo.cli.benching import default_directory


def test_run_static_on_a_tiny_suite() -> None:
    seen: list[StaticRow] = []
    # Deterministic limits: the optima below do not depend on how busy the machine is.
    rows = run_static(["ft06", "la01"], time_limit=1, on_row=seen.append, deterministic=True)
    assert rows == seen
    assert [r.instance for r in rows] == ["ft06", "la01"]
    assert all(r.valid for r in rows)
    assert [r.makespan for r in rows] == [55, 666] and [r.gap_percent for r in rows] == [0.0, 0.0]
    s = summarize(rows)
    assert (s.instances, s.mean_gap_percent, s.valid_rate) == (2, 0.0, 1.0)


def test_tables_and_summary(tmp_path: Path) -> None:
    rows = [StaticRow("a", "2x2", 110, 100, 10.0, True, 1.0, "feasible", 90),
            StaticRow("b", "2x2", 100, None, None, False, 2.0, "feasible", 90)]
    s = summarize(rows)
    assert s.mean_gap_percent == 10.0 and s.valid_rate == 0.5
    csv_path, md_path = write_tables(rows, tmp_path / "t", title="T")
    read = list(csv.DictReader(csv_path.read_text().splitlines()))
    assert list(read[0]) == list(COLUMNS) and read[0]["gap_percent"] == "10.0" and read[1]["valid"] == "False"
    md = md_path.read_text()
    assert "| b | 2x2 | 100 |  |  | NO |" in md and "Mean gap to the upper bound: 10.00%" in md
    assert to_markdown([], title="empty").count("n/a") == 1


def test_cli_bench_static(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "res"
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "1", "--out", str(out),
                 "--deterministic", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["summary"]["valid_rate"] == 1.0 and doc["summary"]["mean_gap_percent"] == 0.0
    assert (out / "static.csv").exists() and (out / "static.md").exists()
    assert main(["bench", "static", "--suite", "ft06", "--time-limit", "1", "--out", str(out), "--deterministic"]) == 0
    assert "mean gap 0.00%, valid 100.0%" in capsys.readouterr().out


def test_cli_bad_suite_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "static", "--suite", "ft06,nosuch", "--time-limit", "1"]) == 2
    assert "unknown instance" in capsys.readouterr().err


def test_default_directory() -> None:
    d = default_directory("ft06,la01", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert d == Path("bench/results/static-ft06_la01-20260102T030405Z")


def test_the_tables_say_the_method_and_seed_and_carry_the_command_that_reproduces_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t"
    assert main(["bench", "static", "--suite", "ft06", "--time-limit", "0.5", "--out", str(out), "--deterministic",
                 "--method", "dispatch", "--seed", "3", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    command = ("alas bench static --suite ft06 --time-limit 0.5 --workers 2 --seed 3 --method dispatch "
               "--deterministic")
    assert doc["command"] == command
    md = (out / "static.md").read_text().splitlines()
    assert md[0] == ("# Static benchmark: ft06, method dispatch, seed 3, 0.5 s per instance, deterministic limits, "
                     "1 worker")
    assert md[2] == f"Command: `{command}`"
    # The command is the run: the same figures again.
    assert main([*command.split()[1:], "--out", str(tmp_path / "again"), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [(r["instance"], r["makespan"]) for r in again["rows"]] == [
        (r["instance"], r["makespan"]) for r in doc["rows"]]
