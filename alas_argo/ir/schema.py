"""JSON Schema export of the IR (what `alas ir schema` prints)."""

from __future__ import annotations

from typing import Any

from alas_argo.ir.workflow import Workflow

__all__ = ["workflow_schema"]

#: Dialect of the exported schema.
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def workflow_schema() -> dict[str, Any]:
    """The JSON Schema of a Workflow document as it appears on the wire (camelCase aliases)."""
    schema = Workflow.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": DIALECT, "$id": "https://alas-argo.dev/schemas/workflow.json", **schema}
