"""The one pipeline definition (alas_argo/workflows/plan.py), edge by edge: the policy values of each engine, the
local shape's knobs reaching their nodes, the gate of a segment and a segment's nodes and edges with and without
the plan it starts from. Written against the survivors of a mutation run (bench/README.md, "Mutation testing"):
the cluster side is pinned by the rendered goldens, but ``alas run``'s policies (its retries, the agents' timeout,
the revalidation guard) and the shape's parameters other than the defaults were read by no test.
"""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.ir import Condition, Workflow
from alas_argo.workflows.plan import (
    INPUT_ENUMS,
    INPUTS,
    MAX_DISRUPTIONS,
    Engine,
    Shape,
    build,
    disruption_segment,
    gate,
    pipeline,
    policies,
)

RECORDED = {"key": "{run}:{node}"}


def _policies(shape: Shape) -> dict[str, dict[str, Any]]:
    return {name: p.model_dump(mode="json", exclude_defaults=True) for name, p in policies(shape).items()}


def test_local_policies_are_thread_level_and_every_output_is_recorded() -> None:
    """``alas run``: agents retried 3 times (exponential from 0.2 s, capped at 2 s, half jittered) within the
    shape's timeout, steps and repairs twice 0.1 s apart, the revalidation loop guarded by the shape's count,
    every node's output recorded once per run and node, a failed commit rolled back, the undo tried once."""
    fixed = {"max_attempts": 2, "backoff": {"kind": "fixed", "initial": 0.1}}
    assert _policies(Shape(agent_timeout=7.5, max_revalidations=5)) == {
        "agent": {"retry": {"max_attempts": 3, "backoff": {"initial": 0.2, "max": 2.0, "jitter": 0.5}},
                  "timeout": 7.5, "idempotency": RECORDED},
        "step": {"retry": fixed, "idempotency": RECORDED},
        "revalidate": {"idempotency": RECORDED, "loop_guard": {"max_iters": 5}},
        "commit": {"idempotency": RECORDED}, "baseline-commit": {"idempotency": RECORDED},
        "repair": {"retry": fixed, "idempotency": RECORDED, "on_failure": "retry"},
        "compensation": {},
    }
    commit = policies(Shape())["commit"]
    assert commit.on_failure == "rollback" and commit.retry.max_attempts == 1


def test_cluster_policies_are_pod_level_and_only_the_baseline_is_once_per_run() -> None:
    """Argo: capped exponential retries (factor 2) and pod deadlines; the guard of the revalidation loop follows
    the shape (the goldens render only the default 3); the exit handler's undo is tried 4 times."""
    step = {"retry": {"max_attempts": 3, "backoff": {"initial": 2.0, "max": 30.0}}, "timeout": 600.0}
    got = _policies(Shape(engine=Engine.CLUSTER, max_revalidations=5, agent_timeout=7.5))
    assert got == {
        "agent": {"retry": {"max_attempts": 3, "backoff": {"max": 20.0}}, "timeout": 300.0},
        "step": step, "commit": step,
        "revalidate": {"retry": {"max_attempts": 3, "backoff": {"initial": 2.0, "max": 30.0}}, "timeout": 1200.0,
                       "loop_guard": {"max_iters": 5, "deadline": 1200.0}},
        "baseline-commit": {**step, "idempotency": {"key": "{run}-{node}"}},
        "repair": {"retry": {"max_attempts": 3, "backoff": {"initial": 2.0, "max": 30.0}}, "timeout": 1200.0,
                   "on_failure": "retry"},
        "compensation": {"retry": {"max_attempts": 4, "backoff": {"initial": 2.0}, "retry_on": ["TransientError"]}},
    }
    assert {p.retry.backoff.factor for p in policies(Shape(engine=Engine.CLUSTER)).values()} == {2.0}


