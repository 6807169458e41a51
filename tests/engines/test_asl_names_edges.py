"""The names the ASL compiler and its reverse parser share (alas_argo.engines.asl_names), each against its
inverse on its own: the round trips of whole workflows carry a Comment that repairs whatever a native reading
gets wrong, so there a misread path, rule or error name does not show."""

from __future__ import annotations

import re
from typing import Any

import pytest

from alas_argo.engines import asl_names as an
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import read_native
from alas_argo.ir import Branch, Condition, Edge, Node, Workflow


@pytest.mark.parametrize(("resource", "role"), [
    ("arn:aws:states:::alas:step/solver", "solver"),
    ("arn:aws:states:::alas:step/team/solver", "team/solver"),
    ("arn:aws:lambda:eu-west-1:1:function:solve/v2", "v2"),
    ("arn:aws:lambda:eu-west-1:1:function:solve", "arn:aws:lambda:eu-west-1:1:function:solve"),
    ("a/b/c", "c"),
    (None, ""),
    ("", ""),
])
def test_role_of_reads_what_follows_the_resource(resource: Any, role: str) -> None:
    assert an.role_of(resource) == role


def test_rung_state_and_the_reserved_names() -> None:
    assert an.rung_state("repair_1", "patch") == "repair_1/patch"
    # Node ids cannot hold "/": no rung, item or gate state can be taken for a node's own state.
    assert {an.ITEM_SUFFIX, an.GATE_SUFFIX} == {"/item", "/gate"}
    assert an.RESOURCE + "solver" == "arn:aws:states:::alas:step/solver"
    assert (an.UNDO_PREFIX, an.FAIL_STATE, an.COMMENT_PREFIX) == ("alas-undo-", "alas-rolled-back", "alas-argo:")


@pytest.mark.parametrize(("ir", "asl"), [("*", "States.ALL"), ("Timeout", "States.Timeout"),
                                         ("TransientError", "TransientError")])
def test_error_names_map_both_ways(ir: str, asl: str) -> None:
    assert an.to_error(ir) == asl
    assert an.from_error(asl) == ir


def test_a_comment_carries_its_document_after_the_text() -> None:
    doc = {"b": [1, 2], "a": {"x": None}}
    assert an.to_comment(doc) == 'alas-argo:{"a":{"x":null},"b":[1,2]}'  # sorted, compact: goldens are stable
    assert an.to_comment(doc, "a note") == 'a note alas-argo:{"a":{"x":null},"b":[1,2]}'
    assert an.from_comment(an.to_comment(doc, "a note")) == doc
    assert an.from_comment(an.to_comment(doc)) == doc


@pytest.mark.parametrize("doc", [None, {}])
def test_an_empty_document_leaves_the_text_alone(doc: dict[str, Any] | None) -> None:
    assert an.to_comment(doc) is None
    assert an.to_comment(doc, "just text") == "just text"


@pytest.mark.parametrize("comment", [None, "", "a human note", "alas-argo"])
def test_a_comment_without_the_envelope_carries_nothing(comment: str | None) -> None:
    assert an.from_comment(comment) == {}


def test_a_document_quoting_the_prefix_reads_back_whole() -> None:
    doc = {"description": "see alas-argo:{} for the envelope", "n": 1}
    assert an.from_comment(an.to_comment(doc, "text")) == doc


@pytest.mark.parametrize(("parts", "path"), [
    (("results", "first"), "$.results.first"),
    (("inputs", "Job_2"), "$.inputs.Job_2"),
    (("inputs", "x-y"), "$.inputs.x_y"),  # lossy: the Comment keeps the IR value
    (("results", "a.b", "c d"), "$.results.a_b.c_d"),
    (("results", "rows", "0", "ok"), "$.results.rows[0].ok"),  # an index
    (("results", "²"), "$.results._"),  # a digit to str.isdigit, not to JSONPath: no index
])
def test_ref_keeps_letters_digits_and_underscores_only(parts: tuple[str, ...], path: str) -> None:
    assert an.ref(*parts) == path


@pytest.mark.parametrize(("path", "parts"), [
    ("$.results.first_1.out", ["results", "first_1", "out"]),
    ("$['results']['a-b'].c", ["results", "a-b", "c"]),
    ("$.results.jobs.0.ok", ["results", "jobs", "0", "ok"]),  # as compiled before indices took brackets
    ("$.results.jobs[0].ok", ["results", "jobs", "0", "ok"]),
    ("$.rows[12][3]", ["rows", "12", "3"]),
    ("$", []),
])
def test_ref_parts_reads_dots_and_brackets(path: str, parts: list[str]) -> None:
    assert an.ref_parts(path) == parts


