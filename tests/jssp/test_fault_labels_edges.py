"""The edges of fault injection's labels (alas_argo.jssp.fault_labels): an injection's document is plain JSON
(each fault's kind a plain string, the violation code it produces, not the enum), so it can be written as
JSON or YAML and read back as the same injection."""

from __future__ import annotations

import json

import yaml

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.fault_labels import FaultInjection, FaultKind
from alas_argo.jssp.faults import inject_faults


def test_an_injections_document_is_plain_json_and_reads_back_as_the_same_injection() -> None:
    ft06 = get_instance("ft06")
    kinds = [FaultKind.MISSING_OPERATION, FaultKind.PRECEDENCE]
    out = inject_faults(ft06, dispatch(ft06, "mwkr"), kinds=kinds, count=2, seed=3)
    doc = out.to_json()
    assert [f["kind"] for f in doc["faults"]] == ["missing_operation", "precedence"]  # in injection order
    assert all(type(f["kind"]) is str for f in doc["faults"])  # the code itself, not a FaultKind
    assert doc["schedule"] == out.schedule.to_json()
    assert yaml.safe_load(yaml.safe_dump(doc)) == doc == json.loads(json.dumps(doc))
    assert FaultInjection.model_validate(doc) == out
