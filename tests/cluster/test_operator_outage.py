"""The operator away, on the real cluster: it is one replica without leader election (operators/README.md), so an
upgrade, a node drain or a crash leaves PlanRuns and Disruptions unattended for a while. What a user applied or
started in that time is neither lost nor done twice once the operator is back: a workflow that ended without it
is mirrored, not submitted again, and a Disruption the operator had posted before it went (the controller
committed the repair, the status was never written) is answered from the controller's idempotency record, not
repaired a second time."""

from __future__ import annotations

import time
from typing import Any

import pytest

from alas_argo.operator.resources import DisruptionSpec
from tests.cluster.conftest import Kube, Store, controller_address, controller_token, post_disruption

# A plan workflow takes about 2 min on a busy machine; the operator's pod a few seconds to come back.
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]
OPERATOR = "app.kubernetes.io/component=operator"


def _operator_pods(kube: Kube) -> list[dict[str, Any]]:
    return [p for p in kube.json("get", "pods", "-l", OPERATOR)["items"]
            if p["metadata"].get("deletionTimestamp") is None]


def _ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", []))


def _phase(kube: Kube, kind: str, name: str) -> str | None:
    return (kube.json("get", kind, name).get("status") or {}).get("phase")


def test_work_left_while_the_operator_was_away_is_done_once_when_it_is_back(kube: Kube, store: Store) -> None:
    name = f"e2e-away-{int(time.time()) % 100000}"
    kube.apply({"apiVersion": "alas.dev/v1alpha1", "kind": "PlanRun", "metadata": {"name": name},
                "spec": {"instance": "ft10", "planner": "heuristic", "scenarios": ["none"], "seeds": [0]}})
    running = kube.wait_for(f"PlanRun {name} to start its workflow",
                            lambda: (got := kube.json("get", "planrun", name)).get("status", {}).get("workflow")
                            and got, timeout=300)
    workflow, run_id = running["status"]["workflow"], running["status"]["runId"]
    phase_left = running["status"]["phase"]
    deployment = kube.json("get", "deployment", "-l", OPERATOR)["items"][0]["metadata"]["name"]
    before = {p["metadata"]["name"] for p in _operator_pods(kube)}
    disruption = f"{name}-d"
    spec = {"planRun": name, "time": 20,
            "events": [{"kind": "machine_breakdown", "machine": 2, "start": 20, "duration": 15}]}
    kube("scale", "deployment", deployment, "--replicas=0")
    try:
        kube.wait_for("the operator's pod to go", lambda: not _operator_pods(kube), timeout=180)
        # The workflow runs on without the operator (Argo's controller runs it), and nobody mirrors its end.
        ended = kube.wait_for(f"workflow {workflow} to end", lambda: _phase(kube, "workflow", workflow)
                              in ("Succeeded", "Failed", "Error"), timeout=900)
        assert ended and _phase(kube, "workflow", workflow) == "Succeeded"
        assert _phase(kube, "planrun", name) == phase_left, "something mirrored the workflow with the operator away"
        planned = [e["payload"]["version"] for e in store.events(run_id) if e["type"] == "plan.committed"]
        # A Disruption applied now waits; the repair its operator would post is posted here, with the operator's
        # own idempotency key and body, as if the operator had posted it and gone before recording the answer.
        kube.apply({"apiVersion": "alas.dev/v1alpha1", "kind": "Disruption", "metadata": {"name": disruption},
                    "spec": spec})
        applied = kube.json("get", "disruption", disruption)
        assert not applied.get("status"), applied["status"]
        meta = applied["metadata"]
        status_code, answer = post_disruption(
            controller_address(kube), controller_token(kube), run_id, DisruptionSpec.model_validate(spec).body(),
            f"{meta['uid']}-g{meta['generation']}")
        assert status_code == 201, answer
    finally:
        kube("scale", "deployment", deployment, "--replicas=1")
        kube.wait_for("a Ready operator pod", lambda: any(map(_ready, _operator_pods(kube))), timeout=300)
    assert not before & {p["metadata"]["name"] for p in _operator_pods(kube)}, "the operator was not restarted"

    planrun = kube.wait_for(f"PlanRun {name} to be mirrored", lambda: (got := kube.json("get", "planrun", name))
                            .get("status", {}).get("phase") in ("Succeeded", "Failed") and got, timeout=300)
    assert planrun["status"]["phase"] == "Succeeded", planrun["status"]
    assert planrun["status"]["workflow"] == workflow
    owned = [w["metadata"]["name"] for w in kube.json("get", "workflows")["items"]
             if name in [o["name"] for o in w["metadata"].get("ownerReferences", [])]]
    assert owned == [workflow], f"the PlanRun's workflows: {owned}"

    done = kube.wait_for(f"Disruption {disruption}", lambda: (got := kube.json("get", "disruption", disruption))
                         .get("status", {}).get("phase") in ("Succeeded", "Failed", "Invalid") and got, timeout=300)
    status = done["status"]
    assert status["phase"] == "Succeeded", status
    # The controller's answer to the post made while the operator was away, replayed: the same version.
    assert (status["planVersion"], status["attempts"]) == (answer["version"], 1), status
    commits = [e["payload"]["version"] for e in store.events(run_id) if e["type"] == "plan.committed"]
    assert planned and commits == [*planned, answer["version"]], f"committed versions {commits}, {planned} before"
    store.alas("log", "verify", run_id, "--store", "s3")
