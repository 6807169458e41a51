"""One IR, two engines, one result, on the real engine: `alas run` (the local runtime, here in the test
process) and `argo submit --from workflowtemplate/alas-plan` with the same parameters commit identical plan
versions and the same sequence of domain events (tests/parity.py), for three instances, and for a sequence of two
disruptions (alas-plan's parameter ``disruptions``).

Figures go to $ALAS_CLUSTER_HOME/figures.json as ``parity`` (what the closing note of issue 19 quotes).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from alas_argo.log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.pipeline import RunConfig, run_pipeline
from alas_argo.pipeline.parameters import parameters_for
from alas_argo.workflows.plan import MAX_DISRUPTIONS
from tests.cluster.conftest import Argo, Store, record_figure
from tests.parity import trace

# Four plan workflows of ~20-30 pods each (alas-plan has three disruption segments; those a run does not use are
# Skipped by their `when`, no pod), one after another: a few minutes each on the kind cluster.
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1800)]

#: As tests/workflows/test_parity.py: three instances, both planners, two disruption kinds (one worker, as a pod).
CASES = [
    RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=0, time_limit=2, repair_budget=2,
              workers=1),
    RunConfig(instance="la01", planner="heuristic", disrupt="shock", seed=1, time_limit=2, repair_budget=2,
              workers=1),
    RunConfig(instance="ta01", planner="cpsat", disrupt="breakdown", seed=2, time_limit=5, repair_budget=5,
              workers=1),
    # Two disruptions revealed in sequence, each against the version the one before committed.
    RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", disruptions=2, seed=3, time_limit=2,
              repair_budget=2, workers=1),
    # LCRP's knobs as workflow parameters: allowed 2 % of makespan, this repair moves none of the 13 operations
    # it moves without (tests/pipeline/test_pipeline.py); the pods must repair with them to agree.
    RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, time_limit=2, repair_budget=2,
              repair_effort=2, repair_tolerance=0.02, workers=1),
]


def _case(c: RunConfig) -> str:
    knobs = f"-effort{c.repair_effort:g}-tol{c.repair_tolerance:g}" if c.repair_tolerance else ""
    return (f"{c.instance}-{c.planner}-{c.disrupt}-{c.seed}" + (f"-x{c.disruptions}" if c.disruptions > 1 else "")
            + knobs)

_RESULTS: dict[str, Any] = {}


@pytest.mark.parametrize("config", CASES, ids=_case)
def test_alas_run_and_alas_plan_on_argo_agree(config: RunConfig, argo: Argo, store: Store, tmp_path: Path) -> None:
    run_id = f"e2e-parity-{config.instance}-{int(time.time())}"
    local = ExecutionLog(FsStore(tmp_path / "local"), run_id)
    assert run_pipeline(config, local).succeeded
    workflow = argo.submit("alas-plan", parameters_for(config, run_id=run_id))
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")

    events = store.events(run_id)
    versions = [e["payload"]["version"] for e in events if e["type"] == "plan.committed"]
    assert versions == local.versions() == list(range(1, config.disruptions + 2))
    same_plans = []
    for version in versions:
        shown = store.alas("log", "show", run_id, "--store", "s3", "--version", str(version), "--json")
        same_plans.append(json.loads(shown.stdout) == local.plan(version))
    local_trace, argo_trace = trace(e.to_json() for e in local.events()), trace(events)
    key = config.instance if config.disruptions == 1 and not config.repair_tolerance else _case(config)
    # The segments after the run's last disruption are Skipped by their gates: no pod.
    nodes = list((workflow["status"].get("nodes") or {}).values())
    phases = {n.get("displayName"): n.get("phase") for n in nodes}
    _RESULTS[key] = {"versions": len(versions), "identical_plans": sum(same_plans),
                     "domain_events": len(local_trace), "same_events": argo_trace == local_trace,
                     "pods": sum(1 for n in nodes if n.get("type") == "Pod")}
    record_figure("parity", _RESULTS)
    assert all(same_plans), same_plans
    assert argo_trace == local_trace
    repairs = [e["payload"] for e in events if e["type"] == "repair.finished"]
    assert {(p["effort"], p["tolerance"]) for p in repairs} == {(config.repair_effort, config.repair_tolerance)}
    for k in range(config.disruptions + 1, MAX_DISRUPTIONS + 1):
        assert {phases.get(f"{t}-{k}") for t in ("disrupt", "repair", "recheck")} == {"Skipped"}, phases
        assert phases.get(f"commit-{k + 1}") == "Skipped", phases