@pytest.mark.parametrize(("ir", "asl"), [
    ("inputs.x", "$.inputs.x"),
    ("item.job.id", "$.item.job.id"),
    ("first.jobs", "$.results.first.jobs"),
    ("results.n", "$.results.results.n"),  # a node named "results" keeps its own segment
    # A list index in brackets: JSONPath's dot notation takes no member name starting with a digit.
    ("output.results.0.ok", "$.results.output.results[0].ok"),
    ("inputs.rows.10", "$.inputs.rows[10]"),
])
def test_an_ir_path_and_its_reference_path_map_both_ways(ir: str, asl: str) -> None:
    assert an.path_to_asl(ir) == asl
    assert an.path_from_asl(asl) == ir


@pytest.mark.parametrize(("cond", "rule"), [
    ({"path": "a.n", "op": "eq", "value": None}, {"Variable": "$.results.a.n", "IsNull": True}),
    ({"path": "a.n", "value": 3}, {"Variable": "$.results.a.n", "NumericEquals": 3}),
    ({"path": "a.n", "op": "lt", "value": 2.5}, {"Variable": "$.results.a.n", "NumericLessThan": 2.5}),
    ({"path": "a.n", "op": "le", "value": 2}, {"Variable": "$.results.a.n", "NumericLessThanEquals": 2}),
    ({"path": "a.n", "op": "gt", "value": 2}, {"Variable": "$.results.a.n", "NumericGreaterThan": 2}),
    ({"path": "a.n", "op": "ge", "value": 2}, {"Variable": "$.results.a.n", "NumericGreaterThanEquals": 2}),
    ({"path": "a.s", "op": "lt", "value": "m"}, {"Variable": "$.results.a.s", "StringLessThan": "m"}),
    ({"path": "a.b", "op": "eq", "value": False}, {"Variable": "$.results.a.b", "BooleanEquals": False}),
    ({"path": "a.b", "op": "exists"}, {"Variable": "$.results.a.b", "IsPresent": True}),
    ({"path": "a.b", "op": "truthy"}, {"Variable": "$.results.a.b", "BooleanEquals": True}),
    ({"path": "a.s", "op": "ne", "value": "x"}, {"Not": {"Variable": "$.results.a.s", "StringEquals": "x"}}),
    ({"path": "a.s", "op": "in", "value": ["x", 1]}, {"Or": [{"Variable": "$.results.a.s", "StringEquals": "x"},
                                                            {"Variable": "$.results.a.s", "NumericEquals": 1}]}),
    ({"path": "a.s", "op": "in", "value": None}, {"Or": []}),
    ({"path": "a.n", "op": "gt", "value": 1, "negate": True},
     {"Not": {"Variable": "$.results.a.n", "NumericGreaterThan": 1}}),
    ({"path": "inputs.k", "op": "eq", "value": "v"}, {"Variable": "$.inputs.k", "StringEquals": "v"}),
])
def test_condition_to_rule(cond: dict[str, Any], rule: dict[str, Any]) -> None:
    """Each test as ASL writes it, behind the guard that makes a missing path false (``exists`` is the guard)."""
    got = an.condition_to_rule(cond)
    if cond.get("op") == "exists":
        assert got == rule
        return
    inner = got["Not"] if cond.get("negate") else got
    var = an.path_to_asl(cond["path"])
    assert inner == {"And": [{"Variable": var, "IsPresent": True}, rule["Not"] if cond.get("negate") else rule]}
    assert set(got) == ({"Not"} if cond.get("negate") else {"And"})


def test_an_unguarded_rule_of_an_older_document_reads_back_as_the_same_condition() -> None:
    """Documents rendered before the IsPresent guard compare the path bare."""
    assert an.rule_to_condition({"Variable": "$.results.a.n", "NumericGreaterThan": 2, "Next": "x"}) == {
        "path": "a.n", "op": "gt", "value": 2, "negate": False}
    assert an.rule_to_condition({"Not": {"Variable": "$.results.a.s", "StringEquals": "x"}, "Next": "x"}) == {
        "path": "a.s", "op": "ne", "value": "x", "negate": False}


def test_an_and_that_is_not_the_guard_is_refused() -> None:
    """Only the compiler's own guard reads back: the same path, IsPresent true, then the test."""
    other_path = {"And": [{"Variable": "$.results.a.m", "IsPresent": True},
                          {"Variable": "$.results.a.n", "NumericGreaterThan": 2}]}
    absent = {"And": [{"Variable": "$.results.a.n", "IsPresent": False},
                      {"Variable": "$.results.a.n", "NumericGreaterThan": 2}]}
    three = {"And": [{"Variable": "$.results.a.n", "IsPresent": True}] * 3}
    for rule in (other_path, absent, three):
        with pytest.raises(ValueError, match=r"unsupported Choice rule \['And'\]"):
            an.rule_to_condition(rule)


