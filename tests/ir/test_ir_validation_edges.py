"""IR validation, the cases mutation testing found unpinned: the exact problems (code, node, message) each
broken workflow gets, the well-formed fields that must raise none, and how parse errors and ensure_valid read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import yaml

from alas_argo.errors import WorkflowError
from alas_argo.ir import Problem, Workflow, ensure_valid, parse_workflow, validate_document


def _doc(nodes: list[dict[str, Any]], edges: Sequence[tuple[str, str]] = (), **extra: Any) -> dict[str, Any]:
    return {"name": "w", "nodes": nodes, "edges": [{"source": s, "target": t} for s, t in edges], **extra}


def _problems(doc: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [(p.code, p.node, p.message) for p in validate_document(doc)]


T = {"role": "r"}  # a minimal task body
GUARD = {"g": {"loopGuard": {"maxIters": 3}}}
EXISTS = {"path": "inputs.k", "op": "exists"}

# Each broken workflow, with every problem it gets, once, in the order validate reports them. The table in
# test_ir_validation.py checks that a problem is among those reported; mutants that dropped or replaced a
# message, named no node, or added a spurious problem passed it.
EXACT: dict[str, tuple[dict[str, Any], list[tuple[str, str | None, str]]]] = {
    "duplicate id": (_doc([{"id": "a", **T}, {"id": "a", **T}]),
                     [("duplicate_node", "a", "node id used 2 times")]),
    "reserved id": (_doc([{"id": "inputs", **T}]),
                    [("reserved_id", "inputs", "'inputs' is reserved (a condition or key root)")]),
    "unknown entry": (_doc([{"id": "a", **T}], meta={"entry": ["a", "ghost"]}),
                      [("unknown_node", None, "meta.entry names unknown node 'ghost'")]),
    "task without role": (_doc([{"id": "a"}]), [("missing_role", "a", "task node needs a role")]),
    "map without role": (_doc([{"id": "m", "kind": "map", "items": "inputs.xs"}]),
                         [("missing_role", "m", "map node needs a role")]),
    "empty choice": (_doc([{"id": "c", "kind": "choice"}]),
                     [("empty_choice", "c", "choice node has no branches")]),
    "choice to unknown node": (
        _doc([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x"}, "next": "nope"}]}]),
        [("unknown_node", "c", "choice branch goes to unknown node 'nope'")]),
    "choice default unknown": (
        _doc([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x"}, "next": "a"}],
               "default": "nope"}, {"id": "a", **T}]),
        [("unknown_node", "c", "choice default goes to unknown node 'nope'")]),
    "choice path root unknown": (
        _doc([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "ghost.x"}, "next": "a"}]},
              {"id": "a", **T}]),
        [("bad_path", "c", "condition path 'ghost.x' must start with 'inputs' or a node id")]),
    "default on a task": (_doc([{"id": "a", **T, "default": "a"}]),
                          [("misplaced_field", "a", "only choice nodes have choices/default")]),
    "empty parallel": (_doc([{"id": "p", "kind": "parallel"}]),
                       [("empty_parallel", "p", "parallel node has no branches")]),
    "parallel branch unknown": (_doc([{"id": "p", "kind": "parallel", "branches": ["ghost"]}]),
                                [("unknown_node", "p", "parallel branch 'ghost' does not exist")]),
    "branches on a task": (_doc([{"id": "a", **T, "branches": ["a"]}]),
                           [("misplaced_field", "a", "only parallel nodes have branches")]),
    "map without items": (_doc([{"id": "m", "kind": "map", **T}]),
                          [("missing_items", "m", "map node needs 'items' (the list to fan out over)")]),
    "items root unknown": (
        _doc([{"id": "m", "kind": "map", **T, "items": "ghost.list"}]),
        [("bad_path", "m", "items path 'ghost.list' must be 'inputs.<name>' or '<node id>.<field>'")]),
    "items not a dotted path": (
        _doc([{"id": "m", "kind": "map", **T, "items": "inputs..x"}]),
        [("bad_path", "m", "items path 'inputs..x' must be 'inputs.<name>' or '<node id>.<field>'")]),
    "items on a task": (_doc([{"id": "a", **T, "items": "inputs.x"}]),
                        [("misplaced_field", "a", "only map nodes have items")]),
    "loop on a map": (
        _doc([{"id": "m", "kind": "map", **T, "items": "inputs.x", "loop": {"until": {"path": "output.ok"}},
               "policyRef": "g"}], policies=GUARD),
        [("misplaced_field", "m", "only task nodes can loop")]),
    "loop until reads inputs": (
        _doc([{"id": "a", **T, "loop": {"until": {"path": "inputs.ok"}}, "policyRef": "g"}], policies=GUARD),
        [("bad_path", "a", "a loop's 'until' path must start with 'output'")]),
    "unknown policy": (_doc([{"id": "a", **T, "policyRef": "nope"}]),
                       [("unknown_policy", "a", "policy_ref 'nope' does not resolve")]),
    "catch to unknown node": (
        _doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"catch": [{"errors": ["*"], "next": "z"}]}}),
        [("unknown_node", "a", "catch routes to unknown node 'z'")]),
    "key names nothing": (
        _doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"idempotency": {"key": "{ghost.x}"}}}),
        [("bad_key_template", "a", "idempotency key placeholder {ghost.x} names nothing the node can see")]),
    "key placeholder not dotted": (
        _doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"idempotency": {"key": "{a b}"}}}),
        [("bad_key_template", "a", "idempotency key placeholder {a b} is not a dotted name")]),
    "loop without policy": (
        _doc([{"id": "a", **T, "loop": {"until": {"path": "output.ok"}}}]),
        [("unguarded_loop", "a", "loop has no loop_guard (set one in its policy)")]),
    "loop with a policy but no guard": (
        _doc([{"id": "a", **T, "loop": {"until": {"path": "output.ok"}}, "policyRef": "p"}], policies={"p": {}}),
        [("unguarded_loop", "a", "loop has no loop_guard (set one in its policy)")]),
    "retries declared, none retried": (
        _doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"retry": {"maxAttempts": 3, "retryOn": []}}}),
        [("useless_retry", "a", "retry.maxAttempts 3 with an empty retryOn retries nothing: name the errors to "
                                "retry (e.g. TransientError, Timeout, '*') or set maxAttempts 1")]),
    "retry without repair": (
        _doc([{"id": "a", **T, "policyRef": "p"}], policies={"p": {"onFailure": "retry"}}),
        [("missing_repair", "a", "on_failure 'retry' escalates through recovery and needs a repair spec")]),
    "write without compensation": (_doc([{"id": "a", **T, "sideEffect": "write"}]),
                                   [("missing_compensation", "a", "write side effect without a compensation")]),
    "external without compensation": (
        _doc([{"id": "a", **T, "sideEffect": "external"}]),
        [("missing_compensation", "a", "external side effect without a compensation")]),
    "compensation unknown": (_doc([{"id": "a", **T, "sideEffect": "write", "compensation": "ghost"}]),
                             [("unknown_node", "a", "compensation 'ghost' does not exist")]),
    "compensates itself": (_doc([{"id": "a", **T, "compensation": "a"}]),
                           [("bad_compensation", "a", "a node cannot compensate itself")]),
    "compensation with an edge": (
        _doc([{"id": "a", **T, "sideEffect": "write", "compensation": "u"}, {"id": "u", **T}, {"id": "b", **T}],
             [("a", "u")]),
        [("bad_compensation", "u", "a compensation node must not have edges (it runs only when a run rolls "
                                   "back)")]),
    "any_of with one candidate": (
        _doc([{"id": "a", **T}, {"id": "b", **T, "join": "any_of"}], [("a", "b")]),
        [("bad_join", "b", "any_of join needs at least 2 candidates, has 1")]),
    "cycle": (_doc([{"id": "a", **T}, {"id": "b", **T}, {"id": "c", **T}], [("a", "b"), ("b", "c"), ("c", "b")]),
              [("cycle", "b", "node is on or behind a cycle"), ("cycle", "c", "node is on or behind a cycle")]),
    "edge to itself": (_doc([{"id": "a", **T}], [("a", "a")]),
                       [("cycle", "a", "edge from a node to itself"), ("cycle", "a", "node is on or behind a cycle")]),
    "unreachable from the entry": (_doc([{"id": "a", **T}, {"id": "b", **T}], meta={"entry": ["a"]}),
                                   [("unreachable", "b", "node is not reachable from an entry node")]),
    "edge to an unknown node": (_doc([{"id": "a", **T}], [("a", "zz")]),
                                [("unknown_node", None, "edge a -> zz names unknown node 'zz'")]),
    # the edge names an unknown source: b must not wait for it (a mutant made b a cycle that never starts)
    "edge from an unknown node": (_doc([{"id": "b", **T}], [("ghost", "b")]),
                                  [("unknown_node", None, "edge ghost -> b names unknown node 'ghost'")]),
    "gate on a choice": (
        _doc([{"id": "a", **T}, {"id": "c", "kind": "choice", "when": EXISTS,
                                 "choices": [{"when": {"path": "inputs.x"}, "next": "d"}]}, {"id": "d", **T}],
             [("a", "c")]),
        [("misplaced_field", "c", "only scheduled task and map nodes have a gate (when)")]),
    "gate on a compensation": (
        _doc([{"id": "a", **T, "sideEffect": "write", "compensation": "u"}, {"id": "u", **T, "when": EXISTS}]),
        [("misplaced_field", "u", "only scheduled task and map nodes have a gate (when)")]),
    "gate reads a non-ancestor": (
        _doc([{"id": "a", **T}, {"id": "b", **T, "when": {"path": "a.n", "op": "ge", "value": 1}}]),
        [("bad_path", "b", "gate path 'a.n' must start with 'inputs' or an ungated ancestor's id")]),
}


@pytest.mark.parametrize(("doc", "expected"), list(EXACT.values()), ids=list(EXACT))
def test_each_broken_workflow_gets_exactly_its_problems_and_messages(
        doc: dict[str, Any], expected: list[tuple[str, str | None, str]]) -> None:
    assert _problems(doc) == expected


@pytest.mark.parametrize(("doc", "node", "prefix", "offender"), [
    (_doc([{"id": "a", **T, "output": {"type": "bogus"}}]), "a", "output contract", "'bogus'"),
    (_doc([{"id": "a", **T, "input": {"required": "x"}}]), "a", "input contract", "'x'"),
    (_doc([{"id": "a", **T}], schemas={"s": {"type": 3}}), None, "schema 's'", "3"),
    (_doc([{"id": "a", **T}], logSchemas={"node.started": {"minimum": "x"}}), None, "log schema 'node.started'",
     "'x'"),
], ids=["output", "input", "schema", "log schema"])
def test_a_bad_contract_names_the_contract_and_what_json_schema_refused(doc: dict[str, Any], node: str | None,
                                                                        prefix: str, offender: str) -> None:
    """The message says which contract it is and carries jsonschema's reason (mutants dropped either)."""
    [problem] = validate_document(doc)
    assert (problem.code, problem.node) == ("bad_contract", node)
    assert problem.message.startswith(f"{prefix} is not a valid JSON Schema: {offender} ")


