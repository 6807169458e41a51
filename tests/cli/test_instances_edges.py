"""`alas instance list|show` (alas_argo/cli/instances.py), edge by edge: the JSON rows' fields, the table's
title, columns and cells (size as JOBSxMACHINES, "?" for an unknown bound, "yes" only for a closed instance),
the default suite (all), and every line `show` prints, the source line only when there is one.

Mutation testing (bench/README.md, fifteenth session) found these read by no test: the existing tests read two
fields of `list --json`, three of `show --json` and the first line of `show`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import alas_argo.cli.instances as instances
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance, load_instance, suite


def _table_rows(out: str) -> list[list[str]]:
    """The cells of a rich table's header and body lines, in order."""
    return [[c.strip() for c in line.split(line[0])[1:-1]] for line in out.splitlines() if line[:1] in "┃│" and line]


def test_list_json_gives_every_field_of_each_row(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instance", "list", "--suite", "ft06,swv07", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"name": "ft06", "jobs": 6, "machines": 6, "lower_bound": 55, "upper_bound": 55},
        {"name": "swv07", "jobs": 20, "machines": 15, "lower_bound": 1541, "upper_bound": 1594}]


def test_the_default_suite_is_every_bundled_instance(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instance", "list", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == suite("all")


def test_the_table_has_its_title_columns_and_one_row_per_instance(capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["instance", "list", "--suite", "ft06,swv07"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].strip() == "2 instances (ft06,swv07)"
    assert _table_rows(out) == [["name", "size", "lower bound", "upper bound", "optimal"],
                                ["ft06", "6x6", "55", "55", "yes"],
                                ["swv07", "20x15", "1541", "1594", "-"]]


def test_an_instance_without_bounds_shows_question_marks_and_is_not_optimal(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # No bundled instance lacks its bounds today; one read from a file does (both None, so equal: still "-").
    f = tmp_path / "mine.txt"
    f.write_text("2 3\n0 3 1 2 2 1\n1 4 0 1 2 2\n")
    unbounded = load_instance(str(f))
    assert unbounded.lower_bound is None and unbounded.upper_bound is None
    monkeypatch.setattr(instances, "get_instance", lambda name: unbounded if name == "ft06" else get_instance(name))
    monkeypatch.setenv("COLUMNS", "120")
    assert main(["instance", "list", "--suite", "ft06"]) == 0
    assert _table_rows(capsys.readouterr().out)[1:] == [["mine", "2x3", "?", "?", "-"]]


def test_show_prints_the_size_the_bounds_their_source_and_every_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instance", "show", "ft06"]) == 0
    lines = capsys.readouterr().out.splitlines()
    inst = get_instance("ft06")
    assert lines[:3] == ["ft06: 6 jobs x 6 machines, 36 operations", "bounds: lower 55, upper 55",
                         f"source: {inst.bounds_source}"]
    assert lines[3] == "  job   0: m2:1 m0:3 m1:6 m3:7 m5:3 m4:6"
    assert len(lines) == 3 + 6


def test_show_of_a_file_without_bounds_has_no_source_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "mine.txt"
    f.write_text("2 2\n0 3 1 2\n1 4 0 1\n")
    assert main(["instance", "show", str(f)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "mine: 2 jobs x 2 machines, 4 operations", "bounds: lower None, upper None",
        "  job   0: m0:3 m1:2", "  job   1: m1:4 m0:1"]
