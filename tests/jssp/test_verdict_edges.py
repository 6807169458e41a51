"""The verdict models' edges: plain JSON out, frozen, defaults, typed scopes.

``to_json`` must hand back JSON types, not Python ones: a violation's code as a plain ``str``, not the
``ViolationCode`` enum (a ``str`` subclass that ``json.dumps`` happens to accept, but that YAML's safe dumper and
other encoders refuse). The report goes into run logs, the CLI's ``--json`` output and the pipeline's documents.
"""

from __future__ import annotations

import json

import pytest
import yaml
from pydantic import ValidationError

from alas_argo.jssp.verdict import ValidationReport, Violation, ViolationCode


def _overlap() -> Violation:
    return Violation(code=ViolationCode.MACHINE_OVERLAP, message="m",
                     scope={"job": 3, "step": 2, "machine": 5, "other_job": 1, "other_step": 0})


def test_violation_to_json_is_plain_json() -> None:
    doc = _overlap().to_json()
    assert doc == {"code": "machine_overlap", "message": "m",
                   "scope": {"job": 3, "step": 2, "machine": 5, "other_job": 1, "other_step": 0}}
    assert type(doc["code"]) is str
    assert yaml.safe_load(yaml.safe_dump(doc)) == doc


def test_report_to_json_is_plain_json() -> None:
    report = ValidationReport.of([_overlap()], [Violation(code=ViolationCode.INSTANCE_MISMATCH, message="w")])
    doc = report.to_json()
    assert type(doc["violations"][0]["code"]) is str
    assert type(doc["warnings"][0]["code"]) is str
    assert yaml.safe_load(yaml.safe_dump(doc)) == doc == json.loads(json.dumps(doc))


def test_defaults_are_empty_and_not_shared() -> None:
    a = Violation(code=ViolationCode.PRECEDENCE, message="p")
    assert a.scope == {}
    r1, r2 = ValidationReport(valid=True), ValidationReport(valid=True)
    assert (r1.violations, r1.warnings) == ([], [])
    r1.violations.append(a)  # frozen forbids assignment, not a list's own methods: each report has its own
    assert r2.violations == [] and ValidationReport(valid=True).violations == []


def test_models_are_frozen() -> None:
    v = _overlap()
    with pytest.raises(ValidationError):
        v.message = "other"  # type: ignore[misc]
    report = ValidationReport.of([v])
    with pytest.raises(ValidationError):
        report.valid = True  # type: ignore[misc]


def test_scope_values_are_integers() -> None:
    # The scope names places by number (job, step, machine, index); a name or a missing number is refused.
    with pytest.raises(ValidationError):
        Violation(code=ViolationCode.PRECEDENCE, message="p", scope={"job": "first"})
    with pytest.raises(ValidationError):
        Violation(code=ViolationCode.PRECEDENCE, message="p", scope={"job": None})


def test_of_takes_its_warnings_as_given_and_none_as_empty() -> None:
    w = Violation(code=ViolationCode.INSTANCE_MISMATCH, message="w")
    assert ValidationReport.of([], None).warnings == []
    assert ValidationReport.of([], [w]).warnings == [w]
    assert ValidationReport.of([_overlap()]).valid is False


def test_code_and_message_are_required() -> None:
    # "One human-readable sentence" per violation: a violation without one is not a violation.
    with pytest.raises(ValidationError):
        Violation.model_validate({"code": "precedence"})
    with pytest.raises(ValidationError):
        Violation.model_validate({"code": "precedence", "message": None})
    with pytest.raises(ValidationError):
        Violation.model_validate({"message": "p"})