@pytest.mark.parametrize("doc", [
    _doc([{"id": "m", "kind": "map", **T, "items": "inputs.xs"}]),
    _doc([{"id": "a", **T}, {"id": "m", "kind": "map", **T, "items": "a.list"}], [("a", "m")]),
    _doc([{"id": "a", **T}, {"id": "c", "kind": "choice", "choices": [
        {"when": {"path": "inputs.x"}, "next": "b"}, {"when": {"path": "a.y"}, "next": "d"}], "default": "d"},
          {"id": "b", **T}, {"id": "d", **T}], [("a", "c")]),
    _doc([{"id": "a", **T, "loop": {"until": {"path": "output.ok"}}, "policyRef": "g"}], policies=GUARD),
    _doc([{"id": "a", **T}, {"id": "b", **T}, {"id": "p", "kind": "parallel", "branches": ["a", "b"]}]),
], ids=["map over inputs", "map over a node's field", "choice on inputs and a node", "guarded loop", "parallel"])
def test_well_formed_kind_fields_raise_no_problem(doc: dict[str, Any]) -> None:
    """Items, condition and until paths that start at a root they may read (mutants refused all of them)."""
    assert validate_document(doc) == []


@pytest.mark.parametrize("key", ["{run}", "{node}", "{inputs.job}", "{a.out}", "{p}", "x-{run}-{p}"])
def test_key_placeholders_the_node_can_see_are_accepted(key: str) -> None:
    """Run, node, inputs, a dependency's field and a param (mutants dropped one source or split badly)."""
    doc = _doc([{"id": "a", **T}, {"id": "b", **T, "policyRef": "k", "params": {"p": 1}}], [("a", "b")],
               policies={"k": {"idempotency": {"key": key}}})
    assert validate_document(doc) == []


