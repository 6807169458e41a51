"""Regressions found by the random-structure fuzz (tests/engines/test_random_workflows.py): valid IR workflows
on which a compiler rendered a document its own checks reject. Each is refused or rendered correctly now."""

from __future__ import annotations

import pytest

from alas_argo.engines.argo import to_argo
from alas_argo.engines.conformance import UnsupportedFeature
from alas_argo.engines.lint import lint_argo
from alas_argo.ir import Condition, Edge, Node, Workflow


@pytest.mark.parametrize("declared", [True, False])
@pytest.mark.parametrize("feature", ["gate", "map"])
def test_argo_refuses_a_gate_or_items_on_an_undeclared_input(feature: str, declared: bool) -> None:
    """An undeclared run input has no workflow parameter: `{{workflow.parameters.jobs}}` would fail the submission
    (the project's lint says so); the compiler refuses instead of rendering it."""
    node = (Node(id="b", role="y", when=Condition(path="inputs.jobs", op="eq", value=1)) if feature == "gate"
            else Node(id="b", kind="map", role="y", items="inputs.jobs"))
    wf = Workflow(name="w", nodes=[Node(id="a", role="x"), node], edges=[Edge(source="a", target="b")],
                  meta={"inputs": {"jobs": "[1]"}} if declared else {})
    if declared:
        assert lint_argo(to_argo(wf, image="alas:test")) == []
        return
    with pytest.raises(UnsupportedFeature, match="does not declare") as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == ("b", feature)
