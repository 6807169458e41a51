"""The repair escalation ladder as ASL states: the node's Task catches every error into ``<node>/patch``, which
catches into ``<node>/replan``; every rung writes the node's result and goes on where the node would; read back
into the one IR node with its repair spec."""

from __future__ import annotations

import pytest

from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl, read_native
from alas_argo.ir import Catch, Edge, Node, Policy, RepairSpec, Workflow


def _ladder(repair: RepairSpec, policy: Policy | None = None, *, kind: str = "task") -> Workflow:
    extra = {"items": "start.jobs"} if kind == "map" else {}
    return Workflow(
        name="ladder",
        nodes=[Node(id="start", role="blueprint"),
               Node(id="fix", kind=kind, role="repairer", repair=repair, policy_ref="p", **extra),
               Node(id="check", role="validator"), Node(id="handler", role="report")],
        edges=[Edge(source="start", target="fix"), Edge(source="fix", target="check")],
        policies={"p": policy or Policy(on_failure="retry")})


def test_a_repair_node_is_a_task_state_per_rung_chained_by_catch() -> None:
    repair = RepairSpec(patch="repair_patch", replan="replan")
    wf = _ladder(repair)
    doc = to_asl(wf)
    states = doc["States"]
    assert states["fix"]["Catch"] == [{"ErrorEquals": ["States.ALL"], "Next": "fix/patch",
                                       "ResultPath": "$.errors.fix"}]
    assert "repair" not in states["fix"]["Parameters"]
    patch, replan = states["fix/patch"], states["fix/replan"]
    assert patch["Resource"].endswith("/repair_patch") and replan["Resource"].endswith("/replan")
    assert (patch["Parameters"]["rung"], replan["Parameters"]["rung"]) == ("patch", "replan")
    assert patch["Catch"] == [{"ErrorEquals": ["States.ALL"], "Next": "fix/replan", "ResultPath": "$.errors.fix"}]
    assert "Catch" not in replan  # nothing committed before it, no catch route: its failure ends the execution
    for st in (states["fix"], patch, replan):
        assert st["ResultPath"] == "$.results.fix" and st["Next"] == "check"
    native = read_native(doc)
    assert [n["id"] for n in native["nodes"]] == ["start", "fix", "check", "handler"]
    assert next(n for n in native["nodes"] if n["id"] == "fix")["repair"] == repair.to_json()
    assert native["policies"]["p"]["catch"] == []
    assert from_asl(doc) == wf


def test_the_last_rung_carries_the_nodes_catch_routes() -> None:
    wf = _ladder(RepairSpec(patch="repair_patch"), Policy(on_failure="retry",
                                                          catch=[Catch(errors=["InfeasibleError"], next="handler")]))
    doc = to_asl(wf)
    assert [c["Next"] for c in doc["States"]["fix"]["Catch"]] == ["fix/patch"]
    assert [c["Next"] for c in doc["States"]["fix/patch"]["Catch"]] == ["handler"]
    assert read_native(doc)["policies"]["p"]["catch"] == [{"errors": ["InfeasibleError"], "next": "handler"}]
    assert from_asl(doc) == wf


def test_a_map_node_climbs_the_ladder_inside_its_task() -> None:
    wf = _ladder(RepairSpec(patch="repair_patch"), kind="map")
    doc = to_asl(wf)
    assert not any("/" in name and not name.endswith("/item") for name in doc["States"])
    inner = doc["States"]["fix"]["ItemProcessor"]["States"]["fix/item"]
    assert inner["Parameters"]["repair"] == {"patch": "repair_patch", "maxPatches": 1, "maxReplans": 1}
    assert from_asl(doc) == wf


def test_in_alas_plan_only_the_last_rung_compensates() -> None:
    from alas_argo.workflows.plan import build

    states = to_asl(build())["States"]
    assert [c["Next"] for c in states["repair_1"]["Catch"]] == ["repair_1/patch"]
    assert [c["Next"] for c in states["repair_1/patch"]["Catch"]] == ["repair_1/replan"]
    assert [c["Next"] for c in states["repair_1/replan"]["Catch"]] == ["alas-undo-commit_v1"]


def test_alas_plan_gates_each_segment_with_a_chain_of_choice_states() -> None:
    """Segment k is entered through `disrupt_k/gate`: the blueprint's `revealed` >= k enters it, else the gate of
    segment k+1, the last one going to `finish` (so a run revealing fewer disruptions skips straight there)."""
    from alas_argo.engines.asl_parse import from_asl
    from alas_argo.workflows.plan import MAX_DISRUPTIONS, build

    wf = build()
    doc = to_asl(wf)
    states = doc["States"]
    for k in range(1, MAX_DISRUPTIONS + 1):
        gate = states[f"disrupt_{k}/gate"]
        skip = f"disrupt_{k + 1}/gate" if k < MAX_DISRUPTIONS else "finish"
        revealed = "$.results.blueprint.revealed"
        assert gate == {"Type": "Choice", "Choices": [{"And": [{"Variable": revealed, "IsPresent": True},
                                                               {"Variable": revealed, "NumericGreaterThanEquals": k}],
                                                       "Next": f"disrupt_{k}"}],
                        "Default": skip}
        before = "commit_v1" if k == 1 else f"commit_{k}"
        assert states[before]["Next"] == f"disrupt_{k}/gate"
    assert states["commit_4"]["Next"] == "finish"
    assert from_asl(doc) == wf


def test_a_gated_run_at_the_end_of_the_chain_is_refused() -> None:
    from alas_argo.engines.conformance import UnsupportedFeature
    from alas_argo.ir import Condition, Edge, Node, Workflow

    wf = Workflow(name="tail", nodes=[Node(id="a", role="x"), Node(id="b", role="y", when=Condition(
        path="a.n", op="ge", value=1))], edges=[Edge(source="a", target="b")])
    with pytest.raises(UnsupportedFeature, match="gate"):
        to_asl(wf)