def test_ensure_valid_lists_node_and_workflow_problems_as_users_read_them() -> None:
    """A workflow-wide problem has no 'node ...' prefix; problems are joined by '; '."""
    wf = Workflow.model_validate(_doc([{"id": "a"}], [("a", "zz")]))
    with pytest.raises(WorkflowError) as e:
        ensure_valid(wf)
    assert e.value.args[0] == ("workflow 'w' is invalid (2 problems): node a: task node needs a role; "
                               "edge a -> zz names unknown node 'zz'")


def test_ensure_valid_passes_on_the_demand_for_output_contracts() -> None:
    wf = Workflow.model_validate(_doc([{"id": "a", **T}]))
    assert ensure_valid(wf) is wf
    with pytest.raises(WorkflowError, match="node a: node has no output contract"):
        ensure_valid(wf, require_output_contracts=True)


def test_problem_reads_with_and_without_a_node() -> None:
    assert str(Problem("cycle", "node is on or behind a cycle", "b")) == "node b: node is on or behind a cycle"
    assert str(Problem("unknown_node", "edge a -> zz names unknown node 'zz'")) == \
        "edge a -> zz names unknown node 'zz'"


@pytest.mark.parametrize(("nodes", "where", "node"), [
    ([5], "nodes.0: ", "#0"),  # not a mapping: named by position
    ([{"id": 5, "role": "r"}], "nodes.0.id: ", "#0"),  # an id that is not a string is not used as a name
    ([{"id": "a", **T}, {"id": "b", "kind": "teleport"}], "nodes.1.kind: ", "b"),
], ids=["not a mapping", "id not a string", "second node"])
def test_a_parse_error_in_a_node_names_the_node(nodes: list[Any], where: str, node: str) -> None:
    wf, problems = parse_workflow({"name": "w", "nodes": nodes})
    assert wf is None
    assert [(p.code, p.node) for p in problems] == [("schema", node)]
    assert problems[0].message.startswith(where)


