"""(a) Plan and repair one instance on the cluster: the WorkflowTemplate ``alas-plan``.

blueprint -> job-agent (one pod per job, withParam, bounded) -> supervise -> controller (validate, patch,
commit v1) -> disrupt -> controller (LCRP repair, revalidate, commit v2). Both commits are saga steps: if
the workflow fails after one, the exit handler retracts it (the version before becomes current again).
Parameters (the operator's contract): run-id, instance, planner, scenarios, seeds, time-limit; the first
scenario and seed pick the disruption (``none`` skips it); ``method`` picks the repair method (lcrp, aor,
right-shift, full, full-stable; time-limit is its budget).
"""

from __future__ import annotations

from typing import Any

from alas_argo.ir import (
    Backoff,
    Condition,
    Edge,
    Idempotency,
    Loop,
    LoopGuard,
    Node,
    Policy,
    Retry,
    Workflow,
    ensure_valid,
)

__all__ = ["COMMIT_ONCE", "INPUTS", "POLICIES", "build"]

#: Workflow parameters and their defaults.
INPUTS = {"run-id": "", "instance": "ta01", "planner": "heuristic", "scenarios": '["breakdown"]', "seeds": "[0]",
          "method": "lcrp",
          "time-limit": "10"}

#: Shared by the three cluster workflows.
POLICIES = {
    # Pods fail transiently (S3 hiccups, evictions): exit 75 is retried with capped exponential backoff.
    "step": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="exponential", initial=2, factor=2, max=30)),
                   timeout=600),
    "agent": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="exponential", initial=1, factor=2, max=20)),
                    timeout=300),
    # validate -> repair -> validate until valid (a retried pod never commits twice: see steps).
    "controller": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="exponential", initial=2, factor=2,
                                                                     max=30)),
                         timeout=1200, loop_guard=LoopGuard(max_iters=4, deadline=1200)),
}

#: The baseline commit happens once per run, whichever workflow object gets there (the step checks the key
#: against the log's idempotency records), so resubmitting a plan run never commits a second baseline.
COMMIT_ONCE = POLICIES["controller"].model_copy(update={"idempotency": Idempotency(key="{run}-{node}")})

_VALID = Loop(until=Condition(path="output.valid", op="truthy"))
_OBJ: dict[str, Any] = {"type": "object"}


def build() -> Workflow:
    """The IR of ``alas-plan``."""
    nodes = [
        Node(id="blueprint", role="blueprint", policy_ref="step", description="Load the instance; list its jobs.",
             output={"type": "object", "required": ["jobs"]}),
        Node(id="job-agents", kind="map", role="job-agent", items="blueprint.jobs", max_concurrency=8,
             policy_ref="agent", output={"type": "object", "required": ["job", "operations"]},
             description="One job agent per job proposes its operations from its bounded context."),
        Node(id="supervise", role="supervise", policy_ref="step", output={"type": "object", "required": ["plan"]},
             description="Merge the proposals into one plan."),
        Node(id="commit-plan", role="controller", policy_ref="commit-once", loop=_VALID, side_effect="write",
             compensation="retract-plan", params={"mode": "commit", "source": "supervise", "reason": "baseline"},
             output=_OBJ, description="Validate the merged plan, patch violations, commit it as v1."),
        Node(id="disrupt", role="disrupt", policy_ref="step", output=_OBJ,
             description="Reveal a disruption against the committed plan."),
        Node(id="repair", role="controller", policy_ref="controller", loop=_VALID, side_effect="write",
             compensation="retract-repair", params={"mode": "repair", "reason": "repair"}, output=_OBJ,
             description="LCRP repair of the disrupted plan, revalidated, committed as a new version."),
        Node(id="retract-plan", role="retract", description="Compensation: retract the baseline commit."),
        Node(id="retract-repair", role="retract", description="Compensation: retract the repaired commit."),
    ]
    edges = [("blueprint", "job-agents"), ("job-agents", "supervise"), ("supervise", "commit-plan"),
             ("commit-plan", "disrupt"), ("disrupt", "repair")]
    return ensure_valid(Workflow(
        name="alas-plan", description="Plan one instance with per-job agents, validate, commit, disrupt, repair.",
        nodes=nodes, edges=[Edge(source=a, target=b) for a, b in edges],
        policies={**POLICIES, "commit-once": COMMIT_ONCE},
        meta={"inputs": dict(INPUTS)}))