@pytest.mark.parametrize("cond", [
    Condition(path="a.n", op="eq", value=None),
    Condition(path="a.n", op="eq", value=3),
    Condition(path="a.n", op="lt", value=2.5),
    Condition(path="a.n", op="le", value=2),
    Condition(path="a.n", op="gt", value=2),
    Condition(path="a.n", op="ge", value=2),
    Condition(path="a.s", op="ge", value="m"),
    Condition(path="a.s", op="eq", value="x"),
    Condition(path="a.b", op="eq", value=True),
    Condition(path="a.b", op="exists"),
    Condition(path="a.s", op="ne", value="x"),
    Condition(path="a.s", op="ne", value=None),
    Condition(path="a.s", op="ne", value="x", negate=True),
    Condition(path="a.s", op="in", value=["x", "y"]),
    Condition(path="a.s", op="in", value=["x"], negate=True),
    Condition(path="a.n", op="gt", value=1, negate=True),
    Condition(path="a.b", op="exists", negate=True),
    Condition(path="item.k", op="le", value=0),
    Condition(path="output.rows.0.ok", op="eq", value=True),
])
def test_every_condition_reads_back_from_its_rule_alone(cond: Condition) -> None:
    rule = {**an.condition_to_rule(cond.to_json()), "Next": "somewhere"}
    assert Condition.model_validate(an.rule_to_condition(rule)) == cond


def test_a_negated_eq_reads_back_as_ne() -> None:
    """Both are one ``Not`` around the comparison: the same test, read back as the shorter one."""
    rule = an.condition_to_rule({"path": "inputs.k", "op": "eq", "value": "v", "negate": True})
    assert an.rule_to_condition(rule) == {"path": "inputs.k", "op": "ne", "value": "v", "negate": False}


def test_truthy_reads_back_as_eq_true() -> None:
    """ASL has no truthiness test: the Comment corrects it."""
    rule = an.condition_to_rule({"path": "a.ok", "op": "truthy"})
    assert an.rule_to_condition(rule) == {"path": "a.ok", "op": "eq", "value": True, "negate": False}


def test_a_double_not_reads_back_as_the_rule_itself() -> None:
    rule = {"Not": {"Not": {"Variable": "$.results.a.n", "NumericGreaterThan": 1}}, "Next": "x"}
    assert an.rule_to_condition(rule) == {"path": "a.n", "op": "gt", "value": 1, "negate": False}
    triple = {"Not": rule}
    assert an.rule_to_condition(triple) == {"path": "a.n", "op": "gt", "value": 1, "negate": True}


@pytest.mark.parametrize("value", [["a", 1], {"k": "v"}])
def test_a_value_neither_number_nor_bool_is_compared_as_a_string(value: Any) -> None:
    """ASL's String comparators take strings only."""
    assert an.condition_to_rule({"path": "a.s", "value": value})["And"][1] == {"Variable": "$.results.a.s",
                                                                                 "StringEquals": str(value)}


def test_a_not_holding_more_than_a_rule_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unsupported Choice rule \['Not', 'Variable'\]"):
        an.rule_to_condition({"Not": {"Variable": "$.a", "IsPresent": True}, "Variable": "$.b"})


@pytest.mark.parametrize("rule", [
    {"Variable": "$.results.a", "TimestampEquals": "2026-01-01T00:00:00Z"},
    {"Variable": "$.results.a", "NumericEqualsPath": "$.results.b"},
    {"Variable": "$.results.a", "StringMatches": "x*"},
])
def test_a_comparator_it_does_not_read_is_refused(rule: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="unsupported Choice rule"):
        an.rule_to_condition(rule)


def test_a_choice_on_a_list_index_reads_back_without_the_comment() -> None:
    """Before, the reading dropped the index step (``first.rows.0.ok`` came back as ``first.rows.ok``) and
    only the compiler's Comment put it back."""
    wf = Workflow(name="w", nodes=[
        Node(id="first", role="a"),
        Node(id="pick", kind="choice", default="no",
             choices=[Branch(when=Condition(path="first.rows.0.ok", op="eq", value=True), next="yes")]),
        Node(id="yes", role="b"), Node(id="no", role="c")], edges=[Edge(source="first", target="pick")])
    doc = to_asl(wf)
    for st in doc["States"].values():
        st.pop("Comment", None)
    pick = next(n for n in read_native(doc)["nodes"] if n["id"] == "pick")
    assert pick["choices"][0]["when"]["path"] == "first.rows.0.ok"


@pytest.mark.parametrize(("comment", "message"), [
    ("alas-argo:{bad", "Comment is not JSON after 'alas-argo:'"),
    ("alas-argo:", "Comment is not JSON after 'alas-argo:'"),
    ("alas-argo:[1, 2]", "Comment after 'alas-argo:' is not a JSON object: '[1, 2]'"),
])
def test_a_comment_that_is_not_a_json_object_is_an_input_error(comment: str, message: str) -> None:
    """A hand-edited or cut Comment: from_asl promises an InputError, it was a JSONDecodeError (or an
    AttributeError further on for a list; found beside the h-faults helper's extras fix)."""
    from alas_argo.engines.asl import to_asl
    from alas_argo.engines.asl_parse import from_asl
    from alas_argo.errors import InputError
    from tests.engines.samples import minimal

    with pytest.raises(InputError, match=re.escape(message)):
        an.from_comment(comment)
    doc = to_asl(minimal())
    doc["Comment"] = comment
    with pytest.raises(InputError):
        from_asl(doc)
