"""The human fallback's files and the edited plan read back (alas_argo/cli/handoff_files.py), edge by edge:
the resume command drops every old `--run-id`/`--manual-plan` in both spellings and keeps the rest, in order;
`handoff.json` holds the hand-off without its plan and with the best plan's source, violations and the command;
the message says "none" without a plan and no violation count when there is none; each refusal of
`--manual-plan` is one InputError naming the file and what is wrong.

Mutation testing (bench/README.md, fifteenth session) found these read by no test: the existing tests run one
hand-off with a plan and violations, and only a valid edited plan back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli.handoff_files import read_manual_plan, resume_command, write_handoff
from alas_argo.errors import InputError
from alas_argo.log import ExecutionLog, FsStore

PLAN = {"instance": "x", "makespan": 0, "operations": []}


def _doc(plan: dict[str, Any] | None, violations: int | None) -> dict[str, Any]:
    return {"node": "check_plan", "reason": "check_plan gave up", "rounds": 3,
            "best": {"source": "propose_plan", "violations": violations, "plan": plan}}


def _log(tmp_path: Path) -> ExecutionLog:
    return ExecutionLog(FsStore(tmp_path / "store"), "h")


def test_the_resume_command_drops_old_run_ids_and_plans_in_both_spellings_and_keeps_the_rest() -> None:
    argv = ["run", "ft06", "--run-id", "old", "--seed", "3", "--manual-plan", "a.json", "--quiet",
            "--run-id=older", "--json", "--manual-plan=b.json", "--variant", "no_repair"]
    assert resume_command("r1", Path("p.json"), argv) == \
        "alas run ft06 --seed 3 --quiet --json --variant no_repair --run-id r1 --manual-plan p.json"


def test_the_resume_command_quotes_what_the_shell_would_split() -> None:
    assert resume_command("r 1", Path("my plans/p.json"), ["run", "ft06"]) == \
        "alas run ft06 --run-id 'r 1' --manual-plan 'my plans/p.json'"


def test_the_resume_command_reads_this_process_arguments_after_the_program(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/bin/alas", "run", "ft06", "--run-id", "old"])
    assert resume_command("r", Path("p.json")) == "alas run ft06 --run-id r --manual-plan p.json"


def test_handoff_json_holds_the_hand_off_without_its_plan_and_with_the_best_plans_figures(tmp_path: Path) -> None:
    message = write_handoff(_doc(PLAN, 2), tmp_path / "out", "r1", argv=["run", "ft06"])
    plan_path = tmp_path / "out" / "best_plan.json"
    command = f"alas run ft06 --run-id r1 --manual-plan {plan_path}"
    assert json.loads((tmp_path / "out" / "handoff.json").read_text()) == {
        "node": "check_plan", "reason": "check_plan gave up", "rounds": 3,
        "best_plan": "propose_plan", "best_plan_violations": 2, "resume": command}
    assert json.loads(plan_path.read_text()) == PLAN
    assert message == ("human fallback: check_plan gave up\n"
                       f"  best plan so far: propose_plan -> {plan_path} (2 violation(s))\n"
                       f"  edit it, then resume: {command}")


def test_without_a_plan_nothing_but_handoff_json_is_written_and_the_message_says_none(tmp_path: Path) -> None:
    message = write_handoff(_doc(None, None), tmp_path, "r1", argv=["run", "ft06"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["handoff.json"]
    handed = json.loads((tmp_path / "handoff.json").read_text())
    assert handed["best_plan"] == "propose_plan" and handed["best_plan_violations"] is None
    assert message.splitlines()[1] == "  best plan so far: none"


def test_a_plan_without_a_violation_count_shows_no_count(tmp_path: Path) -> None:
    message = write_handoff(_doc(PLAN, None), tmp_path, "r1", argv=["run", "ft06"])
    assert message.splitlines()[1] == f"  best plan so far: propose_plan -> {tmp_path / 'best_plan.json'}"


def test_a_directory_that_cannot_be_made_is_one_input_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    directory = tmp_path / "file" / "handoff"
    with pytest.raises(InputError) as info:
        write_handoff(_doc(PLAN, 1), directory, "r1", argv=["run"])
    assert info.value.message == "cannot write the human fallback's files: Not a directory"
    assert info.value.where == str(directory)


def test_a_manual_plan_without_a_run_to_resume_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PLAN))
    with pytest.raises(InputError) as info:
        read_manual_plan(path, _log(tmp_path), resumed=False)
    assert str(info.value) == "--manual-plan resumes a run that handed over to a person: give its --run-id"


def test_a_valid_manual_plan_comes_back_as_a_schedule_document(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(PLAN))
    assert read_manual_plan(path, _log(tmp_path), resumed=True) == PLAN


def test_a_missing_manual_plan_is_named_with_the_systems_reason(tmp_path: Path) -> None:
    path = tmp_path / "missing.json"
    with pytest.raises(InputError) as info:
        read_manual_plan(path, _log(tmp_path), resumed=True)
    assert info.value.message == "cannot read the plan: No such file or directory"
    assert info.value.where == str(path)


def test_a_manual_plan_that_is_not_json_names_the_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text("{")
    with pytest.raises(InputError) as info:
        read_manual_plan(path, _log(tmp_path), resumed=True)
    assert info.value.where == f"{path} line 1 column 2"
    assert info.value.message.startswith("invalid JSON: ")


def test_a_manual_plan_that_is_not_a_schedule_names_the_file_and_the_first_field(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"instance": "x", "makespan": 0}))
    with pytest.raises(InputError) as info:
        read_manual_plan(path, _log(tmp_path), resumed=True)
    assert info.value.message == "not a schedule: operations: Field required"
    assert info.value.where == str(path)