def test_the_local_definition_is_alas_plans_with_thread_level_policies() -> None:
    """Same nodes (every field, gates included) and edges as the rendered ``alas-plan``; only the policies, the
    Argo parameters (meta) and the shape's knobs differ."""
    local = pipeline(Shape(disruptions=MAX_DISRUPTIONS))
    cluster = build()
    assert local.nodes == cluster.nodes and local.edges == cluster.edges and local.name == cluster.name == "alas-plan"
    assert local.description == cluster.description and local.policies != cluster.policies
    assert local.meta == {}
    assert cluster.meta == {"inputs": INPUTS, "input_enums": {"disruptions": ["0", "1", "2", "3"]}}
    assert cluster.meta["inputs"] is not INPUTS and cluster.meta["input_enums"] == INPUT_ENUMS


def test_the_shapes_knobs_reach_their_nodes() -> None:
    wf = pipeline(Shape(job_concurrency=3, name="mine", disruptions=0))
    assert wf.name == "mine"
    propose = wf.node("propose")
    assert (propose.kind, propose.items, propose.max_concurrency, propose.policy_ref) == (
        "map", "blueprint.jobs", 3, "agent")
    # plan only: the baseline's commit hands straight on to finish, nothing gated
    assert [(e.source, e.target) for e in wf.edges][-2:] == [("check_optimized", "commit_v1"), ("commit_v1", "finish")]
    assert not [n.id for n in wf.nodes if n.when is not None or n.id.startswith("disrupt_")]
    assert [n.id for n in wf.nodes][-1] == "finish"


def test_a_gate_asks_for_at_least_k_revealed_disruptions() -> None:
    assert gate(2) == Condition(path="blueprint.revealed", op="ge", value=2)


def _segment(nodes: list[Any]) -> list[tuple[str, str | None, dict[str, Any], str | None]]:
    return [(n.id, n.role, n.params, n.policy_ref) for n in nodes]


@pytest.mark.parametrize("plan_from", ["commit_v1", None])
def test_a_segment_reveals_repairs_rechecks_and_commits(plan_from: str | None) -> None:
    """With ``plan_from`` the segment starts after that commit and every step reads its plan; without it (as
    ``alas-repair`` has it) the plan in force in the run's log, and no edge comes in."""
    nodes, edges, commit = disruption_segment(2, plan_from)
    origin = {"plan_from": plan_from} if plan_from else {}
    assert commit == "commit_3"
    assert _segment(nodes) == [
        ("disrupt_2", "disrupt", {"index": 2, **origin}, "step"),
        ("repair_2", "repairer", {"index": 2, **origin}, "repair"),
        ("recheck_2", "revalidate", {"source": "repair_2", "disruption": "disrupt_2", **origin}, "revalidate"),
        ("commit_3", "commit", {"source": "recheck_2", "reason": "repair of disruption 2"}, "commit"),
        ("retract_3", "retract", {}, "compensation"),
    ]
    assert edges == ([(plan_from, "disrupt_2")] if plan_from else []) + [
        ("disrupt_2", "repair_2"), ("repair_2", "recheck_2"), ("recheck_2", "commit_3")]
    repair = nodes[1].repair
    assert repair is not None and (repair.patch, repair.replan) == ("repair_patch", "replan")
    assert (nodes[3].side_effect, nodes[3].compensation) == ("write", "retract_3")
    assert nodes[2].loop is not None and nodes[2].loop.until == Condition(path="output.valid", op="truthy")
    assert all(n.when is None for n in nodes)


def test_a_gated_segment_gates_all_but_its_compensation() -> None:
    nodes, _, _ = disruption_segment(3, "commit_3", gated=True)
    assert [(n.id, n.when) for n in nodes] == [
        ("disrupt_3", gate(3)), ("repair_3", gate(3)), ("recheck_3", gate(3)), ("commit_4", gate(3)),
        ("retract_4", None)]


def test_build_is_the_cluster_shape_with_every_segment() -> None:
    wf: Workflow = build()
    assert [n.id for n in wf.nodes if n.id.startswith("disrupt_")] == ["disrupt_1", "disrupt_2", "disrupt_3"]
    assert wf.policies == policies(Shape(engine=Engine.CLUSTER))
    assert ("commit_4", "finish") in [(e.source, e.target) for e in wf.edges]
