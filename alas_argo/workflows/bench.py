"""(b) The benchmark fan-out: the WorkflowTemplate ``alas-bench``.

bench-plan lists suite x scenarios x seeds; one pod per case runs the whole local pipeline for its case
in its own log run; aggregate writes the summary (exported as the workflow output ``summary``).
"""

from __future__ import annotations

from alas_argo.ir import Edge, Node, Workflow, ensure_valid

__all__ = ["build"]


def build() -> Workflow:
    """The IR of ``alas-bench``."""
    from alas_argo.workflows.plan import INPUTS, POLICIES

    inputs = {k: v for k, v in INPUTS.items() if k != "instance"} | {"suite": "smoke"}
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
        policies={"step": POLICIES["step"], "agent": POLICIES["agent"]},
        meta={"inputs": inputs, "argo": {"outputs": {"aggregate": ["summary"]}}}))