def test_a_parse_error_outside_the_nodes_names_no_node() -> None:
    """An error at edges.0 must not borrow the id of nodes[0]."""
    wf, problems = parse_workflow({"name": "w", "nodes": [{"id": "a", **T}], "edges": [{"target": "a"}]})
    assert wf is None
    assert [(p.code, p.node) for p in problems] == [("schema", None)]
    assert problems[0].message.startswith("edges.0.source: ")


def test_an_empty_policy_name_or_reference_is_a_schema_problem() -> None:
    """policyRef '' resolved to the policy '' in the runtime (Workflow.policy_for) but meant no policy to the
    compilers and, until 6161819, to the validator; neither an empty reference nor an empty name is taken now."""
    doc = _doc([{"id": "a", **T, "policyRef": ""}], policies={"": {"onFailure": "retry"}})
    wf, problems = parse_workflow(doc)
    assert wf is None
    assert [(p.code, p.node, p.message) for p in problems] == [
        ("schema", "a", "nodes.0.policyRef: String should have at least 1 character"),
        ("schema", None, "policies..[key]: String should have at least 1 character")]  # pydantic's path to a key


@pytest.mark.parametrize(("nodes", "node"), [
    (yaml.safe_load("!!set {a}"), "#0"),  # what `nodes: !!set {a}` in a workflow file loads as
    (({"id": "a", "kind": "teleport"},), "a"),  # a tuple from Python callers: listed, so named by id
], ids=["set", "tuple"])
def test_nodes_given_as_another_collection_are_reported_not_a_crash(nodes: Any, node: str) -> None:
    """A set of nodes made parse_workflow raise TypeError ('set' object is not subscriptable) while naming the
    node of pydantic's error nodes.0, a traceback from `alas ir validate` instead of a schema problem."""
    wf, problems = parse_workflow({"name": "w", "nodes": nodes})
    assert wf is None
    assert [(p.code, p.node) for p in problems] == [("schema", node)]
    assert problems[0].message.startswith("nodes.0")


