"""The templates of a compiled Argo workflow that are no IR node: the ``onExit`` handler that compensates a
failed workflow's commits."""

from __future__ import annotations

from typing import Any

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo_options import ArgoOptions, container
from alas_argo.engines.argo_policy import deadline, retry_strategy
from alas_argo.engines.extras import dumps
from alas_argo.ir import Backoff, Policy, Retry, Workflow

#: The compensate step's policy: transient failures only (a store outage, its pod stopped), 4 attempts.
_COMPENSATE_RETRY = Policy(retry=Retry(max_attempts=4, backoff=Backoff(initial=2, factor=2),
                                       retry_on=["TransientError"]))

__all__ = ["exit_handler"]


def exit_handler(wf: Workflow, opts: ArgoOptions) -> list[dict[str, Any]]:
    """The ``onExit`` DAG and its ``compensate`` step, or nothing when no node has a compensation: when
    ``{{workflow.status}} != Succeeded`` it undoes what this workflow committed, latest first, each once."""
    comps = {n.id: {"node": c, "role": wf.node(c).role, "params": wf.node(c).params}
             for n in wf.nodes if (c := wf.compensation_of(n)) is not None}
    if not comps:
        return []
    # One pod undoes them all, so the compensations' own timeouts bound it together: the sum of each one's
    # timeout times its attempts, when every one has a timeout (a hung undo is stopped, not waited on).
    policies = [wf.policy_for(wf.node(str(c["node"]))) for c in comps.values()]
    bound = sum(p.timeout * p.retry.max_attempts for p in policies if p.timeout is not None)
    limit = deadline(Policy(timeout=bound)) if all(p.timeout is not None for p in policies) else {}
    args = ["step", nm.COMPENSATE, "--run-id", opts.run_id, "--scope", "{{workflow.name}}",
            "--outputs", nm.OUTPUTS,
            "--compensations", "{{inputs.parameters.compensations}}", "--status", "{{workflow.status}}"]
    return [{"name": nm.EXIT_HANDLER, "dag": {"tasks": [{
                "name": nm.COMPENSATE, "template": nm.COMPENSATE, "when": "{{workflow.status}} != Succeeded",
                "arguments": {"parameters": [{"name": "compensations", "value": dumps(comps)}]}}]}},
            {"name": nm.COMPENSATE, "inputs": {"parameters": [{"name": "compensations"}]},
             "outputs": {"parameters": [{"name": "key", "valueFrom": {"path": f"{nm.OUTPUTS}/key"}}]},
             "retryStrategy": retry_strategy(_COMPENSATE_RETRY), **limit,
             "container": container(opts, args)}]

