"""(c) Repair on disruption: the WorkflowTemplate ``alas-repair``, submitted by the controller or the
operator for a run that already has a committed plan.

disrupt (the given disruption, or one generated from the scenario) -> controller (LCRP repair, revalidate,
commit a new version); the commit is retracted by the exit handler if the workflow fails after it.
"""

from __future__ import annotations

from alas_argo.ir import Edge, Node, Workflow, ensure_valid

__all__ = ["build"]


def build() -> Workflow:
    """The IR of ``alas-repair``."""
    from alas_argo.workflows.plan import _VALID, POLICIES

    inputs = {"run-id": "", "disruption": "", "scenarios": '["breakdown"]', "seeds": "[0]", "method": "lcrp",
              "time-limit": "10"}
    nodes = [
        Node(id="disrupt", role="disrupt", policy_ref="step", output={"type": "object"},
             description="Record the disruption against the plan in force."),
        Node(id="repair", role="controller", policy_ref="controller", loop=_VALID, side_effect="write",
             compensation="retract-repair", params={"mode": "repair", "reason": "repair"}, output={"type": "object"},
             description="LCRP repair, revalidated, committed as a new version."),
        Node(id="retract-repair", role="retract", description="Compensation: retract the repaired commit."),
    ]
    return ensure_valid(Workflow(
        name="alas-repair", description="Repair a committed plan after a disruption.", nodes=nodes,
        edges=[Edge(source="disrupt", target="repair")],
        policies={"step": POLICIES["step"], "controller": POLICIES["controller"]}, meta={"inputs": inputs}))
