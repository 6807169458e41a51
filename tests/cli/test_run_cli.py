"""`alas run` through the real entry point: outputs, JSON summary, resume, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType, ExecutionLog, FsStore


def test_run_writes_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["run", "ft06", "--disrupt", "breakdown", "--time-limit", "1", "--repair-budget", "1",
                 "--root", str(tmp_path / "store"), "--out", str(out), "--json", "--run-id", "cli-1"])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["run_id"] == "cli-1" and summary["final_valid"] is True and summary["versions_committed"] == 2
    assert {p.name for p in out.iterdir()} >= {"v1.json", "v2.json", "final.json", "disruption_1.json",
                                               "report.json", "report.md", "gantt.png"}
    final = Schedule.model_validate_json((out / "final.json").read_text())
    before = Schedule.model_validate_json((out / "v1.json").read_text())
    disruption = Disruption.model_validate_json((out / "disruption_1.json").read_text())
    assert validate(get_instance("ft06"), final, disruption=disruption, baseline=before).valid
    assert (out / "gantt.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the same run id resumes: nothing is committed twice
    assert main(["run", "ft06", "--disrupt", "breakdown", "--time-limit", "1", "--repair-budget", "1",
                 "--root", str(tmp_path / "store"), "--json", "--run-id", "cli-1"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed"] is True and again["versions_committed"] == 2


def test_run_failure_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "ft06", "--planner", "heuristic", "--faults", "2", "--variant", "no_repair",
                 "--root", str(tmp_path), "--json"])
    assert code == 1
    assert json.loads(capsys.readouterr().out)["final_valid"] is False


@pytest.mark.parametrize(("argv", "fragment"), [
    (["run", "nope99"], "unknown instance"),
    (["run", "ft06", "--disrupt", "earthquake"], "breakdown, shock, mixed"),
    (["run", "ft06", "--disrupt", "missing.json"], "disruption file not found"),
])
def test_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    assert main([*argv, "--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err
    # Refused before the run starts: no progress line for a run that never was, nothing in the store.
    assert "started" not in err and not any(tmp_path.rglob("*"))


def test_out_of_range_flags_name_the_flag_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    assert main(["run", "ft06", "--repair-effort", "0", "--root", str(root), "--run-id", "bad"]) == 2
    assert "--repair-effort" in capsys.readouterr().err
    assert main(["run", "ft06", "--repair-tolerance", "0.5", "--root", str(root), "--run-id", "bad"]) == 2
    assert "--repair-tolerance: Input should be less than or equal to 0.1" in capsys.readouterr().err
    assert not root.exists() or not any(root.rglob("*"))  # nothing written


@pytest.mark.parametrize("edit", list(FirstEdit))
def test_the_first_edit_flag_reaches_the_repair(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                edit: FirstEdit) -> None:
    root = tmp_path / "store"
    assert main(["run", "ft06", "--disrupt", "breakdown", "--time-limit", "1", "--repair-budget", "1",
                 "--repair-first-edit", edit.value, "--root", str(root), "--json", "--run-id", "fe"]) == 0
    [repair] = json.loads(capsys.readouterr().out)["repairs"]
    # What ran: tabu only where the compiled search is there (else the repair runs the re-dispatch).
    ran = edit if edit is FirstEdit.REDISPATCH or tabu_kernel() is not None else FirstEdit.REDISPATCH
    assert repair["limits"].get("first_edit", FirstEdit.REDISPATCH.value) == ran.value
    [finished] = [e.payload for e in ExecutionLog(FsStore(root), "fe").events()
                  if e.type is EventType.REPAIR_FINISHED]
    assert finished["first_edit"] == edit.value  # what was asked
    # Part of the run's inputs: the other first edit does not resume this run.
    [other] = [e for e in FirstEdit if e is not edit]
    assert main(["run", "ft06", "--disrupt", "breakdown", "--time-limit", "1", "--repair-budget", "1",
                 "--repair-first-edit", other.value, "--root", str(root), "--json", "--run-id", "fe"]) == 2
    assert f"repair_first_edit {edit.value} (now {other.value})" in capsys.readouterr().err


def test_without_the_flag_a_run_repairs_with_the_librarys_first_edit(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    assert main(["run", "ft06", "--disrupt", "breakdown", "--time-limit", "1", "--repair-budget", "1",
                 "--root", str(root), "--quiet", "--run-id", "default"]) == 0
    [finished] = [e.payload for e in ExecutionLog(FsStore(root), "default").events()
                  if e.type is EventType.REPAIR_FINISHED]
    assert finished["first_edit"] == DEFAULT_FIRST_EDIT.value


def test_an_unknown_first_edit_names_the_flag_and_the_known_ones(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "root"
    with pytest.raises(SystemExit) as stopped:  # argparse's refusal, as for alas repair --first-edit
        main(["run", "ft06", "--repair-first-edit", "Tabu", "--root", str(root), "--run-id", "bad"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--repair-first-edit" in err and "'redispatch', 'tabu'" in err and "Traceback" not in err
    assert not root.exists()
