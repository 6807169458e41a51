"""Steps pass log keys, never plans: the plan workflow of a 100-job instance (ta71) stays far below etcd's
~1 MB object limit, including the status Argo accumulates for the 100 job-agent pods."""

from __future__ import annotations

import json
from pathlib import Path

from alas_argo.cli import main
from alas_argo.engines.argo import to_argo
from alas_argo.engines.rendering import load_definitions
from alas_argo.engines.submitting import as_submission
from alas_argo.steps import output_key


def test_ta71_plan_workflow_is_far_below_one_megabyte(tmp_path: Path) -> None:
    doc = to_argo(load_definitions()["alas-plan"](), image="alas:0.1.0")
    workflow = as_submission(doc, {"instance": "ta71", "run-id": "ta71-run"}, namespace="alas")
    # The only list that travels through a parameter is the blueprint's job list: run that step for real.
    out = tmp_path / "out"
    assert main(["step", "blueprint", "--run-id", "ta71-run", "--scope", "alas-plan-abcde", "--store", "fs",
                 "--root", str(tmp_path / "log"), "--run-input", "instance=ta71", "--outputs", str(out)]) == 0
    jobs = json.loads((out / "jobs").read_text())
    assert len(jobs) == 100
    # What Argo adds to the object while it runs: one status node per pod with its resolved parameters.
    nodes = {}
    for j in jobs:
        nodes[f"alas-plan-abcde-{j}"] = {
            "name": f"alas-plan-abcde.job-agents.item({j}:{j})", "templateName": "job-agents-item",
            "phase": "Succeeded", "inputs": {"parameters": [
                {"name": "item", "value": str(j)}, {"name": "params", "value": "{}"},
                {"name": "in-blueprint", "value": (out / "key").read_text()}]},
            "outputs": {"parameters": [{"name": "key", "value": output_key("alas-plan-abcde", "job-agents", j)}]}}
    workflow["status"] = {"nodes": nodes}
    size = len(json.dumps(workflow))
    print(f"ta71 plan workflow with 100 pod status nodes: {size} bytes")
    # 131,667 bytes measured with alas-plan's three disruption segments (each adds ~22 KB of templates; one
    # segment gave under 100 KB): an eighth of the limit, for 100 agent pods.
    assert size < 150_000, size
    assert len((out / "jobs").read_text()) < 1_000
