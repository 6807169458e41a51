"""`alas-bench` on the real engine: one pod per case, then the aggregation's summary."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from alas_argo.jssp.catalog import suite
from tests.cluster.conftest import Argo, Store, record_figure

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]


def test_the_bench_fans_out_one_pod_per_case_and_aggregates(argo: Argo, store: Store, tmp_path: Path) -> None:
    scenarios, seeds = ["none", "breakdown"], [0, 1]
    run_id = f"e2e-bench-{int(time.time())}"
    workflow = argo.submit("alas-bench", {
        "run-id": run_id, "suite": "smoke", "planner": "heuristic",
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
    # The per-case table, read back from the case pods' runs in MinIO: the same cases, each valid.
    report = json.loads(store.alas("bench", "report", run_id, "--store", "s3", "--json", "--out",
                                   str(tmp_path / "report")).stdout)
    assert len(report["rows"]) == expected and all(r["final_valid"] for r in report["rows"]), report["summary"]
    assert {(r["scenario"], r["seed"]) for r in report["rows"]} == {(s, k) for s in scenarios for k in seeds}
    mean = sum(r["makespan_after"] for r in report["rows"]) / expected
    assert mean == pytest.approx(summary["mean_makespan"], abs=0.01)
    record_figure("alas_bench", {"cases": expected, "pods": sum(1 for n in nodes if n.get("type") == "Pod")})
