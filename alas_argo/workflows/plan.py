"""The ALAS pipeline, defined once: what ``alas run`` executes on the local runtime and what the cluster runs
as the WorkflowTemplate ``alas-plan`` (and, per case, ``alas-bench``; its disruption segment is
``alas-repair``). ASL is compiled from the same IR.

Shape (one disruption shown; a sequence repeats the segment ``disrupt_k .. commit_{k+1}`` per disruption)::

    blueprint -> agents -> propose (map over jobs) -> merge -> check_plan (loop) -> optimize -> inject
      -> check_optimized (loop) -> commit_v1 -> disrupt_1 -> repair_1 -> recheck_1 (loop) -> commit_2 -> finish

Every node is one role (one pod on Argo, one handler call locally, the same handler code in both:
:mod:`alas_argo.pipeline.stages`). ``repair_1`` escalates retry -> patch -> replan (its repair spec; on Argo each
rung is a DAG task of its own).
What differs between engines is only the :class:`Shape`: how many disruption segments, how wide the job
fan-out runs, and the policy values (thread-level retries and timeouts locally, pod-level ones on a cluster).

How many disruptions a run reveals is an input of the run, not of the shape: ``alas-plan`` is rendered with
:data:`MAX_DISRUPTIONS` segments and its parameter ``disruptions`` (0 to that) says how many reveal one.
Every scheduled node of segment k carries the gate :func:`gate` ``(k)``, an IR ``when`` on the blueprint's
output ``revealed`` (the given ``disruption`` list's length, else ``disruptions``, 0 with scenario ``none``): a
run revealing fewer than k disruptions skips the segment, as Argo ``when`` (the tasks end Skipped, no pod, the
ladder's rungs Omitted), as an ASL chain of Choice states, and on the local runtime, so ``alas run`` executes the
same definition (with ``max(N, MAX_DISRUPTIONS)`` segments). Why the blueprint's output and not the parameter
``disruptions`` itself: a given ``disruption`` list reveals each of its entries whatever ``disruptions`` says,
so only the blueprint knows the count; it never is gated itself, so every engine has its output wherever a gate
reads it. ``finish`` (after the last segment) reads the log, not the last commit's output, and the compiler hands
a gated node's output only to a consumer whose own gate implies it (segment k+1 reads segment k's commit), so no
task ever needs the output of a skipped one. The disrupt step still passes the plan through for a k above the
count (a second line, e.g. for a definition built without gates).

Workflow parameters of ``alas-plan`` (the operator's contract, extended, never renamed): run-id, instance,
planner, scenarios, seeds, method, time-limit, plus repair-budget, faults, variant, deterministic,
disruption, disruptions, repair-effort, repair-tolerance and repair-first-edit (:mod:`alas_argo.pipeline.parameters`
maps them onto a run's configuration).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.bounds import MAX_LOCAL_DISRUPTIONS, MAX_WAIT_SECONDS, MAX_WORKERS
from alas_argo.ir import (
    Backoff,
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
    ensure_valid,
)

__all__ = ["INPUTS", "INPUT_ENUMS", "MAX_DISRUPTIONS", "Engine", "Shape", "build", "disruption_segment", "gate",
           "pipeline", "policies"]

#: Disruption segments ``alas-plan`` is rendered with: the most disruptions one submission reveals (the workflow
#: parameter ``disruptions``, 0 to this, rendered as its ``enum``; a larger value is refused by the first step).
#: A segment the run does not use is skipped by its gate (no pod), but every segment adds seven templates, six
#: tasks and about 22 KB to the template (which every Workflow object made from it stores); three keeps that
#: cost bounded while covering the sequences the experiments reveal (``alas run --disruptions`` locally has no
#: such bound: it gets as many segments as it asks).
MAX_DISRUPTIONS = 3

#: Workflow parameters of ``alas-plan`` and their defaults (all strings: Argo parameters).
INPUTS: dict[str, str] = {
    "run-id": "", "instance": "ta01", "planner": "heuristic", "scenarios": '["breakdown"]', "seeds": "[0]",
    "method": "lcrp", "time-limit": "10",
    # Added with the single definition; an empty value keeps the earlier meaning (the repair budget is the
    # time limit, no faults, the full variant, reproducible solves, a generated disruption).
    "repair-budget": "", "faults": "0", "variant": "full", "deterministic": "true", "disruption": "",
    # Disruptions revealed in sequence (0: plan only), at most MAX_DISRUPTIONS; a given `disruption` list
    # reveals each of its entries instead.
    "disruptions": "1",
    # LCRP's time-box multiplier and the makespan share it may trade for fewer moves (alas run's
    # --repair-effort and --repair-tolerance); the defaults repair as before the parameters existed.
    "repair-effort": "1", "repair-tolerance": "0",
    # LCRP's first edit: tabu or redispatch (alas run's --repair-first-edit); empty: the library's default
    # (alas_argo.jssp.repair.DEFAULT_FIRST_EDIT, which this module cannot import), so the two never disagree.
    "repair-first-edit": ""}

#: Workflow parameters whose values are a closed set, rendered as the Argo parameter's ``enum`` (Argo's
#: validation refuses any other value carried with the enum, before a pod runs; see workflows/README.md for
#: which submissions carry it). The first step refuses a value outside the set too, for those that do not.
INPUT_ENUMS: dict[str, list[str]] = {"disruptions": [str(k) for k in range(MAX_DISRUPTIONS + 1)]}


class Engine(StrEnum):
    """Where the pipeline runs: it picks the policy values (the nodes and edges are the same)."""

    LOCAL = "local"  #: the in-process runtime (`alas run`): thread-level retries, every node's output recorded
    CLUSTER = "cluster"  #: Argo (or Step Functions): one pod per node, pod-level retries and deadlines


class Shape(BaseModel):
    """What the one definition is parameterised by."""

    model_config = ConfigDict(frozen=True)

    engine: Engine = Field(Engine.LOCAL, description="Policy values: local runtime or cluster pods.")
    disruptions: int = Field(1, ge=0, le=MAX_LOCAL_DISRUPTIONS,
                             description="Disruptions revealed in sequence (0: plan only).")
    job_concurrency: int = Field(8, ge=1, le=MAX_WORKERS, description="Job agents running at once.")
    max_revalidations: int = Field(3, ge=1, le=20, description="Loop guard of validate -> repair -> validate.")
    agent_timeout: float = Field(60.0, gt=0, le=MAX_WAIT_SECONDS,
                                 description="Seconds one job agent may take (local engine).")
    name: str = Field("alas-plan", description="Workflow name.")


_PLAN_OUT: dict[str, Any] = {"type": "object", "required": ["plan", "makespan"],
                             "properties": {"plan": {"type": "object"}, "makespan": {"type": "integer"}}}
_CHECK_OUT: dict[str, Any] = {"type": "object", "required": ["valid", "plan"],
                              "properties": {"valid": {"type": "boolean"}, "plan": {"type": "object"}}}
_ANY_OUT: dict[str, Any] = {"type": "object"}
#: A version, or null from a commit the cluster passes through when the run's scenario is "none".
_COMMIT_OUT: dict[str, Any] = {"type": "object", "required": ["version"],
                               "properties": {"version": {"type": ["integer", "null"], "minimum": 1}}}

#: Locally every node's output is recorded under this key once it succeeds, so a resumed run continues after
#: its last finished node: no agent, optimizer or repair runs twice.
_RECORDED = Idempotency(key="{run}:{node}")
#: On a cluster, outputs are recorded per workflow object (a retried pod finds its own), and only the
#: baseline commit is once per run, whichever workflow object gets there: resubmitting a plan run never
#: commits a second baseline, while every alas-repair submitted later commits its own repair.
_ONCE_PER_RUN = Idempotency(key="{run}-{node}")


def _exp(attempts: int, initial: float, cap: float) -> Retry:
    return Retry(max_attempts=attempts, backoff=Backoff(kind="exponential", initial=initial, factor=2, max=cap))


def policies(shape: Shape) -> dict[str, Policy]:
    """The named policies of the pipeline's nodes, with the values of ``shape.engine``."""
    if shape.engine is Engine.LOCAL:
        fixed = Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=0.1))
        commit = Policy(idempotency=_RECORDED, on_failure="rollback")
        return {
            # Agents may fail transiently (an LLM endpoint); a definitive failure rolls the run back.
            "agent": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="exponential", initial=0.2, max=2.0,
                                                                        jitter=0.5)),
                            timeout=shape.agent_timeout, idempotency=_RECORDED),
            "step": Policy(retry=fixed, idempotency=_RECORDED),
            # The revalidation loop: validate -> repair -> validate until valid or the guard trips.
            "revalidate": Policy(loop_guard=LoopGuard(max_iters=shape.max_revalidations), idempotency=_RECORDED),
            # Commits are idempotent per run and node, so a resumed run never commits a version twice.
            "commit": commit, "baseline-commit": commit,
            "repair": Policy(retry=fixed, on_failure="retry", idempotency=_RECORDED),
            # One attempt: the undo of a commit in a local store is tried once and its failure recorded.
            "compensation": Policy(),
        }
    # Pods fail transiently (S3 hiccups, evictions): exit 75 is retried with capped exponential backoff.
    step = Policy(retry=_exp(3, 2, 30), timeout=600)
    return {
        "agent": Policy(retry=_exp(3, 1, 20), timeout=300),
        "step": step,
        "revalidate": Policy(retry=_exp(3, 2, 30), timeout=1200,
                             loop_guard=LoopGuard(max_iters=shape.max_revalidations, deadline=1200)),
        "commit": step, "baseline-commit": step.model_copy(update={"idempotency": _ONCE_PER_RUN}),
        "repair": Policy(retry=_exp(3, 2, 30), timeout=1200, on_failure="retry"),
        # The exit handler's undo of a commit: a store outage or its pod stopped is tried again, 4 attempts.
        "compensation": Policy(retry=Retry(max_attempts=4, backoff=Backoff(initial=2, factor=2),
                                           retry_on=["TransientError"])),
    }


