"""The pure reconcile functions: spec + observed state (+ now) -> actions, without a cluster."""

from __future__ import annotations

import json
from typing import Any

import pytest

from alas_argo.operator import (
    CreateWorkflow,
    OperatorConfig,
    PatchStatus,
    Phase,
    PostDisruption,
    PostOutcome,
    Resource,
    reconcile_disruption,
    reconcile_planrun,
    run_id,
    status_after_post,
    workflow_name,
)

CONFIG = OperatorConfig(retry_base_seconds=5, retry_max_seconds=60, max_attempts=4)


def planrun(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, generation: int = 1,
            name: str = "ta01") -> Resource:
    return Resource(name=name, namespace="alas", uid="uid-1", generation=generation,
                    spec={"instance": "ta01", "scenarios": ["none", "breakdown"], "seeds": [0, 1]}
                    if spec is None else spec, status=status or {})


def workflow(phase: str, **status: Any) -> dict[str, Any]:
    return {"metadata": {"name": "ta01-g1"}, "status": {"phase": phase, **status}}


def test_new_planrun_creates_the_plan_workflow_and_marks_pending() -> None:
    actions = reconcile_planrun(planrun(), None, CONFIG)
    assert [type(a) for a in actions] == [CreateWorkflow, PatchStatus]
    create = actions[0]
    assert isinstance(create, CreateWorkflow)
    wf = create.manifest
    assert wf["kind"] == "Workflow" and wf["apiVersion"] == "argoproj.io/v1alpha1"
    assert wf["metadata"]["name"] == "ta01-g1" and wf["metadata"]["namespace"] == "alas"
    assert wf["spec"]["workflowTemplateRef"] == {"name": "alas-plan"}
    assert wf["spec"]["serviceAccountName"] == "alas-workflow"
    assert "parallelism" not in wf["spec"]
    params = {p["name"]: p["value"] for p in wf["spec"]["arguments"]["parameters"]}
    assert params == {"run-id": "alas.ta01-g1", "instance": "ta01", "planner": "cpsat",
                      "scenarios": '["none", "breakdown"]', "seeds": "[0, 1]", "time-limit": "10.0"}
    owner = wf["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("PlanRun", "uid-1", True)
    assert actions[1] == PatchStatus("planruns", "alas", "ta01", {
        "phase": "Pending", "workflow": "ta01-g1", "runId": "alas.ta01-g1", "observedGeneration": 1,
        "message": "workflow submitted",
        "progress": None, "startedAt": None, "finishedAt": None, "summary": None})  # null: nothing kept from before


def test_suite_planrun_submits_the_fan_out_with_parallelism() -> None:
    resource = planrun({"suite": "smoke", "planner": "heuristic", "parallelism": 8})
    create = reconcile_planrun(resource, None, CONFIG)[0]
    assert isinstance(create, CreateWorkflow)
    spec = create.manifest["spec"]
    assert spec["workflowTemplateRef"] == {"name": "alas-bench"}
    assert spec["parallelism"] == 8
    params = {p["name"]: p["value"] for p in spec["arguments"]["parameters"]}
    assert params["suite"] == "smoke" and "instance" not in params and params["planner"] == "heuristic"


@pytest.mark.parametrize("spec, field", [
    ({}, "spec"),
    ({"instance": "ta01", "suite": "smoke"}, "spec"),
    ({"instance": "ta01", "planner": "oracle"}, "planner"),
    ({"instance": "ta01", "seeds": []}, "seeds"),
    ({"instance": "ta01", "seeds": [-1]}, "spec"),
    ({"instance": "ta01", "timeLimit": 0}, "timeLimit"),
    ({"instance": "ta01", "colour": "red"}, "colour"),
])
def test_invalid_planrun_is_marked_invalid_without_a_workflow(spec: dict[str, Any], field: str) -> None:
    actions = reconcile_planrun(planrun(spec), None, CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    status = actions[0].status
    assert status["phase"] == "Invalid" and status["observedGeneration"] == 1
    assert field in status["message"] and "PlanRun alas/ta01" in status["message"]
    # Already marked: nothing more to do (no patch loop).
    assert reconcile_planrun(planrun(spec, status=status), None, CONFIG) == []


@pytest.mark.parametrize("argo, phase", [("", "Pending"), ("Pending", "Pending"), ("Running", "Running"),
                                         ("Succeeded", "Succeeded"), ("Failed", "Failed"), ("Error", "Failed"),
                                         ("Weird", "Running")])
def test_workflow_phase_is_mirrored(argo: str, phase: str) -> None:
    actions = reconcile_planrun(planrun(), workflow(argo, progress="1/3"), CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    assert actions[0].status["phase"] == phase
    assert actions[0].status["progress"] == "1/3"


def test_summary_is_mirrored_and_bounded() -> None:
    summary = {"cases": 18, "best_makespan": 1231, "valid": True, "note": "x" * 1000,
               **{f"z{i:02d}": i for i in range(40)}}
    wf = workflow("Succeeded", finishedAt="2026-11-29T20:00:00Z",
                  outputs={"parameters": [{"name": "other", "value": "1"},
                                          {"name": "summary", "value": json.dumps(summary)}]})
    status = reconcile_planrun(planrun(), wf, CONFIG)[0].status  # type: ignore[union-attr]
    assert status["phase"] == "Succeeded" and status["finishedAt"] == "2026-11-29T20:00:00Z"
    got = status["summary"]
    assert len(got) == 24
    assert got["best_makespan"] == 1231 and got["cases"] == 18 and got["valid"] is True
    assert got["note"] == "x" * 256 and "z19" in got and "z20" not in got


def test_a_list_or_object_in_the_summary_is_stored_as_json() -> None:
    """The aggregate's `failed` list was stored as Python's text, "['smoke-1.ta01.none.0']"."""
    summary = {"failed": ["smoke-1.ta01.none.0"], "by": {"none": 2}, "long": list(range(200))}
    wf = workflow("Succeeded", outputs={"parameters": [{"name": "summary", "value": json.dumps(summary)}]})
    got = reconcile_planrun(planrun(), wf, CONFIG)[0].status["summary"]  # type: ignore[union-attr]
    assert got["failed"] == '["smoke-1.ta01.none.0"]' and json.loads(got["failed"]) == summary["failed"]
    assert got["by"] == '{"none":2}'
    assert got["long"] == json.dumps(summary["long"], separators=(",", ":"))[:256]


@pytest.mark.parametrize("value", ["not json", "[1, 2]", "", "[" * 5000])
def test_unusable_summary_is_ignored(value: str) -> None:
    wf = workflow("Succeeded", outputs={"parameters": [{"name": "summary", "value": value}]})
    status = reconcile_planrun(planrun(), wf, CONFIG)[0].status  # type: ignore[union-attr]
    assert status["summary"] is None  # null in the merge patch: no summary stored


def test_unchanged_status_produces_no_action() -> None:
    first = reconcile_planrun(planrun(), workflow("Running", progress="2/3"), CONFIG)[0]
    assert isinstance(first, PatchStatus)
    again = reconcile_planrun(planrun(status=first.status), workflow("Running", progress="2/3"), CONFIG)
    assert again == []


def test_finished_run_whose_workflow_was_deleted_is_not_rerun() -> None:
    status = {"phase": "Succeeded", "workflow": "ta01-g1", "observedGeneration": 1}
    assert reconcile_planrun(planrun(status=status), None, CONFIG) == []


def test_new_generation_submits_a_new_workflow() -> None:
    status = {"phase": "Succeeded", "workflow": "ta01-g1", "observedGeneration": 1}
    actions = reconcile_planrun(planrun(status=status, generation=2), None, CONFIG)
    create = actions[0]
    assert isinstance(create, CreateWorkflow) and create.manifest["metadata"]["name"] == "ta01-g2"
    assert actions[1].status["observedGeneration"] == 2  # type: ignore[union-attr]


def test_hand_edited_status_phase_does_not_crash() -> None:
    actions = reconcile_planrun(planrun(status={"phase": "Bogus", "workflow": "ta01-g1",
                                                "observedGeneration": 1}), None, CONFIG)
    assert isinstance(actions[0], CreateWorkflow)


def test_long_names_stay_valid_and_distinct() -> None:
    a = planrun(name="a" * 70 + "x", generation=12)
    b = planrun(name="a" * 70 + "y", generation=12)
    assert len(workflow_name(a)) <= 63 and workflow_name(a).endswith("-g12")
    assert workflow_name(a) != workflow_name(b)
    create = reconcile_planrun(a, None, CONFIG)[0]
    assert isinstance(create, CreateWorkflow)
    assert len(create.manifest["metadata"]["labels"]["alas.dev/planrun"]) <= 63
    assert run_id(a) == f"alas.{workflow_name(a)}"


# ---- Disruption ---------------------------------------------------------------------------------------

EVENTS = [{"kind": "machine_breakdown", "machine": 1, "start": 369, "duration": 123},
          {"kind": "duration_change", "job": 4, "step": 7, "duration": 88}]


def disruption(status: dict[str, Any] | None = None, generation: int = 1, **spec: Any) -> Resource:
    return Resource(name="d1", namespace="alas", uid="uid-d", generation=generation,
                    spec={"run": "alas.ta01-g1", "time": 369, "events": EVENTS, **spec}, status=status or {})


def test_new_disruption_posts_to_the_controller_with_an_idempotency_key() -> None:
    actions = reconcile_disruption(disruption(), now=1000.0, config=CONFIG)
    assert actions == [PostDisruption(namespace="alas", name="d1", run="alas.ta01-g1",
                                      body={"time": 369, "events": EVENTS, "method": "lcrp"},
                                      idempotency_key="uid-d-g1")]


@pytest.mark.parametrize("spec", [
    {"events": []},
    {"events": [{"kind": "meteor", "machine": 1}]},
    {"events": [{"kind": "machine_breakdown", "machine": 1}]},
    {"run": "../etc/passwd"},
    {"time": -5},
    {"method": "DROP TABLE"},
])
def test_invalid_disruption_is_marked_invalid_and_never_posted(spec: dict[str, Any]) -> None:
    actions = reconcile_disruption(disruption(**spec), now=0, config=CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    assert actions[0].status["phase"] == "Invalid"
    assert "Disruption alas/d1" in actions[0].status["message"]


def test_success_records_the_new_version_and_stops() -> None:
    outcome = PostOutcome(201, {"version": 3, "makespan": 1290, "moved_operations": 17, "method": "lcrp"})
    status = status_after_post(disruption(), outcome, now=1000.0, config=CONFIG)
    assert status["phase"] == "Succeeded" and status["planVersion"] == 3 and status["makespan"] == 1290
    assert status["movedOperations"] == 17 and status["attempts"] == 1 and status["nextAttemptAt"] is None
    assert reconcile_disruption(disruption(status=status), now=2000.0, config=CONFIG) == []


def test_transient_failures_back_off_exponentially_then_fail() -> None:
    resource, now = disruption(), 1000.0
    delays = []
    for _ in range(CONFIG.max_attempts):
        assert isinstance(reconcile_disruption(resource, now, CONFIG)[0], PostDisruption)
        status = status_after_post(resource, PostOutcome(503, message="store unavailable"), now, CONFIG)
        resource = disruption(status=status)
        if status["phase"] == "Failed":
            break
        delays.append(status["nextAttemptAt"] - now)
        # Too early: nothing happens; at the due time: posted again.
        assert reconcile_disruption(resource, status["nextAttemptAt"] - 0.1, CONFIG) == []
        now = status["nextAttemptAt"]
    assert delays == [5, 10, 20]
    assert resource.status["phase"] == "Failed" and resource.status["attempts"] == 4
    assert "503" in resource.status["message"]
    assert reconcile_disruption(resource, now + 10_000, CONFIG) == []


def test_backoff_is_capped() -> None:
    config = OperatorConfig(retry_base_seconds=50, retry_max_seconds=60, max_attempts=10)
    status = status_after_post(disruption(status={"observedGeneration": 1, "attempts": 5}),
                               PostOutcome(0, message="unreachable"), 0.0, config)
    assert status["nextAttemptAt"] == 60 and status["attempts"] == 6


@pytest.mark.parametrize("code, transient", [(0, True), (409, True), (429, True), (500, True), (503, True),
                                             (400, False), (401, False), (404, False), (422, False)])
def test_permanent_errors_fail_at_once(code: int, transient: bool) -> None:
    status = status_after_post(disruption(), PostOutcome(code, message="nope"), 0.0, CONFIG)
    assert status["phase"] == ("Pending" if transient else "Failed")


def test_edited_disruption_is_posted_again_with_a_new_key() -> None:
    done = {"phase": "Succeeded", "observedGeneration": 1, "attempts": 1, "planVersion": 3}
    actions = reconcile_disruption(disruption(status=done, generation=2), now=0, config=CONFIG)
    assert isinstance(actions[0], PostDisruption) and actions[0].idempotency_key == "uid-d-g2"
    status = status_after_post(disruption(status=done, generation=2), PostOutcome(500), 0.0, CONFIG)
    assert status["attempts"] == 1  # the count restarts with the new generation


def test_phase_terminal_flags() -> None:
    assert {p for p in Phase if p.terminal} == {Phase.SUCCEEDED, Phase.FAILED, Phase.INVALID}


def by_planrun(status: dict[str, Any] | None = None, **spec: Any) -> Resource:
    return Resource(name="d2", namespace="alas", uid="uid-d2", generation=1,
                    spec={"planRun": "ta01", "time": 369, "events": EVENTS, **spec}, status=status or {})


def test_disruption_waits_for_its_planrun_then_uses_its_run_id() -> None:
    waiting = reconcile_disruption(by_planrun(), now=0, config=CONFIG, planruns={})
    assert len(waiting) == 1 and isinstance(waiting[0], PatchStatus)
    assert waiting[0].status["phase"] == "Pending" and "to exist" in waiting[0].status["message"]
    assert reconcile_disruption(by_planrun(status=waiting[0].status), now=0, config=CONFIG, planruns={}) == []

    starting = {"ta01": planrun(status={"phase": "Pending"})}
    msg = reconcile_disruption(by_planrun(), now=0, config=CONFIG, planruns=starting)[0].status["message"]  # type: ignore[union-attr]
    assert "to start its run" in msg

    running = {"ta01": planrun(status={"phase": "Running", "runId": "alas.ta01-g1"})}
    actions = reconcile_disruption(by_planrun(), now=0, config=CONFIG, planruns=running)
    assert isinstance(actions[0], PostDisruption) and actions[0].run == "alas.ta01-g1"


@pytest.mark.parametrize("spec", [
    {"run": "alas.ta01-g1", "planRun": "ta01", "time": 1, "events": EVENTS},
    {"time": 1, "events": EVENTS},
])
def test_run_and_planrun_are_exclusive(spec: dict[str, Any]) -> None:
    resource = Resource(name="d2", namespace="alas", uid="u", spec=spec)
    actions = reconcile_disruption(resource, now=0, config=CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    assert actions[0].status["phase"] == "Invalid"
    assert "exactly one of run or planRun" in actions[0].status["message"]
