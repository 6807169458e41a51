"""The repair escalation ladder as Argo DAG tasks (alas_argo.engines.argo_ladder): the node's own task, one task
per later rung started by the failure of the one below, consumers that wait for any rung to succeed and read
the one output recorded under the node; read back into the one IR node with its repair spec."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_ladder import collapse
from alas_argo.engines.argo_parse import from_argo, read_native
from alas_argo.engines.conformance import UnsupportedFeature
from alas_argo.errors import WorkflowError
from alas_argo.ir import Catch, Edge, Node, Policy, RepairSpec, Workflow


def _ladder(repair: RepairSpec, policy: Policy | None = None, **node: Any) -> Workflow:
    return Workflow(
        name="ladder",
        nodes=[Node(id="start", role="blueprint"), Node(id="fix_it", role="repairer", repair=repair,
                                                        policy_ref="p", **node),
               Node(id="check", role="validator"), Node(id="handler", role="report")],
        edges=[Edge(source="start", target="fix_it"), Edge(source="fix_it", target="check")],
        policies={"p": policy or Policy(on_failure="retry")})


def _tasks(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    main = next(t for t in doc["spec"]["templates"] if t["name"] == doc["spec"]["entrypoint"])
    return {t["name"]: t for t in main["dag"]["tasks"]}


def _args(doc: dict[str, Any], template: str) -> list[str]:
    t = next(t for t in doc["spec"]["templates"] if t["name"] == template)
    return list(t["container"]["args"])


def test_a_repair_node_is_three_tasks_each_rung_started_by_the_failure_below() -> None:
    repair = RepairSpec(patch="repair_patch", replan="replan")
    wf = _ladder(repair)
    doc = to_argo(wf, image="alas:test")
    tasks = _tasks(doc)
    assert [n for n in tasks if n.startswith("fix-it")] == ["fix-it", "fix-it-patch", "fix-it-replan"]
    assert tasks["fix-it"]["depends"] == "start"
    assert tasks["fix-it-patch"]["depends"] == "fix-it.Failed"
    assert tasks["fix-it-replan"]["depends"] == "fix-it-patch.Failed"
    # Argo refuses continueOn in a DAG that uses depends (a real controller answered so on submit): a failed
    # rung is consumed by the next rung's depends, and only leaves decide the workflow's phase.
    assert not [n for n, t in tasks.items() if "continueOn" in t]
    assert tasks["check"]["depends"] == "(fix-it.Succeeded || fix-it-patch.Succeeded || fix-it-replan.Succeeded)"
    # The node's own step no longer climbs in its pod; each rung runs its role as the node, at its level.
    assert "--repair" not in _args(doc, "fix-it") and "--rung" not in _args(doc, "fix-it")
    for rung, role in (("patch", "repair-patch"), ("replan", "replan")):
        args = _args(doc, f"fix-it-{rung}")
        assert args[:4] == ["step", role, "--node", "fix_it"]
        assert args[args.index("--rung") + 1] == rung
    # The consumer reads the one output recorded under the node, not a task output a failed rung never set.
    check = _args(doc, "check")
    assert check[check.index("--recorded") + 1] == "fix_it" and "--input" not in check
    assert "arguments" not in tasks["check"]
    # Back to the one IR node, its repair spec read from the rungs; the rungs are no nodes.
    native = read_native(doc)
    assert [n["id"] for n in native["nodes"]] == ["start", "fix_it", "check", "handler"]
    assert next(n for n in native["nodes"] if n["id"] == "fix_it")["repair"] == repair.to_json()
    assert native["edges"] == [{"source": "start", "target": "fix_it"}, {"source": "fix_it", "target": "check"}]
    assert native["policies"]["p"]["catch"] == [] and native["policies"]["p"]["onFailure"] == "rollback"
    assert from_argo(doc) == wf


def test_without_a_replan_role_the_patch_is_the_last_rung() -> None:
    doc = to_argo(_ladder(RepairSpec(patch="repair_patch")), image="alas:test")
    tasks = _tasks(doc)
    assert [n for n in tasks if n.startswith("fix-it")] == ["fix-it", "fix-it-patch"]
    assert tasks["fix-it-patch"]["depends"] == "fix-it.Failed"
    assert tasks["check"]["depends"] == "(fix-it.Succeeded || fix-it-patch.Succeeded)"


@pytest.mark.parametrize("policy", [Policy(on_failure="skip"),
                                    Policy(on_failure="retry", catch=[Catch(errors=["*"], next="handler")])])
def test_a_caught_or_skipped_ladder_ends_on_its_last_rung(policy: Policy) -> None:
    wf = _ladder(RepairSpec(patch="repair_patch", replan="replan"), policy)
    doc = to_argo(wf, image="alas:test")
    tasks = _tasks(doc)
    assert not [n for n, t in tasks.items() if "continueOn" in t]
    if policy.catch:
        assert tasks["handler"]["depends"] == "fix-it-replan.Failed"  # the handler runs once the ladder gave up
    else:  # skip: the consumer runs once some rung succeeded or the last one failed
        assert tasks["check"]["depends"] == ("((fix-it.Succeeded || fix-it-patch.Succeeded || "
                                             "fix-it-replan.Succeeded) || fix-it-replan.Failed)")
    assert from_argo(doc) == wf


def test_a_map_node_climbs_the_ladder_in_its_item_pods() -> None:
    wf = Workflow(name="ladder", nodes=[
        Node(id="start", role="blueprint"),
        Node(id="fan", kind="map", role="job_agent", items="start.jobs", policy_ref="p",
             repair=RepairSpec(patch="repair_patch"))],
        edges=[Edge(source="start", target="fan")], policies={"p": Policy(on_failure="retry")})
    doc = to_argo(wf, image="alas:test")
    assert [n for n in _tasks(doc)] == ["start", "fan"]
    args = _args(doc, "fan-item")
    assert "--rung" not in args and args[args.index("--repair") + 1] == '{"maxPatches":1,"maxReplans":1,"patch":' \
        '"repair_patch"}'
    assert from_argo(doc) == wf


def test_collapse_reads_a_ladder_back_as_its_node() -> None:
    ladders = {"fix-it": ["fix-it-patch", "fix-it-replan"]}
    assert collapse("a && (fix-it.Succeeded || fix-it.Skipped || fix-it-patch.Succeeded || "
                    "fix-it-replan.Succeeded)", ladders) == "a && fix-it.Succeeded"
    assert collapse("fix-it-replan.Failed", ladders) == "fix-it.Failed"
    assert collapse("not-fix-it-replan.Failed", ladders) == "not-fix-it-replan.Failed"


@pytest.mark.parametrize("map_first", [True, False])
def test_a_node_named_like_a_maps_item_template_is_refused(map_first: bool) -> None:
    fan = Node(id="fan", kind="map", role="job_agent", items="start.jobs")
    other = Node(id="fan_item", role="report")
    nodes = [Node(id="start", role="blueprint"), *([fan, other] if map_first else [other, fan])]
    wf = Workflow(name="names", nodes=nodes, edges=[Edge(source="start", target="fan")])
    with pytest.raises(WorkflowError, match="'fan-item'") as err:
        to_argo(wf, image="alas:test")
    assert isinstance(err.value, UnsupportedFeature) and err.value.feature == "node_id"
    # The node that came second is named, with what holds the name already.
    assert err.value.node == ("fan_item" if map_first else "fan")
    assert "the item template of map node fan" in str(err.value) and "node fan_item" in str(err.value)


@pytest.mark.parametrize(("other", "taken"), [("fix_it_patch", "patch rung of node fix_it"),
                                              ("fix_it_replan", "replan rung of node fix_it")])
def test_a_node_named_like_a_ladder_rung_is_refused(other: str, taken: str) -> None:
    wf = _ladder(RepairSpec(patch="repair_patch", replan="replan"))
    wf = wf.model_copy(update={"nodes": [*wf.nodes, Node(id=other, role="report")]})
    with pytest.raises(UnsupportedFeature, match=taken) as err:
        to_argo(wf, image="alas:test")
    assert err.value.node == other


def test_a_maps_consumer_derives_the_item_keys_and_no_argument_grows_with_the_fan_out() -> None:
    wf = Workflow(name="names", nodes=[Node(id="start", role="blueprint"),
                                       Node(id="fan", kind="map", role="job_agent", items="start.jobs"),
                                       Node(id="report", role="report")],
                  edges=[Edge(source="start", target="fan"), Edge(source="fan", target="report")])
    doc = to_argo(wf, image="alas:test")
    templates = {t["name"]: t for t in doc["spec"]["templates"]}
    # The map's DAG fans out and hands nothing on: no aggregated list of keys anywhere.
    assert [t["name"] for t in templates["fan"]["dag"]["tasks"]] == ["item"]
    assert "outputs" not in templates["fan"]
    args = templates["report"]["container"]["args"]
    assert args[args.index("--mapped") + 1] == "fan=start.jobs"
    assert not any("in-fan" in a for a in args)
    main_tasks = {t["name"]: t for t in templates["main"]["dag"]["tasks"]}
    assert all(p["name"] != "in-fan" for p in main_tasks["report"].get("arguments", {}).get("parameters", []))
    # A node may now be called what the removed collect step was.
    renamed = Workflow(name="names", nodes=[*wf.nodes[:2], Node(id="collect_keys", role="report")],
                       edges=[Edge(source="start", target="fan"), Edge(source="fan", target="collect_keys")])
    assert any(t["name"] == "collect-keys" for t in to_argo(renamed, image="alas:test")["spec"]["templates"])


def test_an_idempotency_key_naming_a_map_is_refused() -> None:
    wf = Workflow(name="names", nodes=[Node(id="start", role="blueprint"),
                                       Node(id="fan", kind="map", role="job_agent", items="start.jobs"),
                                       Node(id="report", role="report", policy_ref="once")],
                  edges=[Edge(source="start", target="fan"), Edge(source="fan", target="report")],
                  policies={"once": Policy(idempotency={"key": "{run}-{fan}"})})
    with pytest.raises(UnsupportedFeature, match="names map node fan") as err:
        to_argo(wf, image="alas:test")
    assert err.value.node == "report"
