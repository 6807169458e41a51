"""Pure policy helpers: path lookup, conditions, key templates, error names."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import ContractError, TransientError, WorkflowError
from alas_argo.ir import Condition
from alas_argo.runtime import NodeTimeout, error_names, evaluate, matches, render_key, resolve
from alas_argo.runtime.policies import MISSING

SCOPE = {"inputs": {"n": 3, "tags": ["a"]}, "solve": {"gap": 0.25, "ops": [{"m": 1}, {"m": 2}]}}


def test_resolve_walks_dicts_and_lists() -> None:
    assert resolve("solve.ops.1.m", SCOPE) == 2 and resolve("solve.ops.-1.m", SCOPE) == 2
    assert resolve("solve.ops.5", SCOPE) is MISSING and resolve("ghost", SCOPE) is MISSING


@pytest.mark.parametrize(("path", "op", "value", "expected"), [
    ("inputs.n", "eq", 3, True), ("inputs.n", "ne", 3, False), ("inputs.n", "lt", 4, True),
    ("inputs.n", "le", 3, True), ("inputs.n", "gt", 3, False), ("inputs.n", "ge", 3, True),
    ("inputs.n", "in", [1, 3], True), ("inputs.n", "in", 3, False), ("inputs.tags", "truthy", None, True),
    ("inputs.ghost", "exists", None, False), ("solve.gap", "exists", None, True),
    ("inputs.ghost", "eq", None, False), ("inputs.tags", "lt", 3, False),
])
def test_conditions(path: str, op: str, value: Any, expected: bool) -> None:
    assert evaluate(Condition(path=path, op=op, value=value), SCOPE) is expected
    assert evaluate(Condition(path=path, op=op, value=value, negate=True), SCOPE) is not expected


def test_render_key() -> None:
    assert render_key("k-{inputs.n}-{solve.ops.0}", SCOPE, node_id="x") == 'k-3-{"m":1}'
    with pytest.raises(WorkflowError, match="node x"):
        render_key("{inputs.zz}", SCOPE, node_id="x")


def test_error_names_and_matching() -> None:
    t = NodeTimeout("late")
    assert {"Timeout", "NodeTimeout", "TransientError", "AlasError"} <= error_names(t)
    assert matches(["Timeout"], t) and matches(["*"], ValueError()) and not matches(["Timeout"], ValueError())
    assert matches(["TransientError"], TransientError("x")) and matches(["PermanentError"], ContractError("x"))
