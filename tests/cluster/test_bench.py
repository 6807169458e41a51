"""`alas-bench` on the real engine: one pod per case, then the aggregation's summary."""

from __future__ import annotations

import json
import time

import pytest

from alas_argo.jssp.catalog import suite
from tests.cluster.conftest import Argo, record_figure

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]


def test_the_bench_fans_out_one_pod_per_case_and_aggregates(argo: Argo) -> None:
    scenarios, seeds = ["none", "breakdown"], [0, 1]
    workflow = argo.submit("alas-bench", {
        "run-id": f"e2e-bench-{int(time.time())}", "suite": "smoke", "planner": "heuristic",
        "scenarios": json.dumps(scenarios), "seeds": json.dumps(seeds)})
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
    nodes = workflow["status"]["nodes"].values()
    cases = [n for n in nodes if n.get("type") == "Pod" and n["phase"] == "Succeeded"
             and n.get("templateName") == "run-case-item"]
    expected = len(suite("smoke")) * len(scenarios) * len(seeds)
    assert len(cases) == expected
    outputs = workflow["status"].get("outputs", {}).get("parameters", [])
    summary = json.loads(next(p["value"] for p in outputs if p["name"] == "summary"))
    assert summary["cases"] == expected and summary["valid"] == expected, summary
    record_figure("alas_bench", {"cases": expected, "pods": sum(1 for n in nodes if n.get("type") == "Pod")})