def _check(node_id: str, after: str, **params: Any) -> Node:
    return Node(id=node_id, role="revalidate", policy_ref="revalidate", output=_CHECK_OUT,
                description=f"Validate the {after} plan; patch and revalidate until valid.",
                loop=Loop(until=Condition(path="output.valid", op="truthy")), params=params)


def gate(k: int) -> Condition:
    """The gate of segment ``k``: the run reveals at least ``k`` disruptions (``revealed``, which the blueprint
    decides from the run's inputs: the given list's length, else ``disruptions``, 0 for scenario none)."""
    return Condition(path="blueprint.revealed", op="ge", value=k)


def disruption_segment(k: int, plan_from: str | None, *, gated: bool = False
                       ) -> tuple[list[Node], list[tuple[str, str]], str]:
    """Nodes and edges revealing disruption ``k`` against the plan committed by ``plan_from`` (None: the
    plan in force in the run's log, as ``alas-repair`` has it), repairing, revalidating and committing it.
    ``gated``: every scheduled node of the segment carries :func:`gate` ``(k)``, so a run revealing fewer
    disruptions skips the segment (no pod on Argo, no handler call locally).

    Returns:
        (nodes, edges, id of the segment's commit node).
    """
    commit = f"commit_{k + 1}"
    origin = {"plan_from": plan_from} if plan_from is not None else {}
    nodes = [
        Node(id=f"disrupt_{k}", role="disrupt", policy_ref="step", params={"index": k, **origin},
             output={"type": "object", "required": ["disruption"]},
             description=f"Reveal disruption {k} against the plan in force."),
        Node(id=f"repair_{k}", role="repairer", policy_ref="repair", output=_PLAN_OUT, params={"index": k, **origin},
             repair=RepairSpec(patch="repair_patch", replan="replan"),
             description="Localized cascading repair (escalates to patch, then to a global re-solve)."),
        _check(f"recheck_{k}", "repaired", source=f"repair_{k}", disruption=f"disrupt_{k}", **origin),
        Node(id=commit, role="commit", policy_ref="commit", side_effect="write", compensation=f"retract_{k + 1}",
             output=_COMMIT_OUT, params={"source": f"recheck_{k}", "reason": f"repair of disruption {k}"},
             description="Supervise: commit the best valid repaired plan as a new version."),
        Node(id=f"retract_{k + 1}", role="retract", output=_ANY_OUT, policy_ref="compensation",
             description="Compensation of the repaired commit."),
    ]
    if gated:
        nodes = [n if n.id.startswith("retract_") else n.model_copy(update={"when": gate(k)}) for n in nodes]
    edges = [(f"disrupt_{k}", f"repair_{k}"), (f"repair_{k}", f"recheck_{k}"), (f"recheck_{k}", commit)]
    if plan_from is not None:
        edges.insert(0, (plan_from, f"disrupt_{k}"))
    return nodes, edges, commit


