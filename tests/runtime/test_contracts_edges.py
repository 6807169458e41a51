"""`runtime.contracts.ContractChecker`, used directly: one checker (one per runtime) checks every node's schemas,
so its cache must tell schemas apart (keyed by their canonical text, a document satisfying one schema is still
checked against the other), and compiles each distinct schema once. A violation deep in a document is placed by
its whole path, segments joined with "/". The runtime tests reach the checker with one schema per run and
violations at the root or one level down only."""

from __future__ import annotations

import pytest

from alas_argo.errors import ContractError
from alas_argo.runtime.contracts import ContractChecker

NEEDS_X = {"type": "object", "required": ["x"]}
NEEDS_Y = {"type": "object", "required": ["y"]}


def test_each_schema_is_checked_as_itself_by_one_checker() -> None:
    checker = ContractChecker()
    checker.check(NEEDS_X, {"x": 1}, node_id="a", what="input")
    with pytest.raises(ContractError) as refused:
        checker.check(NEEDS_Y, {"x": 1}, node_id="b", what="input")
    assert refused.value.message == "input breaks its contract at (root): 'y' is a required property"
    assert refused.value.where == {"node": "b"}
    checker.check(NEEDS_X, {"x": 2}, node_id="a", what="input")  # the first schema is still itself


def test_a_schema_is_compiled_once_and_equal_schemas_share_it() -> None:
    checker = ContractChecker()
    first = checker._validator(NEEDS_X)
    assert checker._validator({"required": ["x"], "type": "object"}) is first  # same schema, other key order
    assert checker._validator(NEEDS_Y) is not first


def test_a_nested_violation_names_its_whole_path() -> None:
    schema = {"type": "object", "properties": {"plan": {"type": "array", "items": {
        "type": "object", "properties": {"start": {"type": "integer"}}}}}}
    with pytest.raises(ContractError) as refused:
        ContractChecker().check(schema, {"plan": [{"start": 0}, {"start": "soon"}]}, node_id="p", what="output")
    assert refused.value.message == "output breaks its contract at plan/1/start: 'soon' is not of type 'integer'"


def test_no_schema_accepts_anything() -> None:
    ContractChecker().check(None, object(), node_id="a", what="input")
