"""Edges of alas_argo.engines.argo_ladder left open by mutation testing: a consumer of a node under an
``on_failure: skip`` policy depends on ``(x || x.Failed)`` (or ``(x.Succeeded || x.Failed)`` in an any-of join),
which reads back as the plain dependency on ``x`` (no test read such a document back, so a garbled name went
unseen until ``from_argo`` refused the edge); and ``succeeded_group`` accepts a skipped node task only when
asked to."""

from __future__ import annotations

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_ladder import collapse, failed_term, succeeded_group
from alas_argo.engines.argo_parse import from_argo, read_native
from alas_argo.ir import Edge, Node, Policy, RepairSpec, Workflow


def _skipping() -> Workflow:
    return Workflow(name="skip", nodes=[Node(id="a_1", role="blueprint", policy_ref="s"), Node(id="b", role="report")],
                    edges=[Edge(source="a_1", target="b")], policies={"s": Policy(on_failure="skip")})


def test_a_skip_policys_consumer_reads_back_as_the_plain_dependency() -> None:
    wf = _skipping()
    doc = to_argo(wf, image="alas:test")
    main = next(t for t in doc["spec"]["templates"] if t["name"] == doc["spec"]["entrypoint"])
    assert {t["name"]: t.get("depends") for t in main["dag"]["tasks"]}["b"] == "(a-1 || a-1.Failed)"
    assert read_native(doc)["edges"] == [{"source": "a_1", "target": "b"}]  # the task name back to the node id
    assert from_argo(doc) == wf


def test_collapse_writes_both_skip_forms_back_as_the_task() -> None:
    assert collapse("(a-1 || a-1.Failed) && c", {}) == "a-1 && c"
    assert collapse("( a-1.Succeeded || a-1.Failed ) || c.Succeeded", {}) == "a-1 || c.Succeeded"
    # Two different tasks are no skip term: left as they are.
    assert collapse("(a-1 || c.Failed)", {}) == "(a-1 || c.Failed)"


def test_the_success_group_takes_a_skipped_node_task_only_when_asked() -> None:
    n = Node(id="fix_it", role="repairer", repair=RepairSpec(patch="repair_patch"))
    assert succeeded_group(n) == "(fix-it.Succeeded || fix-it-patch.Succeeded)"
    assert succeeded_group(n, skipped=True) == "(fix-it.Succeeded || fix-it.Skipped || fix-it-patch.Succeeded)"
    assert failed_term(n) == "fix-it-patch.Failed"
    assert failed_term(Node(id="plain_one", role="report")) == "plain-one.Failed"
