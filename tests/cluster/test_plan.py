"""The quickstart's `argo submit --from workflowtemplate/alas-plan` on the real engine: one job-agent pod per
job, never more at once than the template's parallelism, v1 and the repaired v2 committed to MinIO, the log
intact and the final plan valid."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from alas_argo.jssp.catalog import get_instance
from tests.cluster.conftest import Argo, Kube, Store, record_figure

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]

INSTANCE = "ta01"  # 15 jobs x 15 machines


def _time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def pod_nodes(workflow: dict[str, Any], template: str) -> list[dict[str, Any]]:
    return [n for n in workflow["status"]["nodes"].values()
            if n.get("type") == "Pod" and n.get("templateName") == template]


def max_concurrent(nodes: list[dict[str, Any]]) -> int:
    """Most pods alive at once; at equal timestamps (1 s resolution) a finish counts before a start."""
    events = []
    for node in nodes:
        events.append((_time(node["startedAt"]), 1))
        events.append((_time(node["finishedAt"]), -1))
    alive = peak = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        alive += delta
        peak = max(peak, alive)
    return peak


def template_parallelism(kube: Kube, name: str, template: str) -> int:
    spec = kube.json("get", "workflowtemplate", name)["spec"]
    return int(next(t for t in spec["templates"] if t["name"] == template)["parallelism"])


@pytest.fixture(scope="module")
def planned(argo: Argo) -> dict[str, Any]:
    run_id = f"e2e-plan-{int(time.time())}"
    started = time.monotonic()
    workflow = argo.submit("alas-plan", {"run-id": run_id, "instance": INSTANCE, "planner": "heuristic"})
    workflow["_seconds"] = time.monotonic() - started
    workflow["_run_id"] = run_id
    return workflow


def test_the_workflow_succeeds(planned: dict[str, Any]) -> None:
    assert planned["status"]["phase"] == "Succeeded", planned["status"].get("message")
    record_figure("alas_plan", {"seconds": round(planned["_seconds"], 1),
                            "pods": sum(1 for n in planned["status"]["nodes"].values() if n.get("type") == "Pod")})


def test_one_job_agent_pod_per_job_within_the_parallelism_bound(planned: dict[str, Any], kube: Kube) -> None:
    jobs = len(get_instance(INSTANCE).jobs)
    agents = pod_nodes(planned, "propose-item")
    succeeded = [n for n in agents if n["phase"] == "Succeeded"]
    assert len(succeeded) == jobs
    # Each job's item appears once among the successes (no job planned twice, none left out).
    assert len({json.dumps(n.get("inputs", {}).get("parameters", [])) for n in succeeded}) == jobs
    bound = template_parallelism(kube, "alas-plan", "propose")
    assert 1 < max_concurrent(agents) <= bound


def test_v1_and_the_repaired_v2_are_committed_and_the_log_verifies(planned: dict[str, Any], store: Store) -> None:
    run_id = planned["_run_id"]
    committed = [e for e in store.events(run_id) if e["type"] == "plan.committed"]
    versions = [e["payload"]["version"] for e in committed]
    assert versions[:2] == [1, 2], versions
    verified = json.loads(store.alas("log", "verify", run_id, "--store", "s3", "--json").stdout)
    assert verified["ok"] is True and verified["problems"] == [], verified
    assert verified["versions"] >= 2


def test_the_final_plan_validates(planned: dict[str, Any], store: Store, tmp_path: Path) -> None:
    """The independent validator, run here on the plans read back from MinIO: v2 respects the disruption
    revealed against v1 (started operations kept, nothing on the broken machine during its downtime)."""
    run_id = planned["_run_id"]
    for version in (1, 2):
        shown = store.alas("log", "show", run_id, "--store", "s3", "--version", str(version), "--json")
        (tmp_path / f"v{version}.json").write_text(shown.stdout)
    observed = next(e["payload"] for e in store.events(run_id) if e["type"] == "disruption.observed")
    assert observed["baseline_version"] == 1
    (tmp_path / "d.json").write_text(json.dumps(observed["disruption"]))
    verdict = store.alas("validate", "--instance", INSTANCE, "--schedule", str(tmp_path / "v2.json"),
                         "--disruption", str(tmp_path / "d.json"), "--baseline", str(tmp_path / "v1.json"),
                         "--json", check=False)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert json.loads(verdict.stdout)["valid"] is True


def test_the_validator_catches_injected_faults_on_the_cluster(argo: Argo, store: Store) -> None:
    """Structural faults injected into the supervisor's plan (the ablation's protocol, `faults` parameter) are
    caught by the validator step before any commit, patched, and only a valid plan is committed."""
    run_id = f"e2e-faults-{int(time.time())}"
    workflow = argo.submit("alas-plan", {"run-id": run_id, "instance": "ft06", "planner": "heuristic",
                                         "faults": "5", "scenarios": '["none"]'})
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
    events = store.events(run_id)
    types = [e["type"] for e in events]
    failed = [e for e in events if e["type"] == "validation.failed"]
    assert failed, types
    assert types.index("validation.failed") < types.index("plan.committed")
    codes = {v["code"] for v in failed[0]["payload"]["report"]["violations"]}
    record_figure("validator_on_faults", {"violations": len(failed[0]["payload"]["report"]["violations"]),
                                          "codes": sorted(codes)})
    committed = [e for e in events if e["type"] == "plan.committed"]
    assert len(committed) == 1 and committed[0]["payload"]["meta"]["valid"] is True


def test_the_declared_llm_simulator_plans_on_the_cluster(argo: Argo, store: Store) -> None:
    """`planner=simulated` (the declared stand-in for an LLM endpoint, which this machine lacks) runs through
    the LLM client in the job-agent pods: the run succeeds with a valid plan, and its LLM calls and tokens
    reach the dashboards' LLM panels through the controller (tests/cluster/test_telemetry.py)."""
    run_id = f"e2e-simulated-{int(time.time())}"
    workflow = argo.submit("alas-plan", {"run-id": run_id, "instance": "ft06", "planner": "simulated",
                                         "scenarios": '["none"]'})
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
    committed = [e for e in store.events(run_id) if e["type"] == "plan.committed"]
    assert len(committed) == 1 and committed[0]["payload"]["meta"]["valid"] is True


