"""Disruption input is checked up front, named by file and place, with one rule set for the CLI and the controller."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.planning import plan

BREAKDOWN = {"kind": "machine_breakdown", "machine": 1, "start": 10, "duration": 5}
EMPTY = {"time": 5, "events": []}
OVER = {"time": 30, "events": [{"kind": "machine_breakdown", "machine": 1, "start": 2, "duration": 5}]}


def _write(path: Path, doc: object) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture
def schedule_file(tmp_path: Path) -> str:
    return _write(tmp_path / "s.json", plan(get_instance("ft06"), time_limit=1, method="dispatch").schedule.to_json())


def _run(tmp_path: Path, *extra: str) -> int:
    return main(["run", "ft06", "--planner", "heuristic", "--time-limit", "1", "--root", str(tmp_path / "store"),
                 *extra])


@pytest.mark.parametrize(("doc", "place", "message"), [
    ({"time": 10, "events": [{**BREAKDOWN, "machine": 99}]}, "at events[0]", "machine 99 does not exist"),
    ([{"time": 10, "events": [BREAKDOWN]}, {"time": 12, "events": [{"kind": "duration_change", "job": 0,
                                                                      "step": 42, "duration": 3}]}],
     "at [1].events[0]", "(job 0, step 42) does not exist"),
    (EMPTY, "at events", "needs at least one event"),
    (OVER, "at events[0]", "is over by the reveal time 30"),
])
def test_run_checks_the_disruption_file_before_planning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch, doc: object, place: str,
                                                         message: str) -> None:
    monkeypatch.setattr("alas_argo.pipeline.running.run_pipeline", _no_run)
    monkeypatch.setattr("alas_argo.cli.running.run_pipeline", _no_run)
    path = _write(tmp_path / "d.json", doc)
    assert _run(tmp_path, "--disrupt", path) == 2
    err = capsys.readouterr().err
    assert f"{path} {place}: " in err and message in err and err.count("\n") == 1
    assert not (tmp_path / "store").exists()  # nothing planned, nothing logged


def _no_run(*args: object, **kwargs: object) -> None:
    raise AssertionError("the pipeline started before the disruption file was checked")


def test_disruptions_needs_a_generated_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, "--disruptions", "3") == 2
    assert "--disruptions counts generated disruptions" in capsys.readouterr().err
    path = _write(tmp_path / "d.json", {"time": 10, "events": [BREAKDOWN]})
    assert _run(tmp_path, "--disrupt", path, "--disruptions", "2") == 2
    assert f"the file {path} holds its own" in capsys.readouterr().err


def test_repair_names_the_file_and_a_breakdown_before_the_reveal_is_a_disruption_error(
        tmp_path: Path, schedule_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "over.json", OVER)
    argv = ["repair", "--instance", "ft06", "--schedule", schedule_file, "--disruption", path,
            "--out", str(tmp_path / "r.json")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path} at events[0]: machine 1's downtime [2, 7) is over by the reveal time 30" in err
    assert "Infeasible" not in err and not (tmp_path / "r.json").exists()
    late = _write(tmp_path / "late.json", {"time": 10_000, "events": [{"kind": "duration_change", "job": 0,
                                                                       "step": 0, "duration": 3}]})
    assert main([*argv[:-3], late, "--out", str(tmp_path / "r.json")]) == 2
    assert f"{late} at time: reveal time 10000 is outside the schedule" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "repair", "validate"])
def test_an_empty_event_list_is_refused_by_every_command(tmp_path: Path, schedule_file: str, command: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path / "empty.json", EMPTY)
    argv = {"run": ["run", "ft06", "--planner", "heuristic", "--root", str(tmp_path / "st"), "--disrupt", path],
            "repair": ["repair", "--instance", "ft06", "--schedule", schedule_file, "--disruption", path,
                       "--out", str(tmp_path / "r.json")],
            "validate": ["validate", "--instance", "ft06", "--schedule", schedule_file, "--disruption", path]}
    assert main(argv[command]) == 2
    assert f"{path} at events: a disruption needs at least one event" in capsys.readouterr().err


@pytest.mark.parametrize("count", ["0", "-1", "21"])
def test_disruptions_outside_1_to_20_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, count: str) -> None:
    """A 0 used to read as the default (one disruption revealed and repaired)."""
    monkeypatch.setattr("alas_argo.cli.running.run_pipeline", _no_run)
    with pytest.raises(SystemExit) as done:
        _run(tmp_path, "--disrupt", "breakdown", "--disruptions", count)
    assert done.value.code == 2
    assert f"error: argument --disruptions: must be from 1 to 20, got {count}\n" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()
