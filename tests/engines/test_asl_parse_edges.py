"""Reading ASL back (alas_argo.engines.asl_parse) where the round trip cannot see it: the compiler records
whatever the native reading gets wrong in ``Comment`` fields, so a misread state round-trips anyway. Here the
native reading is checked on its own (a workflow of native features needs no node or policy Comment), on
definitions written by hand, and the refusals name where."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from alas_argo.engines import asl_names as an
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl, iter_states, read_native, state_of
from alas_argo.errors import InputError
from alas_argo.ir import (
    Backoff,
    Branch,
    Catch,
    Condition,
    Edge,
    Idempotency,
    Loop,
    LoopGuard,
    Node,
    Policy,
    RepairSpec,
    Retry,
    Workflow,
)


def _native_workflow() -> Workflow:
    """Only what the states say: a map (its item climbing a ladder), a choice into an any_of join, a parallel
    (a branch climbing a ladder), a gated run of two nodes, a laddered task with a loop, a key and a catch, a
    compensation with params. Listed in the order the reading finds them (compensations last)."""
    return Workflow(
        name="native",
        nodes=[
            Node(id="first", role="blueprint", params={"n": 2}, policy_ref="io"),
            Node(id="fan", kind="map", role="agent", items="first.jobs", max_concurrency=3, policy_ref="fixed",
                 repair=RepairSpec(patch="patcher")),
            Node(id="route", kind="choice", default="small", policy_ref="plain",
                 choices=[Branch(when=Condition(path="fan.count", op="gt", value=2), next="big")]),
            Node(id="big", role="solve"), Node(id="small", role="solve"),
            Node(id="joined", role="merge", join="any_of"),
            Node(id="check_a", role="validator", repair=RepairSpec(patch="patcher", replan="planner")),
            Node(id="check_b", role="validator"),
            Node(id="checks", kind="parallel", branches=["check_a", "check_b"], policy_ref="caught"),
            Node(id="late", role="solver", when=Condition(path="first.count", op="ge", value=2)),
            Node(id="later", role="solver", when=Condition(path="first.count", op="ge", value=2)),
            Node(id="commit", role="commit", compensation="undo", policy_ref="keyed",
                 loop=Loop(until=Condition(path="output.ok", op="truthy")),
                 repair=RepairSpec(patch="patcher", replan="planner")),
            Node(id="on_error", role="report"),
            Node(id="undo", role="revert", params={"why": "x"}),
        ],
        edges=[Edge(source="first", target="fan"), Edge(source="fan", target="route"),
               Edge(source="big", target="joined"), Edge(source="small", target="joined"),
               Edge(source="joined", target="checks"), Edge(source="checks", target="late"),
               Edge(source="late", target="later"), Edge(source="later", target="commit")],
        policies={
            "io": Policy(retry=Retry(max_attempts=4, retry_on=["TransientError", "ContractError"], backoff=Backoff(
                kind="exponential", initial=2, factor=3, max=30, jitter=1.0)), timeout=60),
            "fixed": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=5))),
            "plain": Policy(),
            "caught": Policy(catch=[Catch(errors=["ContractError", "Timeout"], next="on_error")]),
            "keyed": Policy(timeout=90, loop_guard=LoopGuard(max_iters=3, deadline=30),
                            idempotency=Idempotency(key="{run}-{node}"), retry=Retry(max_attempts=3, retry_on=["*"]),
                            catch=[Catch(errors=["*"], next="on_error")]),
        })


def _one_task(policy: Policy | None = None) -> dict[str, Any]:
    wf = Workflow(name="small", nodes=[Node(id="work", role="solver", policy_ref="p" if policy else None)],
                  policies={"p": policy} if policy else {})
    return copy.deepcopy(to_asl(wf))


def test_a_workflow_of_native_features_reads_back_from_the_states() -> None:
    wf = _native_workflow()
    doc = to_asl(wf)
    comments = {name: an.from_comment(st.get("Comment")) for name, st in iter_states(doc["States"])}
    assert {name: sorted(c) for name, c in comments.items() if set(c) - {"policyRef"}} == {}
    # A state machine has no name: it travels in the top Comment (the node order is the states').
    assert an.from_comment(doc["Comment"]) == {"name": "native"}
    assert read_native(doc) == {**wf.to_json(), "name": ""}
    assert from_asl(doc) == wf


def test_a_node_one_alternative_leads_into_joins_all_of() -> None:
    """Two choice targets going on to one node: it joins whichever ran (any_of); one alone: all_of."""
    wf = Workflow(name="alt", nodes=[
        Node(id="first", role="w"),
        Node(id="pick", kind="choice", choices=[Branch(when=Condition(path="first.n", op="gt", value=1),
                                                       next="solo")]),
        Node(id="solo", role="x"), Node(id="after", role="z")],
        edges=[Edge(source="first", target="pick"), Edge(source="solo", target="after")])
    nodes = {n["id"]: n for n in read_native(to_asl(wf))["nodes"]}
    assert nodes["after"]["join"] == "all_of"
    joined = {n["id"]: n for n in read_native(to_asl(_native_workflow()))["nodes"]}["joined"]
    assert joined["join"] == "any_of"


def test_a_retry_rule_of_asl_defaults_reads_as_step_functions_runs_it() -> None:
    """Only ErrorEquals: Step Functions retries 3 times, 1 s first, doubling."""
    doc = _one_task(Policy(retry=Retry(max_attempts=5, backoff=Backoff(initial=4, factor=3))))
    doc["States"]["work"]["Retry"] = [{"ErrorEquals": ["States.ALL"]}]
    assert read_native(doc)["policies"]["p"]["retry"] == {
        "maxAttempts": 4, "backoff": {"kind": "exponential", "initial": 1.0, "factor": 2.0, "jitter": 0.0},
        "retryOn": ["*"]}



def test_a_state_with_several_retry_rules_is_refused_not_cut_to_its_first() -> None:
    """Step Functions tries the rules in order; the IR holds one per node, so reading only the first would
    stop retrying the errors the others name, without a word."""
    doc = _one_task(Policy(retry=Retry(max_attempts=3, retry_on=["TransientError"])))
    doc["States"]["work"]["Retry"].append({"ErrorEquals": ["States.Timeout"], "MaxAttempts": 1})
    with pytest.raises(InputError) as refused:
        read_native(doc)
    assert (refused.value.message, refused.value.where) == (
        "2 Retry rules: a node's policy holds one (merge them, or split the state)", "state work")

def test_no_retry_rule_is_one_attempt() -> None:
    doc = _one_task(Policy(timeout=5))
    assert "Retry" not in doc["States"]["work"]
    assert read_native(doc)["policies"]["p"]["retry"]["maxAttempts"] == 1


def test_a_compensation_nodes_comment_lives_in_the_first_of_its_undo_states() -> None:
    """A compensation node has no state of its own: what its undo states cannot say goes in the first one's
    Comment (not in another state's), and reads back; a node with no state at all has none."""
    wf = Workflow(name="saga", nodes=[
        Node(id="first", role="w"),
        Node(id="commit_a", role="commit", side_effect="write", compensation="undo"),
        Node(id="commit_b", role="commit", side_effect="write", compensation="undo"),
        Node(id="after", role="z"),
        Node(id="undo", role="revert", description="put the old plan back")],
        edges=[Edge(source="first", target="commit_a"), Edge(source="commit_a", target="commit_b"),
               Edge(source="commit_b", target="after")])
    doc = to_asl(wf)
    first_undo = an.UNDO_PREFIX + "commit_a"
    assert [n for n in doc["States"] if n.startswith(an.UNDO_PREFIX)] == [first_undo, an.UNDO_PREFIX + "commit_b"]
    assert state_of(doc, "undo") is doc["States"][first_undo]
    assert state_of(doc, "no_such_node") is None
    assert an.from_comment(doc["States"][first_undo].get("Comment"))["node"] == {
        "description": "put the old plan back"}
    assert [n for n, st in doc["States"].items() if "description" in str(st.get("Comment"))] == [first_undo]
    assert from_asl(doc) == wf


@pytest.mark.parametrize("doc", [None, [], {"States": {}}, {"StartAt": "w", "States": []},
                                 {"StartAt": "w", "States": None}])
def test_a_document_that_is_no_state_machine_is_refused(doc: Any) -> None:
    with pytest.raises(InputError) as err:
        from_asl(doc)
    assert err.value.where == "definition"
    assert err.value.message == "not an ASL state machine (needs StartAt and States)"


def test_a_state_type_it_does_not_read_is_refused_naming_the_state() -> None:
    doc = _one_task()
    doc["States"]["pause"] = {"Type": "Wait", "Seconds": 1, "End": True}
    with pytest.raises(InputError) as err:
        read_native(doc)
    assert err.value.where == "state pause"
    assert err.value.message == "unsupported state type 'Wait'"


@pytest.mark.parametrize(("comment", "where"), [(True, "small"), (False, "definition")])
def test_a_definition_encoding_an_invalid_workflow_is_refused_naming_it(comment: bool, where: str) -> None:
    """Without its top Comment a definition has no name: the refusal names the definition instead."""
    doc = _one_task()
    doc["States"]["work"]["Parameters"]["params"] = ["not", "a", "mapping"]
    if not comment:
        del doc["Comment"]
    with pytest.raises(InputError) as err:
        from_asl(doc)
    assert err.value.where == where
    prefix = "the ASL definition does not encode a valid IR workflow: "
    assert err.value.message.startswith(prefix) and "\n" not in err.value.message
    assert len(err.value.message) > len(prefix)


def test_a_catch_into_no_state_is_refused_naming_the_node() -> None:
    """The IR schema holds, the workflow does not (before, it came back with a catch into nowhere)."""
    wf = Workflow(name="caught", nodes=[Node(id="a", role="x", policy_ref="p"), Node(id="h", role="y")],
                  policies={"p": Policy(catch=[Catch(errors=["*"], next="h")])})
    doc = copy.deepcopy(to_asl(wf))
    doc["States"]["a"]["Catch"][0]["Next"] = "nowhere"
    with pytest.raises(InputError) as err:
        from_asl(doc)
    assert err.value.where == "caught"
    assert err.value.message == ("the ASL definition encodes an invalid IR workflow: node a: catch routes to "
                                 "unknown node 'nowhere'")


@pytest.mark.parametrize("role", ["team/solver", "a/b/c"])
def test_a_role_holding_a_slash_is_read_whole_without_the_compilers_comment(role: str) -> None:
    doc = to_asl(Workflow(name="w", nodes=[Node(id="a", role=role, side_effect="write", compensation="undo"),
                                           Node(id="b", role="boom", policy_ref="f"),
                                           Node(id="undo", role=role + "/undo")],
                          edges=[Edge(source="a", target="b")], policies={"f": Policy(on_failure="rollback")}))
    for st in doc["States"].values():
        st.pop("Comment", None)  # the extras would repair a misread role: read the states alone
    roles = {n["id"]: n["role"] for n in read_native(doc)["nodes"]}
    assert roles == {"a": role, "b": "boom", "undo": role + "/undo"}
    assert an.role_of("arn:aws:lambda:eu-west-1:1:function:solve/v2") == "v2"
