"""`alas solve` in process, edge by edge: the summary's fields and the gap's rounding and sign, what the flags hand
the planner (seed, workers, rule, method, deterministic unless --wall-clock, a live reporter only on a terminal
without --json), the text line for an instance without a best known makespan, --json with and without --out, and
the live line's text. `tests/cli/test_solve_cli.py` runs whole solves and looks at fragments; these pin the rest."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import main, solving
from alas_argo.cli.solving import gap_percent, progress_display, summary
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveResult
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import plan
from alas_argo.jssp.schedule import Schedule

TWO_BY_TWO = "2 2\n0 3 1 2\n1 4 0 1\n"  # optimum 6; no best known makespan


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_gap_is_rounded_to_two_places_signed_and_none_without_a_best_known() -> None:
    assert gap_percent(1001, 1000) == 0.1
    assert gap_percent(1234, 1000) == 23.4
    assert gap_percent(2, 3) == -33.33  # below the best known (a better plan or a wrong bound): negative
    assert gap_percent(3, 3) == 0.0
    assert gap_percent(100, 0) is None and gap_percent(100, None) is None


def test_the_summary_has_every_field_of_the_result() -> None:
    instance = get_instance("ft06")
    result = plan(instance, time_limit=1, method="dispatch", rule="spt")
    doc = summary(instance, result, "dispatch")
    assert doc == {
        "instance": "ft06", "size": "6x6", "method": "dispatch", "status": result.status.value,
        "makespan": result.objective, "bound": result.bound, "upper_bound": 55,
        "gap_percent": round(100.0 * (result.objective - 55) / 55, 2),
        "seconds": round(result.seconds, 3), "limits": dict(result.limits),
    }
    assert doc["makespan"] > 55 and doc["gap_percent"] > 0
    # Seconds to the millisecond.
    assert summary(instance, dataclasses.replace(result, seconds=1.23456), "dispatch")["seconds"] == 1.235


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the planner by one that records its keyword arguments and plans by dispatching."""
    seen: list[dict[str, Any]] = []

    def fake(instance: Any, **kw: Any) -> SolveResult:
        seen.append(kw)
        if kw["progress"] is not None:
            kw["progress"](ProgressEvent(phase="cpsat", makespan=70, bound=40, seconds=0.0))
        return plan(instance, time_limit=1, method="dispatch", rule="spt")

    monkeypatch.setattr(solving, "plan", fake)
    return seen


def test_the_flags_reach_the_planner(calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "ft06", "--time-limit", "3.5", "--workers", "3", "--seed", "7", "--rule", "spt",
                 "--method", "cpsat", "--json"]) == 0
    assert calls == [{"time_limit": 3.5, "workers": 3, "seed": 7, "method": "cpsat", "rule": "spt",
                      "progress": None, "deterministic": True}]
    capsys.readouterr()
    assert main(["solve", "ft06", "--wall-clock", "--json"]) == 0
    assert calls[1] == {"time_limit": 10.0, "workers": 2, "seed": 0, "method": "auto", "rule": None,
                        "progress": None, "deterministic": False}


def test_a_terminal_gets_the_live_line_unless_json(calls: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["solve", "ft06"]) == 0
    assert calls[0]["progress"] is not None
    assert "ft06 (cpsat) incumbent 70, bound 40" in terminal.getvalue()
    assert main(["solve", "ft06", "--json"]) == 0
    assert calls[1]["progress"] is None
    capsys.readouterr()


def test_the_live_line_names_the_phase_incumbent_and_bound_and_is_erased(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_display(True, "ta01") as report:
        assert report is not None
        report(ProgressEvent(phase="lns", makespan=1240, bound=1231, seconds=1.0))
    text = terminal.getvalue()
    assert "ta01: starting" in text and "ta01 (lns) incumbent 1240, bound 1231" in text
    assert text.endswith("\x1b[2K")  # transient: the line is cleared when the solve ends


def test_disabled_progress_is_none_and_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_display(False, "ta01") as report:
        assert report is None
    assert capsys.readouterr() == ("", "")


def test_the_text_line_of_an_instance_without_a_best_known(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "mine.txt"
    f.write_text(TWO_BY_TWO)
    assert main(["solve", str(f), "--time-limit", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    head, seconds = out[0].rsplit(", ", 1)
    assert head == "mine (2x2): makespan 6, bound 6, upper bound ?, gap ?, optimal"
    assert seconds.endswith(" s") and float(seconds[:-2]) >= 0.0


def test_the_text_line_of_a_plan_above_the_best_known(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["solve", "ft06", "--method", "dispatch", "--rule", "spt", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    makespan = Schedule.model_validate(json.loads(out.read_text())).makespan
    gap = gap_percent(makespan, 55)
    assert lines[0].startswith(f"ft06 (6x6): makespan {makespan}, bound ")
    assert f"upper bound 55, gap +{gap:.2f}%, " in lines[0]
    assert lines[1] == f"schedule written to {out}"


def test_json_with_out_names_the_file_and_leaves_the_schedule_in_it(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.json"
    assert main(["solve", "ft06", "--method", "dispatch", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["out"] == str(out) and "schedule" not in doc
    written = json.loads(out.read_text())
    assert Schedule.model_validate(written).makespan == doc["makespan"]


def test_json_without_out_carries_the_schedule_and_no_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "ft06", "--method", "dispatch", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "out" not in doc and Schedule.model_validate(doc["schedule"]).makespan == doc["makespan"]


def test_a_tiny_positive_time_limit_is_taken(calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "ft06", "--time-limit", "0.001", "--json"]) == 0
    assert calls[0]["time_limit"] == 0.001
    capsys.readouterr()


def test_help_describes_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Plan INSTANCE (a bundled name such as ta01" in text and "exit 130, nothing written" in text
    for flag in ("--time-limit S", "--workers N", "--wall-clock", "--seed K", "--rule", "--method",
                 "-o FILE, --out FILE", "--json"):
        assert flag in text, flag


@pytest.mark.parametrize(("flag", "value", "choice"), [("--rule", "fastest", "spt"), ("--method", "magic", "lns")])
def test_a_rule_or_method_outside_the_choices_is_refused_by_the_parser(
        flag: str, value: str, choice: str, calls: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["solve", "ft06", flag, value])
    assert done.value.code == 2 and calls == []
    err = capsys.readouterr().err
    assert f"argument {flag}: invalid choice: '{value}'" in err and f"'{choice}'" in err


def test_the_usage_names_the_instance_argument(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    usage = " ".join(capsys.readouterr().out.split("\n\n", 1)[0].split())
    assert usage.startswith("usage: alas solve [-h]") and usage.endswith(" INSTANCE")


def test_alas_help_lists_solve_with_its_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    # Read from a parser built in the test: tests/cli/test_help.py reads a parser built when it is imported.
    with pytest.raises(SystemExit):
        main(["--help"])
    assert re.search(r"^\s+solve\s+Plan a static instance \(dispatching warm start, CP-SAT, LNS\)\.$",
                     capsys.readouterr().out, re.MULTILINE)
