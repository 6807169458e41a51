"""The cases of the reconcile functions that mutation testing found unasserted: where each patch goes, the exact
fields it writes (each one declared by the CRD, since the API server drops or refuses any other), the workflow's
message and start time, a Disruption that waited for its PlanRun, and what a failed Disruption stops showing."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from alas_argo.operator import (
    CreateWorkflow,
    Operator,
    OperatorConfig,
    PatchStatus,
    PostDisruption,
    PostOutcome,
    Resource,
    reconcile_disruption,
    reconcile_planrun,
    status_after_post,
)
from alas_argo.operator.running import ARGO
from tests.operators.test_crds import crd, strict
from tests.operators.test_reconciling import CONFIG, by_planrun, disruption, planrun, workflow
from tests.operators.test_running import MemoryApi, cr


def merged(status: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """``status`` after a JSON merge patch of it, as the API server applies the operator's patches (null
    deletes a field)."""
    out = dict(status)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def status_schema(kind: str) -> dict[str, Any]:
    schema = crd(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    return dict(strict(schema))


def assert_fits_the_crd(kind: str, status: dict[str, Any]) -> None:
    """A field the CRD does not declare would be dropped (or refused) by the API server: lost to the user."""
    jsonschema.Draft4Validator(status_schema(kind)).validate(merged({}, status))


# ---- PlanRun ------------------------------------------------------------------------------------------


def test_an_invalid_planrun_is_patched_on_planruns_with_its_generation() -> None:
    """Guards the plural and observedGeneration of the Invalid patch (no test compared the whole action)."""
    actions = reconcile_planrun(planrun({"instance": "ta01", "planner": "oracle"}, generation=3), None, CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    message = actions[0].status["message"]
    nulls = dict.fromkeys(("workflow", "runId", "progress", "startedAt", "finishedAt", "summary"))
    assert actions[0] == PatchStatus("planruns", "alas", "ta01",
                                     {"phase": "Invalid", "message": message, "observedGeneration": 3, **nulls})
    assert_fits_the_crd("PlanRun", actions[0].status)


def test_a_planrun_edited_into_an_invalid_spec_drops_the_earlier_run_and_its_disruptions_wait() -> None:
    """Its status used to keep generation 1's workflow, run id and summary next to generation 2's Invalid
    phase, and a Disruption naming the PlanRun was still posted to that run."""
    done = {"phase": "Succeeded", "workflow": "ta01-g1", "runId": "alas.ta01-g1", "observedGeneration": 1,
            "summary": {"cases": 1}, "startedAt": "t0", "finishedAt": "t1", "progress": "1/1", "message": ""}
    edited = planrun({"instance": "nope99"}, status=done, generation=2)
    (patch,) = reconcile_planrun(edited, None, CONFIG)
    assert isinstance(patch, PatchStatus)
    stored = {k: v for k, v in {**done, **patch.status}.items() if v is not None}  # a merge patch's nulls delete
    assert stored == {"phase": "Invalid", "observedGeneration": 2, "message": patch.status["message"]}
    assert "unknown instance 'nope99'" in stored["message"]
    resource = Resource(name="ta01", namespace="alas", uid="uid-1", generation=2, spec=edited.spec, status=stored)
    (waiting,) = reconcile_disruption(by_planrun(), now=0, config=CONFIG, planruns={"ta01": resource})
    assert isinstance(waiting, PatchStatus)
    assert waiting.status["phase"] == "Pending" and waiting.status["message"] == \
        "waiting for PlanRun ta01 to start its run"


def test_the_workflow_is_created_in_the_planruns_namespace() -> None:
    """Guards CreateWorkflow.namespace, which the I/O layer creates the workflow in."""
    resource = Resource(name="ta01", namespace="team-b", uid="u", spec={"instance": "ta01"})
    create = reconcile_planrun(resource, None, CONFIG)[0]
    assert isinstance(create, CreateWorkflow)
    assert create.namespace == "team-b" == create.manifest["metadata"]["namespace"]


def test_the_workflows_message_and_start_time_are_mirrored() -> None:
    """Guards the message (Argo's when it has one) and startedAt copied from the workflow's status."""
    wf = workflow("Failed", message="child 'solve' failed", startedAt="2026-11-29T19:58:00Z",
                  finishedAt="2026-11-29T20:00:00Z")
    status = reconcile_planrun(planrun(), wf, CONFIG)[0].status  # type: ignore[union-attr]
    assert status["message"] == "child 'solve' failed"
    assert (status["startedAt"], status["finishedAt"]) == ("2026-11-29T19:58:00Z", "2026-11-29T20:00:00Z")
    assert_fits_the_crd("PlanRun", status)


@pytest.mark.parametrize("argo, message", [("Pending", "workflow submitted"), ("Running", ""), ("Succeeded", "")])
def test_without_a_message_from_argo_only_a_queued_workflow_keeps_ours(argo: str, message: str) -> None:
    """Guards the fallback message: 'workflow submitted' only while Pending, not once the workflow runs."""
    status = reconcile_planrun(planrun(status={"message": "workflow submitted"}), workflow(argo), CONFIG)[0].status  # type: ignore[union-attr]
    assert status["message"] == message


# ---- Disruption ---------------------------------------------------------------------------------------


def test_an_invalid_disruption_is_patched_on_disruptions_with_its_generation() -> None:
    """Guards the plural and observedGeneration of the Disruption's Invalid patch."""
    actions = reconcile_disruption(disruption(generation=2, time=-5), now=0, config=CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    message = actions[0].status["message"]
    assert actions[0] == PatchStatus("disruptions", "alas", "d1",
                                     {"phase": "Invalid", "message": message, "observedGeneration": 2})
    assert_fits_the_crd("Disruption", actions[0].status)


@pytest.mark.parametrize("planruns, what", [
    ({}, "to exist"),
    ({"ta01": planrun(status={"phase": "Pending"})}, "to start its run"),
])
def test_a_disruption_waiting_for_its_planrun_says_why_on_disruptions(planruns: dict[str, Resource],
                                                                      what: str) -> None:
    """Guards the whole waiting patch: its plural, observedGeneration and message (only parts were asserted)."""
    actions = reconcile_disruption(by_planrun(), now=0, config=CONFIG, planruns=planruns)
    assert actions == [PatchStatus("disruptions", "alas", "d2", {
        "phase": "Pending", "observedGeneration": 1, "message": f"waiting for PlanRun ta01 {what}"})]
    assert_fits_the_crd("Disruption", actions[0].status)  # type: ignore[union-attr]


def test_a_disruption_that_waited_for_its_planrun_posts_once_and_counts_its_first_attempt() -> None:
    """Guards the path no test took: a Disruption carrying its waiting status (Pending, this generation, no
    attempts, no nextAttemptAt) is posted as soon as the PlanRun has a run id, and that post is attempt 1."""
    waiting = reconcile_disruption(by_planrun(), now=0, config=CONFIG, planruns={})[0].status  # type: ignore[union-attr]
    resource = by_planrun(status=waiting)
    running = {"ta01": planrun(status={"phase": "Running", "runId": "alas.ta01-g1"})}
    actions = reconcile_disruption(resource, now=0, config=CONFIG, planruns=running)
    assert len(actions) == 1 and isinstance(actions[0], PostDisruption) and actions[0].run == "alas.ta01-g1"
    status = status_after_post(resource, PostOutcome(503, message="store unavailable"), 0.0, CONFIG)
    assert status["attempts"] == 1 and status["nextAttemptAt"] == CONFIG.retry_base_seconds


def test_a_successful_post_records_every_field_of_the_repair() -> None:
    """Guards the success status field by field: lastAttemptAt, the message and the method were unasserted."""
    outcome = PostOutcome(201, {"version": 3, "makespan": 1290, "moved_operations": 17, "method": "aor"})
    status = status_after_post(disruption(), outcome, now=1234.5, config=CONFIG)
    assert status == {"observedGeneration": 1, "attempts": 1, "lastAttemptAt": 1234.5, "phase": "Succeeded",
                      "message": "repaired", "planVersion": 3, "makespan": 1290, "movedOperations": 17,
                      "method": "aor", "nextAttemptAt": None}
    assert_fits_the_crd("Disruption", status)


def test_a_disruption_that_failed_for_good_shows_no_next_attempt() -> None:
    """Guards the null that removes nextAttemptAt once a retried Disruption fails permanently."""
    config = OperatorConfig(retry_base_seconds=5, retry_max_seconds=60, max_attempts=4)
    resource = disruption()
    stored: dict[str, Any] = {}
    for now, outcome in [(100.0, PostOutcome(503, message="busy")), (105.0, PostOutcome(422, message="bad"))]:
        stored = merged(stored, status_after_post(resource, outcome, now, config))
        resource = disruption(status=stored)
        assert_fits_the_crd("Disruption", stored)
    assert stored["phase"] == "Failed" and stored["attempts"] == 2 and stored["lastAttemptAt"] == 105.0
    assert "nextAttemptAt" not in stored
    assert stored["message"] == "repair failed (422): bad"


# ---- A new generation ---------------------------------------------------------------------------------


def test_a_rerun_planrun_shows_nothing_of_the_previous_generations_workflow() -> None:
    """Guards against a bug: a PlanRun edited from a suite to an instance kept the suite's summary (and, until
    the next pass, its progress and times) beside the new workflow, which has no summary output."""
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "ta01", {"suite": "smoke"}))
    op = Operator(api, "alas")
    op.reconcile_once()
    api.objects[ARGO[0], ARGO[2]]["ta01-g1"]["status"] = {
        "phase": "Succeeded", "progress": "14/14", "startedAt": "2026-11-29T19:58:00Z",
        "finishedAt": "2026-11-29T20:00:00Z",
        "outputs": {"parameters": [{"name": "summary", "value": '{"cases": 12, "valid": 12}'}]}}
    op.reconcile_once()
    stored = api.objects["alas.dev", "planruns"]["ta01"]
    assert stored["status"]["summary"] == {"cases": 12, "valid": 12}

    stored["spec"], stored["metadata"]["generation"] = {"instance": "ta01"}, 2
    op.reconcile_once()  # submits ta01-g2
    status = stored["status"]
    assert (status["workflow"], status["phase"], status["observedGeneration"]) == ("ta01-g2", "Pending", 2)
    assert not {"summary", "progress", "startedAt", "finishedAt"} & set(status)

    api.objects[ARGO[0], ARGO[2]]["ta01-g2"]["status"] = {"phase": "Succeeded", "progress": "4/4"}
    op.reconcile_once()
    assert status["phase"] == "Succeeded" and status["progress"] == "4/4"
    assert "summary" not in status
    assert op.reconcile_once() == []  # and no patch loop


