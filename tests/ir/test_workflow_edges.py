"""The Workflow model's lookups (alas_argo.ir.workflow) at the edges mutation testing found unpinned: what a missing
node's KeyError carries, a compensation given only by a node's policy (found by ``compensation_of`` and
``compensation_ids``, and so kept out of both engines' graphs and wired as the compensation), the error names a
catch arc carries, and a digest that changes with the definition."""

from __future__ import annotations

import json
from typing import Any

import pytest

from alas_argo.engines.argo import to_argo
from alas_argo.engines.asl import to_asl
from alas_argo.ir import Dependency, Policy, Via, Workflow, content_hash, parse_workflow


def _workflow(doc: dict[str, Any]) -> Workflow:
    wf, problems = parse_workflow(doc)
    assert wf is not None and problems == [], problems
    return wf


def _policy_compensated() -> Workflow:
    """``a`` writes and is undone by ``undo``, named only by its policy ``p``; ``b`` has its own compensation,
    which wins over its policy's."""
    return _workflow({
        "name": "w",
        "nodes": [{"id": "a", "role": "r", "policyRef": "p", "sideEffect": "write"},
                  {"id": "b", "role": "r", "policyRef": "p", "sideEffect": "write", "compensation": "undo-b"},
                  {"id": "c", "role": "r"}, {"id": "undo", "role": "r"}, {"id": "undo-b", "role": "r"}],
        "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}],
        "policies": {"p": {"compensation": "undo"}}})


def test_a_missing_node_is_a_key_error_naming_it() -> None:
    wf = _policy_compensated()
    assert wf.node("c").id == "c"
    with pytest.raises(KeyError) as caught:
        wf.node("nosuch")
    assert caught.value.args == ("nosuch",)


def test_a_policy_names_the_compensation_when_the_node_does_not() -> None:
    wf = _policy_compensated()
    assert wf.compensation_of(wf.node("a")) == "undo"
    assert wf.compensation_of(wf.node("b")) == "undo-b"  # the node's own field first
    assert wf.compensation_of(wf.node("c")) is None  # no policy
    assert wf.compensation_of(wf.node("undo")) is None
    assert wf.compensation_ids() == {"undo", "undo-b"}


def test_an_unknown_policy_ref_names_no_compensation() -> None:
    """Validation reports the unknown reference; the lookup it runs meanwhile must not fail on it."""
    wf = Workflow.model_validate({"name": "w", "nodes": [{"id": "a", "role": "r", "policyRef": "gone"}],
                                  "policies": {"p": {"compensation": "x"}}})
    assert wf.compensation_of(wf.node("a")) is None and wf.compensation_ids() == set()


def test_a_policy_compensation_is_kept_out_of_both_engines_graphs_and_wired_as_the_compensation() -> None:
    wf = _policy_compensated()
    spec = to_argo(wf, image="alas:test")["spec"]
    templates = {t["name"]: t for t in spec["templates"]}
    assert [t["name"] for t in templates["main"]["dag"]["tasks"]] == ["a", "b", "c"]
    [task] = templates[spec["onExit"]]["dag"]["tasks"]
    passed = {p["name"]: p["value"] for p in task["arguments"]["parameters"]}
    assert {k: v["node"] for k, v in json.loads(passed["compensations"]).items()} == {"a": "undo", "b": "undo-b"}
    states = to_asl(wf)["States"]
    assert "undo" not in states and "undo-b" not in states
    assert states["alas-undo-a"]["Parameters"]["node"] == "undo"
    assert states["alas-undo-b"]["Parameters"]["node"] == "undo-b"


def test_policy_for_is_the_named_policy_or_the_defaults() -> None:
    wf = _policy_compensated()
    assert wf.policy_for(wf.node("a")) is wf.policies["p"]
    assert wf.policy_for(wf.node("c")) == Policy()


def test_a_catch_arc_carries_its_error_names_in_order() -> None:
    wf = _workflow({
        "name": "w", "nodes": [{"id": "a", "role": "r", "policyRef": "p"}, {"id": "h", "role": "r"},
                               {"id": "k", "role": "r"}],
        "policies": {"p": {"catch": [{"errors": ["B", "A"], "next": "h"}, {"errors": ["*"], "next": "k"}]}}})
    assert wf.dependencies() == [Dependency("a", "h", Via.CATCH, ("B", "A")),
                                 Dependency("a", "k", Via.CATCH, ("*",))]


def test_explicit_edges_carry_no_errors() -> None:
    assert _policy_compensated().dependencies() == [Dependency("a", "b", Via.EDGE, ()),
                                                    Dependency("b", "c", Via.EDGE, ())]


def test_the_digest_is_the_content_hash_of_the_wire_form_and_follows_every_change() -> None:
    wf = _policy_compensated()
    assert wf.digest() == content_hash(wf.to_json())
    other = wf.model_copy(update={"version": 2})
    assert other.digest() != wf.digest()
