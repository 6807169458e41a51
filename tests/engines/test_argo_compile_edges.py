"""Edges of alas_argo.engines.argo (``to_argo``) left open by mutation testing: the options reach the document
(every container's image, the namespace, the kind, the pods' ServiceAccount and its default), the log's run id
is the workflow parameter ``run-id`` only when the workflow declares that input (else the Argo workflow's
name, or whatever expression the caller gives), a policy's extras sit on the template of the first node that
uses it (the item template for a map), a policy no node uses goes to the workflow's extras, and the compiler's
two self-checks (node order, lossless round trip) refuse with a ContractError naming the workflow."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.engines import argo_names as nm
from alas_argo.engines import argo_parse
from alas_argo.engines.argo import to_argo
from alas_argo.engines.extras import loads
from alas_argo.errors import ContractError
from alas_argo.ir import Workflow
from tests.engines.samples import kitchen_sink


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [t["container"] for t in doc["spec"]["templates"] if "container" in t]


def _run_ids(doc: dict[str, Any]) -> set[str]:
    return {c["args"][c["args"].index("--run-id") + 1] for c in _containers(doc)}


def _with_run_id_input(wf: Workflow) -> Workflow:
    return wf.model_copy(update={"meta": {**wf.meta, "inputs": {**wf.meta["inputs"], "run-id": ""}}})


def test_the_options_reach_the_document() -> None:
    doc = to_argo(kitchen_sink(), image="registry.local/alas:7", namespace="ns-a", kind="WorkflowTemplate",
                  service_account="sa-a")
    assert doc["kind"] == "WorkflowTemplate"
    assert doc["metadata"]["namespace"] == "ns-a"
    assert doc["spec"]["serviceAccountName"] == "sa-a"
    assert _containers(doc) and {c["image"] for c in _containers(doc)} == {"registry.local/alas:7"}


def test_the_defaults_are_a_workflow_without_namespace_run_by_alas_workflow() -> None:
    doc = to_argo(kitchen_sink(), image="alas:test")
    assert doc["kind"] == "Workflow"
    assert "namespace" not in doc["metadata"]
    assert doc["spec"]["serviceAccountName"] == "alas-workflow"


def test_the_run_id_is_the_run_id_parameter_only_when_the_workflow_declares_it() -> None:
    """Without the input, a ``{{workflow.parameters.run-id}}`` Argo cannot resolve would reach every step."""
    assert _run_ids(to_argo(kitchen_sink(), image="alas:test")) == {"{{workflow.name}}"}
    declared = to_argo(_with_run_id_input(kitchen_sink()), image="alas:test")
    assert _run_ids(declared) == {"{{workflow.parameters.run-id}}"}
    given = to_argo(_with_run_id_input(kitchen_sink()), image="alas:test", run_id="{{workflow.uid}}")
    assert _run_ids(given) == {"{{workflow.uid}}"}


def test_a_policys_extras_sit_on_its_first_nodes_template() -> None:
    """kitchen_sink: ``io`` is used by ``blueprint`` then ``bench``, ``agents`` by the map ``agents``, and
    ``unused`` by no node."""
    doc = to_argo(kitchen_sink(), image="alas:test")
    annotations = {t["name"]: t.get("metadata", {}).get("annotations", {}) for t in doc["spec"]["templates"]}
    homes = {name for name, a in annotations.items() if nm.ANN_POLICY_EXTRAS in a}
    assert {"blueprint", "agents-item"} <= homes
    assert "bench" not in homes and "agents" not in homes
    wf_extras = loads(doc["metadata"]["annotations"][nm.ANN_WF_EXTRAS])
    assert set(wf_extras["policies"]) == {"unused"}


def test_a_lost_node_order_is_a_contract_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = argo_parse.read_native

    def reversed_nodes(doc: dict[str, Any]) -> dict[str, Any]:
        native = real(doc)
        return {**native, "nodes": native["nodes"][::-1]}

    monkeypatch.setattr(argo_parse, "read_native", reversed_nodes)
    with pytest.raises(ContractError) as caught:
        to_argo(kitchen_sink(), image="alas:test")
    assert caught.value.args == ("argo compiler lost the node order",)
    assert caught.value.where == "kitchen-sink"


def test_a_lossy_round_trip_is_a_contract_error(monkeypatch: pytest.MonkeyPatch) -> None:
    wf = kitchen_sink()
    monkeypatch.setattr(argo_parse, "from_argo", lambda doc: wf.model_copy(update={"meta": {}}))
    with pytest.raises(ContractError) as caught:
        to_argo(wf, image="alas:test")
    assert caught.value.args == ("argo round trip is not lossless",)
    assert caught.value.where == "kitchen-sink"
