"""`alas solve` through the real entry point: outputs, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.cli.solving import gap_percent
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


def test_solve_writes_the_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "ft06.json"
    assert main(["solve", "ft06", "--time-limit", "2", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "makespan 55" in text and "gap +0.00%" in text and "optimal" in text and str(out) in text
    schedule = Schedule.model_validate(json.loads(out.read_text()))
    assert schedule.makespan == 55 and validate(get_instance("ft06"), schedule).valid


def test_solve_json_includes_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "la01", "--time-limit", "1", "--json", "--method", "dispatch", "--rule", "spt"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["instance"] == "la01" and doc["method"] == "dispatch" and doc["upper_bound"] == 666
    assert doc["gap_percent"] == gap_percent(doc["makespan"], 666)
    schedule = Schedule.model_validate(doc["schedule"])
    assert schedule.makespan == doc["makespan"] and validate(get_instance("la01"), schedule).valid


def test_solve_a_user_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "mine.txt"
    f.write_text("2 2\n0 3 1 2\n1 4 0 1\n")
    assert main(["solve", str(f), "--time-limit", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["makespan"] == 6 and doc["status"] == "optimal" and doc["gap_percent"] is None


@pytest.mark.parametrize(("argv", "fragment"), [
    (["solve", "nosuchinstance"], "unknown instance"),
])
def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_truncated_file_exit_2_and_nothing_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.txt"
    f.write_text("3 3\n0 1 2\n")
    out = tmp_path / "out.json"
    assert main(["solve", str(f), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "truncated" in err and str(f) in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_gap_percent() -> None:
    assert gap_percent(110, 100) == 10.0
    assert gap_percent(5, None) is None
