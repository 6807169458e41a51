"""The operator on the real API server: a PlanRun applied with kubectl becomes an Argo Workflow whose phase the
PlanRun's status follows to Succeeded; a Disruption for it ends in a committed repair; the operator's log
shows no Forbidden."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import Kube, Store

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def planrun(kube: Kube) -> dict[str, Any]:
    name = f"e2e-op-{int(time.time()) % 100000}"
    kube.apply({"apiVersion": "alas.dev/v1alpha1", "kind": "PlanRun", "metadata": {"name": name},
                "spec": {"instance": "ft10", "planner": "heuristic", "scenarios": ["none"], "seeds": [0]}})

    def finished() -> dict[str, Any] | None:
        got = kube.json("get", "planrun", name)
        return got if got.get("status", {}).get("phase") in ("Succeeded", "Failed", "Error", "Invalid") else None

    return dict(kube.wait_for(f"PlanRun {name} to finish", finished, timeout=600))


def test_a_planrun_creates_a_workflow_and_follows_it(planrun: dict[str, Any], kube: Kube) -> None:
    status = planrun["status"]
    assert status["phase"] == "Succeeded", status
    workflow = kube.json("get", "workflow", status["workflow"])
    assert workflow["status"]["phase"] == "Succeeded"
    owners = workflow["metadata"].get("ownerReferences", [])
    assert [o["name"] for o in owners] == [planrun["metadata"]["name"]]


def test_a_disruption_ends_in_a_committed_repair(planrun: dict[str, Any], kube: Kube, store: Store) -> None:
    name = planrun["metadata"]["name"] + "-d"
    run_id = planrun["status"]["runId"]
    before = [e for e in store.events(run_id) if e["type"] == "plan.committed"]
    kube.apply({"apiVersion": "alas.dev/v1alpha1", "kind": "Disruption", "metadata": {"name": name},
                "spec": {"planRun": planrun["metadata"]["name"], "time": 20,
                         "events": [{"kind": "machine_breakdown", "machine": 2, "start": 20, "duration": 15}]}})

    def done() -> dict[str, Any] | None:
        got = kube.json("get", "disruption", name)
        return got if got.get("status", {}).get("phase") in ("Succeeded", "Failed", "Invalid") else None

    disruption = kube.wait_for(f"Disruption {name}", done, timeout=300)
    assert disruption["status"]["phase"] == "Succeeded", disruption["status"]
    after = [e for e in store.events(run_id) if e["type"] == "plan.committed"]
    assert len(after) == len(before) + 1
    assert after[-1]["payload"]["version"] == disruption["status"]["planVersion"]


def test_no_forbidden_in_the_operators_log(planrun: dict[str, Any], kube: Kube) -> None:
    # The operator logs only what went wrong (a quiet log is a healthy one); RBAC refusals would be here.
    logs = kube("logs", "-l", "app.kubernetes.io/component=operator", "--tail=-1").stdout
    assert "Forbidden" not in logs and "forbidden" not in logs, logs[-2000:]


def test_the_api_server_takes_every_shipped_example_and_refuses_an_unknown_scenario_or_a_repeat(kube: Kube) -> None:
    """The examples the chart's README applies pass the installed CRDs' schemas on the real API server (a
    server-side dry run: nothing is created). planrun-smoke.yaml asked for a 'duration' scenario that no step
    knows until 2026-12-05; the CRD's enum now refuses such a PlanRun at `kubectl apply`."""
    for path in sorted((ROOT / "operators" / "examples").glob("*.yaml")):
        kube("apply", "--dry-run=server", "-f", str(path))
    bad = {"apiVersion": "alas.dev/v1alpha1", "kind": "PlanRun", "metadata": {"name": "e2e-bad-scenario"},
           "spec": {"suite": "smoke", "scenarios": ["none", "duration"]}}
    refused = kube("apply", "--dry-run=server", "-f", "-", stdin=json.dumps(bad), check=False)
    assert refused.returncode != 0 and "duration" in refused.stderr and "Unsupported value" in refused.stderr, \
        refused.stderr
    # A repeated seed ran the same case pods twice; the CRD's list-type set has the server refuse it.
    twice = {**bad, "metadata": {"name": "e2e-seed-twice"}, "spec": {"suite": "smoke", "seeds": [0, 1, 0]}}
    refused = kube("apply", "--dry-run=server", "-f", "-", stdin=json.dumps(twice), check=False)
    assert refused.returncode != 0 and "Duplicate value" in refused.stderr, refused.stderr


def test_a_planrun_for_an_unknown_instance_turns_invalid_and_submits_nothing(kube: Kube) -> None:
    """The operator looks the name up in the catalog its image holds: the PlanRun is Invalid, naming it, and
    no workflow is created (before 2026-12-05 the workflow ran and its pods failed on the name)."""
    name = f"e2e-bad-{int(time.time()) % 100000}"
    kube.apply({"apiVersion": "alas.dev/v1alpha1", "kind": "PlanRun", "metadata": {"name": name},
                "spec": {"instance": "nope99", "planner": "heuristic"}})
    try:
        def judged() -> dict[str, Any] | None:
            status = kube.json("get", "planrun", name).get("status") or {}
            return status if status.get("phase") else None

        status = kube.wait_for(f"PlanRun {name} to be judged", judged, timeout=120)
        assert status["phase"] == "Invalid" and "unknown instance 'nope99'" in status["message"], status
        assert not status.get("workflow"), status
    finally:
        kube("delete", "planrun", name, "--wait=false", check=False)
