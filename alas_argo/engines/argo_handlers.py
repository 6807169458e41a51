"""The templates of a compiled Argo workflow that are no IR node: the ``onExit`` handler that compensates a
failed workflow's commits, and the pod-less step that hands a map's item keys on as one list."""

from __future__ import annotations

from typing import Any

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo_options import ArgoOptions, container
from alas_argo.engines.extras import dumps
from alas_argo.ir import Workflow

__all__ = ["collect_template", "exit_handler"]


def exit_handler(wf: Workflow, opts: ArgoOptions) -> list[dict[str, Any]]:
    """The ``onExit`` DAG and its ``compensate`` step, or nothing when no node has a compensation: when
    ``{{workflow.status}} != Succeeded`` it undoes what this workflow committed, latest first, each once."""
    comps = {n.id: {"node": c, "role": wf.node(c).role, "params": wf.node(c).params}
             for n in wf.nodes if (c := wf.compensation_of(n)) is not None}
    if not comps:
        return []
    args = ["step", nm.COMPENSATE, "--run-id", opts.run_id, "--scope", "{{workflow.name}}",
            "--outputs", nm.OUTPUTS,
            "--compensations", "{{inputs.parameters.compensations}}", "--status", "{{workflow.status}}"]
    return [{"name": nm.EXIT_HANDLER, "dag": {"tasks": [{
                "name": nm.COMPENSATE, "template": nm.COMPENSATE, "when": "{{workflow.status}} != Succeeded",
                "arguments": {"parameters": [{"name": "compensations", "value": dumps(comps)}]}}]}},
            {"name": nm.COMPENSATE, "inputs": {"parameters": [{"name": "compensations"}]},
             "outputs": {"parameters": [{"name": "key", "valueFrom": {"path": f"{nm.OUTPUTS}/key"}}]},
             "retryStrategy": {"limit": "3", "retryPolicy": "Always", "backoff": {"duration": "2s", "factor": 2},
                               "expression": "asInt(lastRetry.exitCode) == 75"},
             "container": container(opts, args)}]


def collect_template() -> dict[str, Any]:
    """The map's collect step: no pod (its one step never runs: a template needs a body), its output is its
    input, the list of the items' keys."""
    return {"name": nm.COLLECT, "inputs": {"parameters": [{"name": "keys"}]},
            "outputs": {"parameters": [{"name": "keys", "valueFrom": {"expression": "inputs.parameters.keys"}}]},
            "steps": [[{"name": "never", "template": nm.COLLECT, "when": "false",
                        "arguments": {"parameters": [{"name": "keys", "value": "[]"}]}}]]}
