"""Layer 1: the blueprint — the run as one canonical IR workflow, validated before anything runs.

Shape (one disruption shown; a sequence repeats the last four nodes per disruption)::

    blueprint -> agents -> propose (map over jobs) -> merge -> check_plan (loop) -> optimize -> inject
      -> check_optimized (loop) -> commit_v1 -> disrupt_1 -> repair_1 -> recheck_1 (loop) -> commit_1 -> finish
"""

from __future__ import annotations

from typing import Any

from alas_argo.ir import (
    Backoff,
    Condition,
    Idempotency,
    Loop,
    LoopGuard,
    Node,
    Policy,
    RepairSpec,
    Retry,
    Workflow,
    ensure_valid,
)
from alas_argo.pipeline.config import RunConfig

__all__ = ["build_workflow"]

_PLAN_OUT: dict[str, Any] = {"type": "object", "required": ["plan", "makespan"],
                             "properties": {"plan": {"type": "object"}, "makespan": {"type": "integer"}}}
_CHECK_OUT: dict[str, Any] = {"type": "object", "required": ["valid", "plan"],
                              "properties": {"valid": {"type": "boolean"}, "plan": {"type": "object"}}}
_ANY_OUT: dict[str, Any] = {"type": "object"}
_COMMIT_OUT: dict[str, Any] = {"type": "object", "required": ["version"],
                               "properties": {"version": {"type": "integer", "minimum": 1}}}


#: Every node's output is recorded under this key once it succeeds, so a resumed run continues after its
#: last finished node from the recorded outputs: no agent, optimizer or repair runs twice.
_RECORDED = Idempotency(key="{run}:{node}")


def _policies(config: RunConfig) -> dict[str, Policy]:
    return {
        # Agents may fail transiently (an LLM endpoint); a definitive failure rolls the run back.
        "agent": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="exponential", initial=0.2, max=2.0,
                                                                    jitter=0.5)),
                        timeout=config.agent_timeout, idempotency=_RECORDED),
        "step": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=0.1)), idempotency=_RECORDED),
        # The revalidation loop: validate -> repair -> validate until valid or the guard trips.
        "revalidate": Policy(loop_guard=LoopGuard(max_iters=config.max_revalidations), idempotency=_RECORDED),
        # Commits are idempotent per run and node, so a resumed run never commits a version twice.
        "commit": Policy(idempotency=_RECORDED, on_failure="rollback"),
        "repair": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=0.1)),
                         on_failure="retry", idempotency=_RECORDED),
    }


def _check(node_id: str, after_role: str, **params: Any) -> Node:
    return Node(id=node_id, role="revalidate", policy_ref="revalidate", output=_CHECK_OUT,
                description=f"Validate the {after_role} plan; patch and revalidate until valid.",
                loop=Loop(until=Condition(path="output.valid", op="truthy")), params=params)


def build_workflow(config: RunConfig, *, disruptions: int = 0) -> Workflow:
    """The ALAS workflow for ``config`` with ``disruptions`` disruptions revealed in sequence.

    Raises:
        WorkflowError: the blueprint fails IR validation (it is rejected, never run).
    """
    nodes = [
        Node(id="blueprint", role="blueprint", policy_ref="step", description="Load the instance; list the jobs.",
             output={"type": "object", "required": ["jobs"], "properties": {"jobs": {"type": "array"}}}),
        Node(id="agents", role="agents", policy_ref="step", output=_ANY_OUT,
             description="Instantiate every role from the registry."),
        Node(id="propose", kind="map", role="job_agent", items="blueprint.jobs", policy_ref="agent",
             max_concurrency=config.workers, description="One job agent per job proposes its operations.",
             output={"type": "object", "required": ["job", "operations"]}),
        Node(id="merge", role="supervisor", policy_ref="step", output=_PLAN_OUT,
             description="The supervisor merges the proposals into one plan."),
        _check("check_plan", "merged", source="merge"),
        Node(id="optimize", role="optimizer", policy_ref="step", output=_PLAN_OUT,
             description="Improve the valid plan (never worse)."),
        Node(id="inject", role="inject", policy_ref="step", output=_PLAN_OUT,
             description="Inject structural faults into the plan (ablation only; otherwise a pass-through)."),
        _check("check_optimized", "optimized", source="inject"),
        Node(id="commit_v1", role="commit", policy_ref="commit", side_effect="write", compensation="retract_v1",
             output=_COMMIT_OUT, params={"source": "check_optimized", "reason": "baseline"},
             description="Commit the baseline as plan version 1."),
        Node(id="retract_v1", role="retract", output=_ANY_OUT,
             description="Compensation: mark the baseline commit as rolled back."),
    ]
    edges = [("blueprint", "agents"), ("blueprint", "propose"), ("agents", "propose"), ("propose", "merge"),
             ("merge", "check_plan"), ("check_plan", "optimize"), ("optimize", "inject"), ("inject", "check_optimized"),
             ("check_optimized", "commit_v1")]
    last = "commit_v1"
    for k in range(1, disruptions + 1):
        nodes += [
            Node(id=f"disrupt_{k}", role="disrupt", policy_ref="step", params={"index": k, "plan_from": last},
                 output={"type": "object", "required": ["disruption"]},
                 description=f"Reveal disruption {k} against the plan in force."),
            Node(id=f"repair_{k}", role="repairer", policy_ref="repair", output=_PLAN_OUT,
                 params={"index": k, "plan_from": last},
                 repair=RepairSpec(patch="repair_patch", replan="replan"),
                 description="Localized cascading repair (escalates to patch, then to a global re-solve)."),
            _check(f"recheck_{k}", "repaired", source=f"repair_{k}", disruption=f"disrupt_{k}", plan_from=last),
            Node(id=f"commit_{k + 1}", role="commit", policy_ref="commit", side_effect="write",
                 compensation=f"retract_{k + 1}", output=_COMMIT_OUT,
                 params={"source": f"recheck_{k}", "reason": f"repair of disruption {k}"},
                 description="Supervise: commit the best valid repaired plan as a new version."),
            Node(id=f"retract_{k + 1}", role="retract", output=_ANY_OUT,
                 description="Compensation of the repaired commit."),
        ]
        edges += [(last, f"disrupt_{k}"), (f"disrupt_{k}", f"repair_{k}"), (f"repair_{k}", f"recheck_{k}"),
                  (f"recheck_{k}", f"commit_{k + 1}")]
        last = f"commit_{k + 1}"
    nodes.append(Node(id="finish", role="finish", output=_ANY_OUT, description="Summarize the run."))
    edges.append((last, "finish"))
    workflow = Workflow(
        name="alas-plan-and-repair",
        nodes=nodes,
        edges=[{"source": a, "target": b} for a, b in edges],
        policies=_policies(config),
        meta={"instance": config.instance, "planner": config.planner, "variant": str(config.variant)},
    )
    return ensure_valid(workflow, require_output_contracts=True)