def test_a_run_planned_on_this_machine_is_repaired_on_the_cluster(argo: Argo, store: Store, tmp_path: Path) -> None:
    """Outgrowing one machine: `alas run --store s3` plans here into the cluster's MinIO, then `alas-repair` on
    Argo repairs that run (its steps find the instance the local run recorded) and commits a valid v2."""
    run_id = f"e2e-local-{int(time.time())}"
    store.alas("run", "ft06", "--planner", "heuristic", "--time-limit", "2", "--store", "s3", "--run-id", run_id,
               "--quiet")
    given = {"time": 10, "events": [{"kind": "machine_breakdown", "machine": 2, "start": 10, "duration": 15}]}
    workflow = argo.submit("alas-repair", {"run-id": run_id, "disruption": json.dumps(given), "time-limit": "2"})
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
    commits = [e["payload"]["version"] for e in store.events(run_id) if e["type"] == "plan.committed"]
    assert commits == [1, 2], commits
    store.alas("log", "verify", run_id, "--store", "s3")
    for version in (1, 2):
        shown = store.alas("log", "show", run_id, "--store", "s3", "--version", str(version), "--json")
        (tmp_path / f"v{version}.json").write_text(shown.stdout)
    (tmp_path / "d.json").write_text(json.dumps(given))
    verdict = store.alas("validate", "--instance", "ft06", "--schedule", str(tmp_path / "v2.json"),
                         "--disruption", str(tmp_path / "d.json"), "--baseline", str(tmp_path / "v1.json"),
                         "--json", check=False)
    assert verdict.returncode == 0, verdict.stdout + verdict.stderr
    assert json.loads(verdict.stdout)["valid"] is True
