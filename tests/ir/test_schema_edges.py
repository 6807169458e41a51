"""`alas ir schema`'s document names its dialect and its own identifier first: a validator picks its draft from
``$schema`` (without it, jsonschema would guess, and editors would not know the draft), and ``$id`` is the name
other schemas refer to it by. The existing tests check the schema's content, never these two keys."""

from __future__ import annotations

import jsonschema

from alas_argo.ir import workflow_schema


def test_the_schema_names_its_draft_and_its_identifier_first() -> None:
    schema = workflow_schema()
    assert list(schema)[:2] == ["$schema", "$id"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://alas-argo.dev/schemas/workflow.json"
    assert jsonschema.validators.validator_for(schema) is jsonschema.Draft202012Validator
