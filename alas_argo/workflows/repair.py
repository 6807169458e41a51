"""Repair on disruption: the WorkflowTemplate ``alas-repair``, submitted for a run that already has a
committed plan (by the controller, the operator or a user).

It is the disruption segment of the one pipeline definition (:func:`alas_argo.workflows.plan.disruption_segment`)
with the plan in force read from the run's log: disrupt (the given disruption, or one generated from the
scenario) -> repair (LCRP, escalating to patch and replan) -> recheck (revalidate, patch until valid) ->
commit a new version; the commit is retracted by the exit handler if the workflow fails after it.
"""

from __future__ import annotations

from alas_argo.ir import Edge, Workflow, ensure_valid
from alas_argo.workflows.plan import INPUTS, Engine, Shape, disruption_segment, policies

__all__ = ["build"]

#: Parameters of ``alas-repair``: the pipeline's, without the planning ones.
#: One disruption by definition, so no ``disruptions``.
_INPUTS = {k: v for k, v in INPUTS.items() if k not in ("instance", "planner", "faults", "variant", "disruptions")}


def build() -> Workflow:
    """The IR of ``alas-repair``."""
    nodes, edges, _ = disruption_segment(1, None)
    shape = Shape(engine=Engine.CLUSTER, name="alas-repair")
    used = {n.policy_ref for n in nodes if n.policy_ref is not None}
    return ensure_valid(Workflow(
        name=shape.name, description="Repair a committed plan after a disruption.", nodes=nodes,
        edges=[Edge(source=a, target=b) for a, b in edges],
        policies={k: v for k, v in policies(shape).items() if k in used}, meta={"inputs": _INPUTS}),
        require_output_contracts=True)