def test_a_summary_left_by_the_previous_generation_is_removed_when_the_new_workflow_has_none() -> None:
    """Guards the same bug where the submission patch never landed (the pass failed between creating the
    workflow and patching the status): the next pass finds the new workflow and must still drop the old
    summary."""
    old = {"phase": "Succeeded", "workflow": "ta01-g1", "runId": "alas.ta01-g1", "observedGeneration": 1,
           "summary": {"cases": 12}}
    actions = reconcile_planrun(planrun(status=old, generation=2), workflow("Running"), CONFIG)
    assert len(actions) == 1 and isinstance(actions[0], PatchStatus)
    assert "summary" not in merged(old, actions[0].status)


def test_an_edited_disruption_that_fails_shows_no_plan_version_of_the_previous_generation() -> None:
    """Guards against a bug: after an edit, a Disruption whose new post failed still showed the previous
    generation's planVersion, makespan, movedOperations and method, as if this repair had committed them."""
    done = status_after_post(disruption(), PostOutcome(201, {"version": 3, "makespan": 1290,
                                                             "moved_operations": 17, "method": "lcrp"}),
                             100.0, CONFIG)
    stored = merged({}, done)
    for now, outcome in [(200.0, PostOutcome(503, message="busy")), (205.0, PostOutcome(422, message="bad"))]:
        stored = merged(stored, status_after_post(disruption(status=stored, generation=2), outcome, now, CONFIG))
        assert not {"planVersion", "makespan", "movedOperations", "method"} & set(stored), stored
    assert stored["phase"] == "Failed" and stored["observedGeneration"] == 2 and stored["attempts"] == 2
