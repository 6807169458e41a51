"""The human fallback: a run whose loop guard trips stops with a reason, its best plan and a resume
command; resumed with a person's edited plan, it continues from the node that gave up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.agents.feedback import patch_plan
from alas_argo.agents.simulated import ErrorModel
from alas_argo.cli import main
from alas_argo.cli.handoff_files import resume_command, write_handoff
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline import RunConfig, Variant, run_pipeline

STUBBORN = {"error_model": ErrorModel(correction_rate=0.0)}
CONFIG = RunConfig(instance="ft10", planner="simulated", optimizer="none", variant=Variant.NO_REPAIR,
                   feedback_rounds=1, time_limit=1, repair_budget=1)


def test_a_tripped_guard_hands_over_and_a_manual_plan_resumes(tmp_path: Path) -> None:
    log = ExecutionLog(FsStore(tmp_path / "store"), "h1")
    failed = run_pipeline(CONFIG, log, agent_spec=dict(STUBBORN))
    assert not failed.succeeded and failed.handoff is not None
    assert failed.handoff["node"] == "check_plan" and "loop guard tripped" in failed.handoff["reason"]
    best = failed.handoff["best"]
    assert best["violations"] > 0 and best["plan"]["operations"]
    assert failed.summary()["human_fallback"]["best_plan_violations"] == best["violations"]
    instance = get_instance("ft10")
    edited = patch_plan(instance, Schedule.model_validate(best["plan"]))  # what a person might do by hand
    resumed = run_pipeline(CONFIG, log, agent_spec=dict(STUBBORN, manual_plan=edited.to_json()))
    assert resumed.succeeded and resumed.final == edited and resumed.handoff is None
    manual = [e for e in log.events() if e.type is EventType.PLAN_PROPOSED and e.payload.get("manual")]
    assert [e.node_id for e in manual] == ["check_plan"]
    assert log.verify().ok


def test_an_invalid_manual_plan_hands_over_again(tmp_path: Path) -> None:
    log = ExecutionLog(FsStore(tmp_path / "store"), "h2")
    first = run_pipeline(CONFIG, log, agent_spec=dict(STUBBORN))
    assert first.handoff is not None
    again = run_pipeline(CONFIG, log, agent_spec=dict(STUBBORN, manual_plan=first.handoff["best"]["plan"]))
    assert not again.succeeded and again.handoff is not None


def test_files_and_resume_command(tmp_path: Path) -> None:
    doc = {"node": "check_plan", "reason": "r", "best": {"source": "s", "violations": 2,
                                                        "plan": {"instance": "x", "makespan": 0, "operations": []}}}
    message = write_handoff(doc, tmp_path, "run-7", argv=["run", "ft06", "--run-id", "old", "--quiet"])
    assert json.loads((tmp_path / "best_plan.json").read_text())["instance"] == "x"
    handed = json.loads((tmp_path / "handoff.json").read_text())
    assert handed["resume"] == f"alas run ft06 --quiet --run-id run-7 --manual-plan {tmp_path / 'best_plan.json'}"
    assert "human fallback: r" in message and "(2 violation(s))" in message
    assert resume_command("r", Path("p.json"), ["run", "x", "--manual-plan=old.json"]) == \
        "alas run x --run-id r --manual-plan p.json"


def test_cli_hands_over_then_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # nothing may land in the working directory
    base = ["run", "ft06", "--planner", "simulated", "--optimizer", "none", "--variant", "no_repair",
            "--feedback-rounds", "0", "--root", str(tmp_path / "store"), "--quiet", "--seed", "3"]
    assert main([*base, "--run-id", "c1"]) == 1
    err = capsys.readouterr().err
    assert "human fallback: check_plan gave up" in err and "--manual-plan" in err
    best = tmp_path / "store" / "handoff" / "c1" / "best_plan.json"
    edited = patch_plan(get_instance("ft06"), Schedule.model_validate_json(best.read_text()))
    assert validate(get_instance("ft06"), edited).valid
    fixed = tmp_path / "edited.json"
    fixed.write_text(json.dumps(edited.to_json()))
    assert main([*base, "--run-id", "c1", "--manual-plan", str(fixed)]) == 0
    assert main([*base, "--run-id", "new", "--manual-plan", str(fixed)]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.json", "store"]