def pipeline(shape: Shape) -> Workflow:
    """The ALAS pipeline for ``shape``.

    Raises:
        WorkflowError: The blueprint fails IR validation (it is rejected, never run).
    """
    nodes = [
        Node(id="blueprint", role="blueprint", policy_ref="step", description="Load the instance; list the jobs.",
             output={"type": "object", "required": ["jobs", "revealed"],
                     "properties": {"jobs": {"type": "array"}, "revealed": {"type": "integer", "minimum": 0}}}),
        Node(id="agents", role="agents", policy_ref="step", output=_ANY_OUT,
             description="Instantiate every role from the registry."),
        Node(id="propose", kind="map", role="job_agent", items="blueprint.jobs", policy_ref="agent",
             max_concurrency=shape.job_concurrency, description="One job agent per job proposes its operations.",
             output={"type": "object", "required": ["job", "operations"]}),
        Node(id="merge", role="supervisor", policy_ref="step", output=_PLAN_OUT,
             description="The supervisor merges the proposals into one plan."),
        _check("check_plan", "merged", source="merge"),
        Node(id="optimize", role="optimizer", policy_ref="step", output=_PLAN_OUT,
             description="Improve the valid plan (never worse)."),
        Node(id="inject", role="inject", policy_ref="step", output=_PLAN_OUT,
             description="Inject structural faults into the plan (ablation only; otherwise a pass-through)."),
        _check("check_optimized", "optimized", source="inject"),
        Node(id="commit_v1", role="commit", policy_ref="baseline-commit", side_effect="write",
             compensation="retract_v1", output=_COMMIT_OUT, params={"source": "check_optimized", "reason": "baseline"},
             description="Commit the baseline as plan version 1."),
        Node(id="retract_v1", role="retract", output=_ANY_OUT, policy_ref="compensation",
             description="Compensation: mark the baseline commit as rolled back."),
    ]
    edges = [("blueprint", "agents"), ("blueprint", "propose"), ("agents", "propose"), ("propose", "merge"),
             ("merge", "check_plan"), ("check_plan", "optimize"), ("optimize", "inject"), ("inject", "check_optimized"),
             ("check_optimized", "commit_v1")]
    last = "commit_v1"
    for k in range(1, shape.disruptions + 1):
        more, wiring, last = disruption_segment(k, last, gated=True)
        nodes += more
        edges += wiring
    nodes.append(Node(id="finish", role="finish", output=_ANY_OUT, description="Summarize the run."))
    edges.append((last, "finish"))
    meta: dict[str, Any] = ({"inputs": dict(INPUTS), "input_enums": {k: list(v) for k, v in INPUT_ENUMS.items()}}
                            if shape.engine is Engine.CLUSTER else {})
    return ensure_valid(Workflow(
        name=shape.name, description="Plan one instance with per-job agents, optimize, validate, commit; reveal "
        "disruptions and repair each (LCRP, escalating to patch and replan), revalidated and committed.",
        nodes=nodes, edges=[Edge(source=a, target=b) for a, b in edges], policies=policies(shape), meta=meta),
        require_output_contracts=True)


def build() -> Workflow:
    """The IR of ``alas-plan``: the pipeline with :data:`MAX_DISRUPTIONS` disruption segments, shaped for a
    cluster; the workflow parameter ``disruptions`` says how many of them reveal one (the rest are skipped by
    their gates)."""
    return pipeline(Shape(engine=Engine.CLUSTER, disruptions=MAX_DISRUPTIONS))
