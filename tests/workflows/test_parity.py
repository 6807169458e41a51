"""One IR, two engines, one result: the same inputs run by the local runtime (`alas run`) and walked through
the rendered `alas-plan` WorkflowTemplate as Argo would run it commit identical plan versions and the same
sequence of domain events (tests/parity.py says what is compared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.pipeline import RunConfig, run_pipeline
from alas_argo.pipeline.parameters import parameters_for
from tests.parity import trace
from tests.workflows.argo_walker import Walker

GOLDEN = Path(__file__).resolve().parents[2] / "workflows" / "argo" / "alas-plan.yaml"

# A local run and a walk of ~16 pods per case: 3-12 s measured on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(120)

#: Three instances, both planners, two disruption kinds, two seeds. One CP-SAT worker, as in a pod (with
#: deterministic solves the plans do not depend on it; the events record it).
CASES = [
    RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=0, time_limit=2, repair_budget=2,
              workers=1),
    RunConfig(instance="la01", planner="heuristic", disrupt="shock", seed=1, time_limit=2, repair_budget=2,
              workers=1),
    RunConfig(instance="ft10", planner="cpsat", disrupt="breakdown", seed=2, time_limit=2, repair_budget=2,
              workers=1),
]


def _both(config: RunConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ExecutionLog, ExecutionLog,
                                                                                       Any]:
    local = ExecutionLog(FsStore(tmp_path / "local"), "parity")
    assert run_pipeline(config, local).succeeded
    # The pods read the store from the environment the chart gives them; here a directory.
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path / "argo"))
    doc = yaml.safe_load(GOLDEN.read_text())
    walk = Walker(doc, main, name="alas-plan-parity", arguments=parameters_for(config, run_id="parity")).run()
    return local, ExecutionLog(FsStore(tmp_path / "argo"), "parity"), walk


@pytest.mark.parametrize("config", CASES, ids=lambda c: f"{c.instance}-{c.planner}-{c.disrupt}-{c.seed}")
def test_local_and_argo_commit_the_same_versions_and_events(config: RunConfig, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    local, argo, walk = _both(config, tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert local.versions() == argo.versions() == [1, 2]
    for version in local.versions():
        assert local.plan(version) == argo.plan(version), f"v{version} differs"
    local_trace = trace(e.to_json() for e in local.events())
    assert [e["type"] for e in local_trace][:1] == ["plan.proposed"] and len(local_trace) >= 10
    assert trace(e.to_json() for e in argo.events()) == local_trace
    assert argo.verify().ok and local.verify().ok


def test_every_pipeline_node_is_a_step_on_argo() -> None:
    """The pipeline `alas run` executes (one disruption) and alas-plan have the same nodes: each a template."""
    from alas_argo.pipeline import build_workflow

    local = build_workflow(CASES[0], disruptions=1)
    templates = {t["name"] for t in yaml.safe_load(GOLDEN.read_text())["spec"]["templates"]}
    assert {n.id.replace("_", "-") for n in local.nodes} <= templates
    from alas_argo.workflows import WORKFLOWS

    cluster = WORKFLOWS["alas-plan"]()
    assert [(n.id, n.role, n.kind, n.params) for n in cluster.nodes] == [
        (n.id, n.role, n.kind, n.params) for n in local.nodes]
    assert cluster.edges == local.edges


def test_the_escalation_ladder_climbs_the_same_way_on_both_engines(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """LCRP fails for good: both engines escalate retry -> patch, commit the patched repair, and log the same."""
    from alas_argo.errors import InfeasibleError
    from alas_argo.pipeline.stages import Stages

    def infeasible(self: Stages, ctx: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        raise InfeasibleError("no repair fits", where={"machine": 2})

    monkeypatch.setattr(Stages, "repairer", infeasible)
    local, argo, walk = _both(CASES[0], tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert [p.exit_code for p in walk.pods if p.template == "repair-1"] == [0]  # the patch ran in the same pod
    assert local.versions() == argo.versions() == [1, 2]
    assert local.plan(2) == argo.plan(2)
    local_trace = trace(e.to_json() for e in local.events())
    assert [e["payload"]["to"] for e in local_trace if e["type"] == "recovery.escalated"] == ["patch"]
    assert trace(e.to_json() for e in argo.events()) == local_trace
