"""Argo compensations are wired to run: ``spec.onExit`` names the handler, the handler runs ``alas step
compensate`` only when the workflow did not succeed, and reading a document back claims a compensation only
when that handler is the one Argo will run. A compensation's own policy reaches both engines: its timeout bounds
Argo's compensate step, and ASL's compensation states carry its Retry and TimeoutSeconds and go on past a
failed one, as the local saga does; Argo's one compensate pod retries as often as the most patient
compensation allows and hands each its own attempts and errors to keep to."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import read_native
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl
from alas_argo.ir import Backoff, Policy, Retry, Workflow
from tests.engines.samples import kitchen_sink


def undo_policies(uncommit: Policy | None, unpublish: Policy | None) -> Workflow:
    """The kitchen sink with ``uncommit`` and ``unpublish`` under the given policies (none: the defaults)."""
    wf = kitchen_sink()
    policies = dict(wf.policies)
    nodes = []
    for n in wf.nodes:
        given = {"uncommit": uncommit, "unpublish": unpublish}.get(n.id)
        if given is not None:
            policies[f"undo-{n.id}"] = given
            n = n.model_copy(update={"policy_ref": f"undo-{n.id}"})
        nodes.append(n)
    return wf.model_copy(update={"nodes": nodes, "policies": policies})


def compensate_template(wf: Workflow) -> dict[str, Any]:
    return next(t for t in to_argo(wf, image="alas:test")["spec"]["templates"] if t["name"] == "compensate")


def test_on_exit_runs_the_compensations_when_the_workflow_did_not_succeed() -> None:
    wf = kitchen_sink()
    spec = to_argo(wf, image="alas:test")["spec"]
    templates = {t["name"]: t for t in spec["templates"]}
    handler = templates[spec["onExit"]]
    [task] = handler["dag"]["tasks"]
    assert task["when"] == "{{workflow.status}} != Succeeded"
    args = templates[task["template"]]["container"]["args"]
    assert args[:2] == ["step", "compensate"]
    assert args[args.index("--status") + 1] == "{{workflow.status}}"
    passed = {p["name"]: p["value"] for p in task["arguments"]["parameters"]}
    comps = json.loads(passed["compensations"])
    assert {k: v["node"] for k, v in comps.items()} == {
        n.id: n.compensation for n in wf.nodes if n.compensation is not None} == {
        "commit": "uncommit", "publish": "unpublish"}


def test_a_handler_argo_would_not_run_compensates_nothing() -> None:
    doc = to_argo(kitchen_sink(), image="alas:test")
    native = {n["id"]: n for n in read_native(doc)["nodes"]}
    assert native["commit"]["compensation"] == "uncommit" and native["publish"]["compensation"] == "unpublish"
    unhooked = copy.deepcopy(doc)
    del unhooked["spec"]["onExit"]  # the handler template is still there, but nothing runs it
    native = {n["id"]: n for n in read_native(unhooked)["nodes"]}
    assert "compensation" not in native["commit"] and "compensation" not in native["publish"]


def test_the_compensations_timeouts_bound_argos_compensate_step_together() -> None:
    timed = undo_policies(Policy(timeout=30, retry=Retry(max_attempts=3)), Policy(timeout=20))
    assert compensate_template(timed)["activeDeadlineSeconds"] == 30 * 3 + 20
    fraction = undo_policies(Policy(timeout=0.5), Policy(timeout=0.25))
    assert compensate_template(fraction)["timeout"] == "0.75s"
    assert "activeDeadlineSeconds" not in compensate_template(fraction)


@pytest.mark.parametrize("untimed", [None, Policy(retry=Retry(max_attempts=2))])
def test_one_untimed_compensation_leaves_the_compensate_step_unbounded(untimed: Policy | None) -> None:
    template = compensate_template(undo_policies(Policy(timeout=30), untimed))
    assert "activeDeadlineSeconds" not in template and "timeout" not in template


def test_argos_compensate_pod_retries_for_the_most_patient_compensation_and_hands_each_its_own_policy() -> None:
    patient = Policy(retry=Retry(max_attempts=4, backoff=Backoff(kind="fixed", initial=3),
                                 retry_on=["TransientError"]))
    wf = undo_policies(patient, Policy(retry=Retry(max_attempts=2, retry_on=["Timeout"])))
    template = compensate_template(wf)
    assert template["retryStrategy"] == {
        "limit": "3", "retryPolicy": "Always", "backoff": {"duration": "3s", "factor": 1},
        "expression": "asInt(lastRetry.exitCode) == 75 || asInt(lastRetry.exitCode) == 143 || "
                      "lastRetry.status == 'Error' || lastRetry.message contains 'deadline'"}
    spec = to_argo(wf, image="alas:test")["spec"]
    [task] = {t["name"]: t for t in spec["templates"]}[spec["onExit"]]["dag"]["tasks"]
    comps = json.loads(task["arguments"]["parameters"][0]["value"])
    assert {k: v["retry"] for k, v in comps.items()} == {
        "commit": {"max_attempts": 4, "retry_on": ["TransientError"]},
        "publish": {"max_attempts": 2, "retry_on": ["Timeout"]}}
    # One attempt each: the pod is not retried at all (the policy's default errors, none worth retrying).
    assert "retryStrategy" not in compensate_template(undo_policies(None, None))


def test_asl_compensation_states_carry_their_policy_and_go_on_past_a_failed_one() -> None:
    wf = undo_policies(Policy(timeout=7.5, retry=Retry(max_attempts=3, backoff=Backoff(kind="fixed", initial=2))),
                       None)
    states = to_asl(wf)["States"]
    uncommit, unpublish = states["alas-undo-commit"], states["alas-undo-publish"]
    assert uncommit["TimeoutSeconds"] == 8
    assert uncommit["Retry"] == [{"ErrorEquals": ["TransientError", "States.Timeout"], "IntervalSeconds": 2,
                                  "MaxAttempts": 2, "BackoffRate": 1.0, "JitterStrategy": "NONE"}]
    assert "Retry" not in unpublish and "TimeoutSeconds" not in unpublish
    # Newest first: publish was committed after commit; each catches into the next, the last into Fail.
    assert unpublish["Next"] == "alas-undo-commit" and uncommit["Next"] == "alas-rolled-back"
    assert unpublish["Catch"] == [{"ErrorEquals": ["States.ALL"], "Next": "alas-undo-commit",
                                   "ResultPath": "$.compensation_errors.publish"}]
    assert uncommit["Catch"] == [{"ErrorEquals": ["States.ALL"], "Next": "alas-rolled-back",
                                  "ResultPath": "$.compensation_errors.commit"}]
    assert from_asl(to_asl(wf)) == wf
