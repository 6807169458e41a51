"""A workflow of the user's own on the real engine: its graph ends as the local runtime ends it. A node failing
for good under a catch route with a chain of dependents (they do not run, and the workflow still succeeds: they
wait on the pod-less task after the caught node; without it Argo v3.6.5 ended this workflow Failed), one under
on_failure skip, a choice's branch not taken with a node after it, and
gates on fields of the blueprint role's output that it does not write as parameters itself (a number, a
string), compiled from the IR and run by Argo's own controller with the image's roles: every node runs, fails or
is skipped as it does locally, and the workflow succeeds as the local run does (tests/workflows/test_graph_parity.py
walks the same rules through a model of Argo; this is Argo itself)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.engines.argo import to_argo
from alas_argo.ir import Workflow
from alas_argo.runtime import NodeContext, NodeState, Runtime
from tests.cluster.conftest import Argo
from tests.runtime.runtime_helpers import workflow

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(900)]

IMAGE = "alas:0.1.0"  # the image `scripts/cluster images` loaded into the node
#: An output contract the blueprint role's answer breaks: its step fails for good (ContractError, exit 2).
BROKEN = {"type": "object", "required": ["no-such-field"]}


def graph() -> Workflow:
    return workflow([
        {"id": "risky", "role": "blueprint", "output": BROKEN, "policyRef": "caught"},
        {"id": "handler", "role": "agents"}, {"id": "after_risky", "role": "agents"},
        {"id": "then", "role": "agents"},
        {"id": "flaky", "role": "blueprint", "output": BROKEN, "policyRef": "skip"},
        {"id": "after_flaky", "role": "agents"},
        {"id": "route", "kind": "choice", "default": "b",
         "choices": [{"when": {"path": "inputs.mode", "op": "eq", "value": "a"}, "next": "a"}]},
        {"id": "a", "role": "agents"}, {"id": "a_next", "role": "agents"}, {"id": "b", "role": "agents"},
        {"id": "bp", "role": "blueprint"},
        {"id": "small", "role": "agents", "when": {"path": "bp.operations", "op": "ge", "value": 30}},
        {"id": "large", "role": "agents", "when": {"path": "bp.operations", "op": "ge", "value": 1000}},
        {"id": "named", "role": "agents", "when": {"path": "bp.instance", "op": "eq", "value": "ft06"}}],
        [("risky", "after_risky"), ("after_risky", "then"), ("flaky", "after_flaky"), ("a", "a_next"),
         ("bp", "small"), ("bp", "large"), ("bp", "named")],
        policies={"caught": {"catch": [{"errors": ["*"], "next": "handler"}]}, "skip": {"onFailure": "skip"}},
        name="e2e-graph", meta={"inputs": {"instance": "ft06", "mode": "b"}})


def _stub(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"by": ctx.node_id, "instance": "ft06", "operations": 36}  # ft06's, as the blueprint role answers


def test_a_users_graph_ends_on_argo_as_it_ends_locally(argo: Argo, tmp_path: Path) -> None:
    wf = graph()
    local = Runtime({"blueprint": _stub, "agents": _stub}).run(wf, {"instance": "ft06", "mode": "b"})
    expected = {n: {NodeState.EXECUTED: "Succeeded", NodeState.FAILED: "Failed"}.get(s, "not run")
                for n, s in local.states.items()}
    assert local.ok and expected == {
        "risky": "Failed", "handler": "Succeeded", "after_risky": "not run", "then": "not run", "flaky": "Failed",
        "after_flaky": "Succeeded", "route": "Succeeded", "a": "not run", "a_next": "not run", "b": "Succeeded",
        "bp": "Succeeded", "small": "Succeeded", "large": "not run", "named": "Succeeded"}

    doc = to_argo(wf, image=IMAGE)
    doc["metadata"] = {"generateName": "e2e-graph-"}
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(doc))
    name = json.loads(argo("submit", str(path), "-o", "json").stdout)["metadata"]["name"]
    started = time.monotonic()
    done = argo.succeeded(name, timeout=600)  # fails naming every node that failed unexpectedly
    phases = {n["displayName"]: n["phase"] for n in done["status"]["nodes"].values()
              if n.get("type") in ("Pod", "Retry", "Skipped", "Omitted")}
    seen = {node: {"Skipped": "not run", "Omitted": "not run"}.get(phases.get(node.replace("_", "-"), "Omitted"),
                                                                     phases.get(node.replace("_", "-")))
            for node in expected}
    assert seen == expected, (phases, time.monotonic() - started)
