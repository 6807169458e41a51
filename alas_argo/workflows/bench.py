"""The benchmark fan-out: the WorkflowTemplate ``alas-bench``.

bench-plan lists suite x scenarios x seeds; one pod per case runs the whole pipeline
(:func:`alas_argo.workflows.plan.pipeline`, on the local runtime inside the pod) for its case in its own log
run; aggregate writes the summary (exported as the workflow output ``summary``). The parameters are the
pipeline's, with ``suite`` instead of ``instance``.
"""

from __future__ import annotations

from alas_argo.ir import Edge, Node, Workflow, ensure_valid
from alas_argo.workflows.plan import INPUTS, Engine, Shape, policies

__all__ = ["build"]


def build() -> Workflow:
    """The IR of ``alas-bench``."""
    inputs = {k: v for k, v in INPUTS.items() if k not in ("instance", "disruption")} | {"suite": "smoke"}
    cluster = policies(Shape(engine=Engine.CLUSTER))
    nodes = [
        Node(id="cases", role="bench-plan", policy_ref="step", output={"type": "object", "required": ["cases"]},
             description="List the cases: suite x scenarios x seeds."),
        Node(id="run-case", kind="map", role="bench-case", items="cases.cases", max_concurrency=4,
             policy_ref="agent", output={"type": "object"}, description="Plan, disrupt and repair one case."),
        Node(id="aggregate", role="aggregate", policy_ref="step", output={"type": "object", "required": ["summary"]},
             description="Aggregate the cases into one summary."),
    ]
    return ensure_valid(Workflow(
        name="alas-bench", description="Benchmark fan-out over suite x scenarios x seeds with aggregation.",
        nodes=nodes, edges=[Edge(source="cases", target="run-case"), Edge(source="run-case", target="aggregate")],
        policies={"step": cluster["step"], "agent": cluster["agent"]},
        meta={"inputs": inputs, "argo": {"outputs": {"aggregate": ["summary"]}}}))
