"""The templates of a compiled Argo workflow that are no IR node: the ``onExit`` handler that compensates a
failed workflow's commits."""

from __future__ import annotations

from typing import Any

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo_options import ArgoOptions, container
from alas_argo.engines.argo_policy import deadline, retry_strategy
from alas_argo.engines.extras import dumps
from alas_argo.ir import Policy, Retry, Workflow

__all__ = ["exit_handler"]


def _pod_retry(policies: list[Policy]) -> Policy:
    """The one compensate pod's retries: as many attempts as the compensation allowed the most, on any error
    some compensation retries, with that compensation's backoff. The step itself keeps each compensation to its
    own policy (``alas_argo.step_handlers``: attempts counted in the log, errors its ``retry_on`` names)."""
    most = max(policies, key=lambda p: p.retry.max_attempts)
    retry_on = list(dict.fromkeys(e for p in policies if p.retry.max_attempts > 1 for e in p.retry.retry_on))
    return Policy(retry=Retry(max_attempts=most.retry.max_attempts, backoff=most.retry.backoff,
                              retry_on=retry_on or most.retry.retry_on))


def exit_handler(wf: Workflow, opts: ArgoOptions) -> list[dict[str, Any]]:
    """The ``onExit`` DAG and its ``compensate`` step, or nothing when no node has a compensation: when
    ``{{workflow.status}} != Succeeded`` it undoes what this workflow committed, latest first, each once, each
    under its compensation node's policy."""
    comps = {n.id: {"node": c, "role": wf.node(c).role, "params": wf.node(c).params,
                    "retry": {"max_attempts": (r := wf.policy_for(wf.node(c)).retry).max_attempts,
                              "retry_on": r.retry_on}}
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
             **({"retryStrategy": rs} if (rs := retry_strategy(_pod_retry(policies))) is not None else {}), **limit,
             "container": container(opts, args)}]