@pytest.mark.parametrize(("entry", "expected"), [
    ([["a"]], ["meta.entry names unknown node ['a']"]),
    ([1, "ghost", "a"], ["meta.entry names unknown node 'ghost'", "meta.entry names unknown node 1"]),
    ([{"id": "a"}, "ghost", 2.5], ["meta.entry names unknown node 'ghost'", "meta.entry names unknown node 2.5",
                                   "meta.entry names unknown node {'id': 'a'}"]),
], ids=["a list", "a number beside ids", "a mapping, a number and an unknown id"])
def test_meta_entry_items_that_are_not_ids_are_reported_not_a_crash(entry: list[Any], expected: list[str]) -> None:
    """meta is free-form, so a YAML entry list may hold anything: a list or mapping in it made validate raise
    TypeError (unhashable), a number beside a string made it raise TypeError while sorting the unknown ones."""
    problems = validate_document(_doc([{"id": "a", **T}], meta={"entry": entry}))
    assert [(p.code, p.node, p.message) for p in problems if p.code == "unknown_node"] == \
        [("unknown_node", None, m) for m in expected]


@pytest.mark.parametrize("entry", ["a", {"a": 1}, 3])
def test_a_meta_entry_that_is_not_a_list_is_reported(entry: Any) -> None:
    """`entry: a` (a name, not a list of them) was ignored: every root counted as an entry, without a word."""
    problems = validate_document(_doc([{"id": "a", **T}], meta={"entry": entry}))
    assert [(p.code, p.node, p.message) for p in problems] == [
        ("schema", None, f"meta.entry must be a list of node ids, got {entry!r}")]


@pytest.mark.parametrize(("dialect", "expected"), [
    ([], "output contract names no JSON Schema dialect jsonschema knows: $schema []"),
    ("bogus", "output contract names no JSON Schema dialect jsonschema knows: $schema 'bogus'"),
    ("http://json-schema.org/draft-07/schema#", None),
    ("https://json-schema.org/draft/2020-12/schema", None),
], ids=["not a string", "unknown", "draft 7", "draft 2020-12"])
def test_a_contract_must_name_a_dialect_jsonschema_knows(dialect: Any, expected: str | None) -> None:
    """A $schema that is not a string made validate raise TypeError (unhashable, in jsonschema's dialect lookup);
    an unknown one passed, and the runtime then checked the contract by the latest draft with a
    DeprecationWarning (jsonschema: 'this will raise an error in the future')."""
    problems = _problems(_doc([{"id": "a", **T, "output": {"$schema": dialect, "type": "object"}}]))
    assert problems == ([("bad_contract", "a", expected)] if expected else [])


@pytest.mark.parametrize("doc", [["a"], "w", None], ids=["list", "string", "null"])
def test_a_document_that_is_not_a_mapping_is_one_schema_problem(doc: Any) -> None:
    """validate_document takes any decoded document; a mutant that read doc['nodes'] from a non-mapping crashed."""
    problems = validate_document(doc)
    assert [(p.code, p.node) for p in problems] == [("schema", None)]
    assert problems[0].message.startswith("document: Input should be a valid dictionary")  # was ": Input ..."


def test_a_path_with_a_final_newline_is_no_dotted_name() -> None:
    """The items path and a key placeholder are checked whole: a regex `$` matches before a final newline, so
    `.match` let "inputs.jobs\n" pass as a path."""
    doc = {"name": "t", "nodes": [{"id": "fan", "kind": "map", "role": "r", "items": "inputs.jobs\n",
                                   "policy_ref": "k"}],
           "policies": {"k": {"idempotency": {"key": "{run}-{node\n}"}}}}
    codes = {(p.code, p.node) for p in validate_document(doc)}
    assert {("bad_path", "fan"), ("bad_key_template", "fan")} <= codes
