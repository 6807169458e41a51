"""JSON Schema export."""

from __future__ import annotations

import jsonschema

from alas_argo.ir import Edge, Node, Policy, Workflow, workflow_schema


def test_schema_is_valid_and_accepts_a_wire_document() -> None:
    schema = workflow_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    doc = Workflow(name="w", nodes=[Node(id="a", role="r", policy_ref="p"), Node(id="b", role="r")],
                   edges=[Edge(source="a", target="b")], policies={"p": Policy(timeout=2)}).to_json()
    jsonschema.validate(doc, schema)
    assert "policyRef" in schema["$defs"]["Node"]["properties"]


def test_schema_rejects_a_bad_document() -> None:
    bad = {"name": "w", "nodes": [{"id": "a", "kind": "loop"}]}
    errors = list(jsonschema.Draft202012Validator(workflow_schema()).iter_errors(bad))
    assert errors


def test_every_field_has_a_description() -> None:
    schema = workflow_schema()
    for field, spec in schema["properties"].items():
        assert spec.get("description"), f"Workflow.{field} has no description"
    for name, definition in schema["$defs"].items():
        for field, spec in definition.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{field} has no description"
