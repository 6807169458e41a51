"""Edges of alas_argo.ir.condition left open by hand mutants (mutmut leaves class bodies alone, and this module
is only class bodies): the path's pattern is the only check on a condition read from a document the IR
validation has not seen yet (``from_argo``/``from_asl`` build Conditions first), and its text is written into
Argo ``when`` expressions and ASL JSONPaths, so it must be anchored at both ends and refuse empty segments, a
leading digit and anything else that is no dotted name; a branch needs a target; a loop needs its ``until``;
``negate`` is a bool."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.ir import Branch, Condition, Loop, Op


@pytest.mark.parametrize("path", ["inputs.x", "output", "_a", "a-b.c-d", "node_1.field.sub-key", "item.0"])
def test_a_dotted_name_is_a_path(path: str) -> None:
    assert Condition(path=path).path == path


@pytest.mark.parametrize("path", [
    "",                       # nothing to read
    "1st.x",                  # a leading digit is no node id
    "-a.x",                   # nor a leading dash
    ".x", "a..b", "a.",       # empty segments
    "a.b c",                  # a space inside
    "inputs.x) || true",      # anything after the name (would reach an Argo expression)
    " inputs.x",              # anything before it
    "inputs.x\n",             # a trailing newline
])
def test_anything_else_is_refused(path: str) -> None:
    with pytest.raises(ValidationError) as refused:
        Condition(path=path)
    assert [e["loc"] for e in refused.value.errors()] == [("path",)]


def test_the_defaults_are_equal_to_nothing_not_negated() -> None:
    c = Condition(path="inputs.x")
    assert (c.op, c.value, c.negate) == (Op.EQ, None, False)
    assert c.to_json() == {"path": "inputs.x", "op": "eq", "negate": False}


def test_negate_is_a_bool() -> None:
    assert Condition(path="inputs.x", negate="true").negate is True  # JSON-ish text is read as a bool
    with pytest.raises(ValidationError):
        Condition(path="inputs.x", negate=[1])


@pytest.mark.parametrize("doc", [{"when": {"path": "inputs.x"}, "next": ""}, {"when": {"path": "inputs.x"}}])
def test_a_branch_needs_a_target(doc: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as refused:
        Branch.model_validate(doc)
    assert [e["loc"] for e in refused.value.errors()] == [("next",)]


def test_a_loop_needs_its_until() -> None:
    with pytest.raises(ValidationError) as refused:
        Loop.model_validate({})
    assert [e["loc"] for e in refused.value.errors()] == [("until",)]
    assert Loop.model_validate({"until": {"path": "output.ok", "op": "truthy"}}).until.op is Op.TRUTHY
