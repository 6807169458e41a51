"""Hand-built IR workflows that exercise every row of the conformance matrix."""

from __future__ import annotations

from alas_argo.ir import (
    Backoff,
    Branch,
    Catch,
    Condition,
    Edge,
    Idempotency,
    Loop,
    LoopGuard,
    Node,
    Policy,
    RepairSpec,
    Retry,
    Workflow,
)

__all__ = ["kitchen_sink", "minimal", "with_node"]


def kitchen_sink() -> Workflow:
    """Choice + any_of join, parallel, two maps, a loop, a catch, two compensated side effects."""
    return Workflow(
        name="kitchen-sink", version=3, description="every feature both engines express",
        nodes=[
            Node(id="blueprint", role="blueprint", params={"instance": "ft06", "n": 3}, policy_ref="io",
                 output={"type": "object", "required": ["jobs"]}),
            Node(id="agents", kind="map", role="job_agent", items="blueprint.jobs", max_concurrency=4,
                 policy_ref="agents"),
            Node(id="bench", kind="map", role="bench-case", items="inputs.cases", policy_ref="io"),
            Node(id="route", kind="choice", choices=[
                Branch(when=Condition(path="agents.count", op="gt", value=2), next="big"),
                Branch(when=Condition(path="inputs.mode", op="in", value=["fast", "quick"]), next="fast")],
                default="small"),
            Node(id="big", role="solve", params={"limit": 2.5}),
            Node(id="fast", role="solve", params={"limit": 1}),
            Node(id="small", role="solve"),
            Node(id="merged", role="supervisor", join="any_of", policy_ref="loop",
                 loop=Loop(until=Condition(path="output.valid", op="truthy")),
                 repair=RepairSpec(patch="repairer", replan="optimizer", max_patches=2)),
            Node(id="check_a", role="validator"),
            Node(id="check_b", role="validator", input={"type": "object"}),
            Node(id="checks", kind="parallel", branches=["check_a", "check_b"], policy_ref="fragile"),
            Node(id="commit", role="commit", side_effect="write", compensation="uncommit", policy_ref="commit"),
            Node(id="publish", role="publish", side_effect="external", compensation="unpublish"),
            Node(id="handler", role="report"),
            Node(id="uncommit", role="revert-plan", params={"reason": "rollback"}),
            Node(id="unpublish", role="retract"),
        ],
        edges=[Edge(source="blueprint", target="agents"), Edge(source="agents", target="route"),
               Edge(source="big", target="merged"), Edge(source="fast", target="merged"),
               Edge(source="small", target="merged"), Edge(source="merged", target="checks"),
               Edge(source="checks", target="commit"), Edge(source="bench", target="commit"),
               Edge(source="commit", target="publish")],
        policies={
            "io": Policy(retry=Retry(max_attempts=4, backoff=Backoff(kind="exponential", initial=1, max=30,
                                                                      factor=3.0, jitter=1.0)),
                         timeout=60, idempotency=Idempotency(key="{run}-{node}")),
            "agents": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="linear", initial=0.25, jitter=0.4),
                                         retry_on=["TransientError", "ContractError"]), timeout=2.5),
            "loop": Policy(loop_guard=LoopGuard(max_iters=5, deadline=120), on_failure="retry"),
            "fragile": Policy(catch=[Catch(errors=["ContractError", "Timeout"], next="handler")],
                              on_failure="stop"),
            "commit": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=2), retry_on=["*"]),
                             idempotency=Idempotency(key="{run}-commit-{inputs.instance}")),
            "unused": Policy(on_failure="skip", timeout=5),
        },
        schemas={"plan": {"type": "object"}}, log_schemas={"plan.committed": {"type": "object"}},
        meta={"inputs": {"cases": "[1,2]", "mode": "fast", "instance": "ft06"}, "owner": "tests"},
    )


def minimal() -> Workflow:
    """One task node."""
    return Workflow(name="minimal", nodes=[Node(id="only", role="blueprint")])


def with_node(node: Node, *, policy: Policy | None = None, extra: list[Node] | None = None,
              edges: list[Edge] | None = None) -> Workflow:
    """A small workflow around one node (and its helpers) for a matrix row."""
    policies = {"p": policy} if policy is not None else {}
    if policy is not None:
        node = node.model_copy(update={"policy_ref": "p"})
    return Workflow(name="row", nodes=[Node(id="start", role="blueprint"), node, *(extra or [])],
                    edges=edges if edges is not None else [Edge(source="start", target=node.id)],
                    policies=policies, meta={"inputs": {"items": "[1]"}})
