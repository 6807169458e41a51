"""The verdict models: the closed code enum, JSON shapes and the report helpers."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from alas_argo.jssp import verdict
from alas_argo.jssp.verdict import ValidationReport, Violation, ViolationCode


def test_codes_are_the_closed_contract_set() -> None:
    assert [c.value for c in ViolationCode] == [
        "missing_operation", "duplicate_operation", "unknown_operation", "wrong_machine", "wrong_duration",
        "precedence", "machine_overlap", "downtime_overlap", "started_in_past", "frozen_moved",
        "negative_start", "makespan_mismatch", "instance_mismatch", "unknown_machine"]


def test_exports() -> None:
    assert sorted(verdict.__all__) == ["ValidationReport", "Violation", "ViolationCode"]


def test_unknown_code_is_rejected() -> None:
    with pytest.raises(ValidationError):
        Violation.model_validate({"code": "bogus", "message": "x", "scope": {}})


def test_report_json_matches_the_design_shape() -> None:
    v = Violation(code=ViolationCode.MACHINE_OVERLAP, message="m", scope={"job": 3, "step": 2, "machine": 5})
    w = Violation(code=ViolationCode.INSTANCE_MISMATCH, message="w")
    report = ValidationReport.of([v], [w])
    doc = json.loads(json.dumps(report.to_json()))
    assert doc == {"valid": False,
                   "violations": [{"code": "machine_overlap", "message": "m",
                                   "scope": {"job": 3, "step": 2, "machine": 5}}],
                   "warnings": [{"code": "instance_mismatch", "message": "w", "scope": {}}]}
    assert ValidationReport.model_validate(doc) == report


def test_valid_follows_violations_not_warnings() -> None:
    w = Violation(code=ViolationCode.INSTANCE_MISMATCH, message="w")
    assert ValidationReport.of([], [w]).valid
    assert not ValidationReport.of([Violation(code=ViolationCode.PRECEDENCE, message="p")]).valid


def test_helpers_count_and_find() -> None:
    vs = [Violation(code=ViolationCode.PRECEDENCE, message="a", scope={"job": 1, "step": 2}),
          Violation(code=ViolationCode.PRECEDENCE, message="b", scope={"job": 2, "step": 1}),
          Violation(code=ViolationCode.MISSING_OPERATION, message="c", scope={"job": 1, "step": 0})]
    report = ValidationReport.of(vs)
    assert report.codes() == {ViolationCode.PRECEDENCE, ViolationCode.MISSING_OPERATION}
    assert list(report.count_by_code().items()) == [(ViolationCode.MISSING_OPERATION, 1),
                                                    (ViolationCode.PRECEDENCE, 2)]
    assert [v.message for v in report.find(ViolationCode.PRECEDENCE, job=2)] == ["b"]
    assert report.find(ViolationCode.PRECEDENCE, job=1, step=0) == []
