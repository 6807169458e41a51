"""IR validation: one test per problem code, each checking the node it names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from alas_argo.errors import WorkflowError
from alas_argo.ir import Workflow, ensure_valid, validate, validate_document


def _doc(nodes: list[dict[str, Any]], edges: Sequence[tuple[str, str]] = (), **extra: Any) -> dict[str, Any]:
    return {"name": "w", "nodes": nodes, "edges": [{"source": s, "target": t} for s, t in edges], **extra}


def _problems(doc: dict[str, Any], **kw: Any) -> set[tuple[str, str | None]]:
    return {(p.code, p.node) for p in validate_document(doc, **kw)}


T = {"role": "r"}  # a minimal task body


def test_a_valid_workflow_has_no_problems() -> None:
    doc = _doc([{"id": "a", **T}, {"id": "b", **T}, {"id": "c", **T, "join": "any_of"}],
               [("a", "c"), ("b", "c")])
    assert validate_document(doc) == []


@pytest.mark.parametrize(("doc", "expected"), [
    (_doc([{"id": "a", **T}, {"id": "a", **T}]), ("duplicate_node", "a")),
    (_doc([{"id": "a", **T}], [("a", "zz")]), ("unknown_node", None)),
    (_doc([{"id": "a"}]), ("missing_role", "a")),
    (_doc([{"id": "m", "kind": "map", "items": "inputs.xs"}]), ("missing_role", "m")),
    (_doc([{"id": "c", "kind": "choice"}]), ("empty_choice", "c")),
    (_doc([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x"}, "next": "nope"}]}]),
     ("unknown_node", "c")),
    (_doc([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x"}, "next": "a"}],
            "default": "nope"}, {"id": "a", **T}]), ("unknown_node", "c")),
    (_doc([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "ghost.x"}, "next": "a"}]},
           {"id": "a", **T}]), ("bad_path", "c")),
    (_doc([{"id": "a", **T, "default": "a"}]), ("misplaced_field", "a")),
    (_doc([{"id": "p", "kind": "parallel"}]), ("empty_parallel", "p")),
    (_doc([{"id": "p", "kind": "parallel", "branches": ["ghost"]}]), ("unknown_node", "p")),
    (_doc([{"id": "a", **T, "branches": ["a"]}]), ("misplaced_field", "a")),
    (_doc([{"id": "m", "kind": "map", **T}]), ("missing_items", "m")),
    (_doc([{"id": "m", "kind": "map", **T, "items": "ghost.list"}]), ("bad_path", "m")),
    (_doc([{"id": "a", **T, "items": "inputs.x"}]), ("misplaced_field", "a")),
    (_doc([{"id": "a", **T, "policyRef": "nope"}]), ("unknown_policy", "a")),
    (_doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"catch": [{"errors": ["*"], "next": "z"}]}}),
     ("unknown_node", "a")),
    (_doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"idempotency": {"key": "{ghost.x}"}}}),
     ("bad_key_template", "a")),
    (_doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"idempotency": {"key": "{a b}"}}}),
     ("bad_key_template", "a")),
    (_doc([{"id": "a", **T, "loop": {"until": {"path": "output.ok"}}}]), ("unguarded_loop", "a")),
    (_doc([{"id": "a", **T, "loop": {"until": {"path": "inputs.ok"}}, "policyRef": "g"}],
          policies={"g": {"loopGuard": {"maxIters": 3}}}), ("bad_path", "a")),
    (_doc([{"id": "m", "kind": "map", **T, "items": "inputs.x", "loop": {"until": {"path": "output.ok"}},
            "policyRef": "g"}], policies={"g": {"loopGuard": {"maxIters": 3}}}), ("misplaced_field", "m")),
    (_doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"onFailure": "retry"}}),
     ("missing_repair", "a")),
    (_doc([{"id": "a", **T, "sideEffect": "write"}]), ("missing_compensation", "a")),
    (_doc([{"id": "a", **T, "sideEffect": "external"}]), ("missing_compensation", "a")),
    (_doc([{"id": "a", **T, "sideEffect": "write", "compensation": "ghost"}]), ("unknown_node", "a")),
    (_doc([{"id": "a", **T, "compensation": "a"}]), ("bad_compensation", "a")),
    (_doc([{"id": "a", **T, "sideEffect": "write", "compensation": "u"}, {"id": "u", **T}, {"id": "b", **T}],
          [("a", "u")]), ("bad_compensation", "u")),
    (_doc([{"id": "a", **T, "output": {"type": "bogus"}}]), ("bad_contract", "a")),
    (_doc([{"id": "a", **T, "input": {"required": "x"}}]), ("bad_contract", "a")),
    (_doc([{"id": "a", **T}], schemas={"s": {"type": 3}}), ("bad_contract", None)),
    (_doc([{"id": "a", **T}], logSchemas={"node.started": {"minimum": "x"}}), ("bad_contract", None)),
    (_doc([{"id": "a", **T}, {"id": "b", **T, "join": "any_of"}], [("a", "b")]), ("bad_join", "b")),
    (_doc([{"id": "a", **T}, {"id": "b", **T}, {"id": "c", **T}], [("a", "b"), ("b", "c"), ("c", "b")]),
     ("cycle", "b")),
    (_doc([{"id": "a", **T}], [("a", "a")]), ("cycle", "a")),
    (_doc([{"id": "a", **T}, {"id": "b", **T}], meta={"entry": ["a"]}), ("unreachable", "b")),
    (_doc([{"id": "a", **T}], meta={"entry": ["ghost"]}), ("unknown_node", None)),
    (_doc([{"id": "a", "kind": "teleport"}]), ("schema", "a")),
    (_doc([{"id": "inputs", **T}]), ("reserved_id", "inputs")),
    (_doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"retry": {"maxAttempts": 0}}}), ("schema", None)),
])
def test_each_problem_is_reported_naming_its_node(doc: dict[str, Any], expected: tuple[str, str | None]) -> None:
    assert expected in _problems(doc)


def test_cycle_reports_every_node_on_it() -> None:
    doc = _doc([{"id": "a", **T}, {"id": "b", **T}, {"id": "c", **T}], [("a", "b"), ("b", "c"), ("c", "b")])
    assert {n for code, n in _problems(doc) if code == "cycle"} == {"b", "c"}


def test_output_contracts_can_be_required() -> None:
    doc = _doc([{"id": "a", **T}, {"id": "b", **T, "output": {"type": "object"}}], [("a", "b")])
    assert _problems(doc) == set()
    assert _problems(doc, require_output_contracts=True) == {("missing_contract", "a")}


def test_compensation_nodes_are_exempt_from_reachability() -> None:
    doc = _doc([{"id": "a", **T, "sideEffect": "write", "compensation": "undo"}, {"id": "undo", **T},
                {"id": "b", **T}], [("a", "b")], meta={"entry": ["a"]})
    assert validate_document(doc) == []


def test_catch_targets_are_reachable_through_their_route() -> None:
    doc = _doc([{"id": "a", **T, "policyRef": "p"}, {"id": "h", **T}], meta={"entry": ["a"]},
               policies={"p": {"catch": [{"errors": ["*"], "next": "h"}]}})
    assert validate_document(doc) == []


def test_ensure_valid_lists_all_problems_in_one_error() -> None:
    wf = Workflow.model_validate(_doc([{"id": "a"}, {"id": "b", **T, "sideEffect": "write"}]))
    with pytest.raises(WorkflowError) as e:
        ensure_valid(wf)
    assert "2 problems" in str(e.value)
    assert "node a: task node needs a role" in str(e.value)
    assert "node b: write side effect without a compensation" in str(e.value)
    assert len(validate(wf)) == 2


_GATE = {"path": "a.n", "op": "ge", "value": 1}


@pytest.mark.parametrize(("nodes", "edges", "expected"), [
    # the gate reads an ungated ancestor (or the inputs): valid
    ([{"id": "a", "role": "x"}, {"id": "b", "role": "y", "when": _GATE}], [("a", "b")], set()),
    ([{"id": "a", "role": "x"}, {"id": "b", "role": "y", "when": {"path": "inputs.k", "op": "eq", "value": "1"}}],
     [("a", "b")], set()),
    # not an ancestor: nothing guarantees its output exists when the gate is decided
    ([{"id": "a", "role": "x"}, {"id": "b", "role": "y", "when": _GATE}], [], {("bad_path", "b")}),
    # a gated ancestor may itself be skipped
    ([{"id": "a", "role": "x", "when": {"path": "inputs.k", "op": "exists"}},
      {"id": "b", "role": "y", "when": _GATE}], [("a", "b")], {("bad_path", "b")}),
    # only scheduled task and map nodes are gated
    ([{"id": "a", "role": "x"}, {"id": "c", "kind": "choice", "when": _GATE,
                                 "choices": [{"when": _GATE, "next": "d"}]}, {"id": "d", "role": "z"}],
     [("a", "c")], {("misplaced_field", "c")}),
])
def test_a_gate_reads_what_exists_when_it_is_decided(nodes: list[dict[str, Any]], edges: list[tuple[str, str]],
                                                     expected: set[tuple[str, str | None]]) -> None:
    assert _problems(_doc(nodes, edges)) == expected
