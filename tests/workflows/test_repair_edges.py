"""`alas-repair` is built with every task and map node under an output contract (``require_output_contracts``):
the plan a repair commits is checked at each step's boundary, so a segment node that lost its contract must stop
the build, not ship a template whose outputs nothing checks. The goldens only show the contracts present today."""

from __future__ import annotations

import pytest

import alas_argo.workflows.plan as plan
import alas_argo.workflows.repair as repair
from alas_argo.errors import WorkflowError
from alas_argo.ir import Node


def test_a_segment_node_without_an_output_contract_stops_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    def uncontracted(k: int, plan_from: str | None, *, gated: bool = False
                     ) -> tuple[list[Node], list[tuple[str, str]], str]:
        nodes, edges, commit = plan.disruption_segment(k, plan_from, gated=gated)
        first = nodes[0].model_copy(update={"output": None})
        return [first, *nodes[1:]], edges, commit

    assert repair.build().nodes  # as shipped, every node has its contract
    monkeypatch.setattr(repair, "disruption_segment", uncontracted)
    with pytest.raises(WorkflowError) as refused:
        repair.build()
    assert str(refused.value) == ("workflow 'alas-repair' is invalid (1 problems): node disrupt_1: node has no "
                                  "output contract")
