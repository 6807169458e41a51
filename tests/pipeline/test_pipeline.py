"""The five-layer pipeline end to end on small instances, with and without disruptions and faults."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pydantic import ValidationError

from alas_argo.errors import InputError, WorkflowError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.log.replay import replay_log
from alas_argo.pipeline import RunConfig, Variant, build_workflow, run_pipeline
from alas_argo.runtime import RunStatus


def _log(tmp_path: Path, run_id: str = "r1") -> ExecutionLog:
    return ExecutionLog(FsStore(tmp_path / "store"), run_id)


def test_blueprint_is_valid_and_shaped(tmp_path: Path) -> None:
    wf = build_workflow(RunConfig(instance="ft06"), disruptions=2)
    ids = [n.id for n in wf.nodes]
    assert ids[:4] == ["blueprint", "agents", "propose", "merge"]
    assert {"disrupt_1", "repair_1", "recheck_1", "commit_2", "disrupt_2", "commit_3", "finish"} <= set(ids)
    propose = wf.node("propose")
    assert propose.kind == "map" and propose.items == "blueprint.jobs"
    assert wf.node("commit_v1").compensation == "retract_v1"
    assert wf.policies["revalidate"].loop_guard is not None


@pytest.mark.parametrize("count", [0, 1, 3, 5])
def test_alas_run_builds_alas_plans_definition_up_to_its_maximum(count: int) -> None:
    """Up to MAX_DISRUPTIONS, `alas run` builds the nodes and edges alas-plan is rendered with (the unused
    segments pass through); beyond it, as many segments as the run reveals."""
    from alas_argo.workflows import WORKFLOWS
    from alas_argo.workflows.plan import MAX_DISRUPTIONS

    local = build_workflow(RunConfig(instance="ft06"), disruptions=count)
    segments = [n.id for n in local.nodes if n.id.startswith("disrupt_")]
    assert segments == [f"disrupt_{k}" for k in range(1, max(count, MAX_DISRUPTIONS) + 1)]
    cluster = WORKFLOWS["alas-plan"]()
    same = [(n.id, n.role, n.kind, n.params) for n in local.nodes] == [
        (n.id, n.role, n.kind, n.params) for n in cluster.nodes] and local.edges == cluster.edges
    assert same is (count <= MAX_DISRUPTIONS)


def test_plan_only_heuristic(tmp_path: Path, ft06_heuristic: RunConfig) -> None:
    log = _log(tmp_path)
    result = run_pipeline(ft06_heuristic, log)
    assert result.run is not None
    assert result.run.status is RunStatus.SUCCEEDED and result.succeeded
    assert result.versions == [1] and result.baseline == result.final
    assert result.final is not None and validate(get_instance("ft06"), result.final).valid
    # every job agent ran, one map item per job
    assert len(result.run.outputs["propose"]) == 6
    assert log.verify().ok


@pytest.fixture
def ft06_heuristic() -> RunConfig:
    return RunConfig(instance="ft06", planner="heuristic", time_limit=1, repair_budget=1)


@pytest.mark.parametrize("kind", ["breakdown", "shock", "mixed"])
def test_disruption_repaired_and_committed(tmp_path: Path, kind: str) -> None:
    log = _log(tmp_path)
    config = RunConfig(instance="ft06", planner="cpsat", disrupt=kind, time_limit=1, repair_budget=1, seed=3)
    result = run_pipeline(config, log)
    assert result.run is not None
    assert result.succeeded, result.run.errors
    assert result.versions == [1, 2]
    assert len(result.disruptions) == 1 and result.repairs[0]["method"] == "lcrp"
    baseline = Schedule.model_validate(log.plan(1))
    final = Schedule.model_validate(log.plan(2))
    report = validate(get_instance("ft06"), final, disruption=result.disruptions[0], baseline=baseline)
    assert report.valid
    types = [e.type for e in log.events()]
    assert EventType.DISRUPTION_OBSERVED in types and EventType.REPAIR_FINISHED in types
    assert types.count(EventType.PLAN_COMMITTED) == 2
    assert log.verify().ok


def test_sequence_of_disruptions_from_file(tmp_path: Path) -> None:
    inst = get_instance("la01")
    path = tmp_path / "d.json"
    path.write_text(json.dumps([
        {"time": 100, "events": [{"kind": "machine_breakdown", "machine": 1, "start": 100, "duration": 60}]},
        {"time": 300, "events": [{"kind": "duration_change", "job": 4, "step": 4, "duration": 90}]},
    ]))
    config = RunConfig(instance="la01", planner="heuristic", disrupt=str(path), repair_budget=1)
    result = run_pipeline(config, _log(tmp_path))
    assert result.run is not None
    assert result.succeeded, result.run.errors
    assert result.versions == [1, 2, 3] and len(result.disruptions) == 2
    # the first breakdown ended (at 160) before the second reveal, so it is not carried forward
    second = result.disruptions[1]
    assert second.time == 300 and [e.kind for e in second.events] == ["duration_change"]
    assert result.final is not None and result.final.makespan >= inst.lower_bound  # type: ignore[operator]


def test_faults_are_caught_and_patched(tmp_path: Path) -> None:
    log = _log(tmp_path)
    config = RunConfig(instance="ft06", planner="heuristic", faults=5, seed=1, time_limit=1)
    result = run_pipeline(config, log)
    assert result.run is not None
    assert result.succeeded
    assert result.run.outputs["inject"]["faults"], "faults were injected"
    failed = [e for e in log.events() if e.type == EventType.VALIDATION_FAILED]
    assert failed and failed[0].payload["report"]["violations"]


def test_no_validator_commits_faulty_plan(tmp_path: Path) -> None:
    config = RunConfig(instance="ft06", planner="heuristic", faults=3, seed=2, variant=Variant.NO_VALIDATOR)
    result = run_pipeline(config, _log(tmp_path))
    assert result.run is not None
    assert result.run.status is RunStatus.SUCCEEDED  # nothing noticed...
    assert not result.final_valid and result.final_violations  # ...but the plan is wrong


def test_no_repair_trips_loop_guard_and_fails(tmp_path: Path) -> None:
    log = _log(tmp_path)
    config = RunConfig(instance="ft06", planner="heuristic", faults=3, seed=2, variant=Variant.NO_REPAIR,
                       max_revalidations=2)
    result = run_pipeline(config, log)
    assert result.run is not None
    assert result.run.status is RunStatus.FAILED and result.run.failed_node == "check_optimized"
    assert "LoopGuardTripped" in result.run.errors["check_optimized"]
    assert result.final is None and not result.succeeded
    assert EventType.LOOP_GUARD_TRIPPED in [e.type for e in log.events()]


def test_a_finished_run_asked_again_returns_its_stored_result(tmp_path: Path) -> None:
    config = RunConfig(instance="ft06", planner="cpsat", disrupt="breakdown", time_limit=1, repair_budget=1)
    first = run_pipeline(config, _log(tmp_path, "same"))
    assert first.succeeded and first.run is not None
    events = len(_log(tmp_path, "same").events())
    again = run_pipeline(config, _log(tmp_path, "same"))
    assert again.succeeded and again.versions == [1, 2] and again.resumed
    assert again.run is None  # nothing ran: no agent, optimizer, repair or commit
    log = _log(tmp_path, "same")
    assert len(log.events()) == events  # not one event appended
    keep = {"seconds", "ran"}
    assert {k: v for k, v in again.summary().items() if k not in keep} == \
        {k: v for k, v in first.summary().items() if k not in keep}
    assert log.verify().ok


def test_bad_disrupt_argument(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="breakdown, shock, mixed"):
        run_pipeline(RunConfig(instance="ft06", disrupt="earthquake"), _log(tmp_path))
    bad = tmp_path / "bad.json"
    bad.write_text('{"time": "soon"}')
    with pytest.raises(InputError, match=r"bad\.json"):
        run_pipeline(RunConfig(instance="ft06", disrupt=str(bad)), _log(tmp_path))


@pytest.mark.parametrize("field", ["planner", "optimizer", "repair_method"])
def test_a_backend_name_outside_the_known_ones_is_refused(field: str) -> None:
    """The library's caller gets what the CLI's choices give: a typo used to run the registry's fallback under
    the unknown name (the summary said planner 'nope' for heuristic agents)."""
    with pytest.raises(ValidationError, match=field):
        RunConfig(instance="ft06", **{field: "nope"})


def test_the_repair_method_names_are_the_repair_methods() -> None:
    from typing import get_args

    from alas_argo.jssp.repair import RepairMethod
    from alas_argo.pipeline.config import RepairMethodName

    assert set(get_args(RepairMethodName)) == {m.value for m in RepairMethod}


def test_blueprint_rejects_invalid_config() -> None:
    with pytest.raises((WorkflowError, ValueError)):
        build_workflow(RunConfig(instance="ft06", workers=0))


def test_repair_effort_reaches_lcrp_and_the_log(tmp_path: Path) -> None:
    log = _log(tmp_path)
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", time_limit=1, repair_budget=5,
                       repair_effort=3, seed=1, repair_first_edit="redispatch")
    result = run_pipeline(config, log)
    assert result.run is not None
    assert result.succeeded, result.run.errors
    # ft06 has few free operations: the box is the floor (0.1 s) times the effort.
    assert any("time box 0.30 s" in note for note in result.repairs[0]["notes"])
    finished = [e for e in log.events() if e.type is EventType.REPAIR_FINISHED]
    assert [e.payload["effort"] for e in finished] == [3.0]
    with pytest.raises(ValueError, match="repair_effort"):
        RunConfig(instance="ft06", repair_effort=0)


def test_repair_tolerance_reaches_lcrp_the_log_and_replay(tmp_path: Path) -> None:
    # ft06, breakdown seed 1: LCRP moves 13 operations for a makespan of 59; allowed 2 % it moves none at 60.
    finished, logs = {}, {}
    for tolerance in (0.0, 0.02):
        logs[tolerance] = ExecutionLog(FsStore(tmp_path / f"store-{tolerance}"), "r")
        config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, time_limit=1,
                           repair_budget=2, repair_tolerance=tolerance, workers=1,
                           repair_first_edit="redispatch")
        assert run_pipeline(config, logs[tolerance]).succeeded
        [finished[tolerance]] = [e.payload for e in logs[tolerance].events() if e.type is EventType.REPAIR_FINISHED]
    strict, traded = finished[0.0], finished[0.02]
    assert (strict["tolerance"], traded["tolerance"], traded["limits"]["tolerance"]) == (0.0, 0.02, 0.02)
    assert traded["metrics"]["moved_operations"] < strict["metrics"]["moved_operations"]
    assert strict["metrics"]["makespan"] < traded["metrics"]["makespan"] <= math.floor(
        strict["metrics"]["makespan"] * 1.02)
    # Replay repairs with the recorded tolerance: without it, it would find the strict plan and report drift.
    report = replay_log(logs[0.02])
    assert report.parity and "repair" in {s.kind for s in report.steps}, report.summary()
    with pytest.raises(ValueError, match="repair_tolerance"):
        RunConfig(instance="ft06", repair_tolerance=0.2)
