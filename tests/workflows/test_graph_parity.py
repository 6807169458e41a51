"""One IR, two engines, the same graph decisions: small workflows of the IR's graph features (an any_of join, a
parallel group, a map, a gate, choices reading each of them) run by the local runtime and walked through their
compiled Argo workflow as Argo runs them; every node ends alike (ran or skipped), and every output, each task's
view of its dependencies included, is the same document on both engines.

Before, the Argo steps saw another graph: an any_of join read no dependency (a choice on the winner failed), a
parallel node's output was its branches' log keys (a choice on ``<group>.<branch>.n`` silently took its default),
and a choice could read only its direct dependencies (a map's crashed it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo import step_handlers
from alas_argo.cli import main
from alas_argo.engines.argo import to_argo
from alas_argo.errors import InputError
from alas_argo.ir import Join, NodeKind, Workflow
from alas_argo.log import ExecutionLog, FsStore
from alas_argo.runtime import NodeContext, NodeState, Runtime
from alas_argo.step_context import StepContext, StepOutput, output_key
from tests.runtime.runtime_helpers import workflow
from tests.workflows.argo_walker import Walker


def _probe(n: int, **extra: Any) -> dict[str, Any]:
    return {"role": "probe", "params": {"n": n}, **extra}


def _choice(node_id: str, path: str, value: int = 5) -> dict[str, Any]:
    return {"id": node_id, "kind": "choice", "default": f"{node_id}_no",
            "choices": [{"when": {"path": path, "op": "ge", "value": value}, "next": f"{node_id}_yes"}]}


def _branches(node_id: str) -> list[dict[str, Any]]:
    return [{"id": f"{node_id}_yes", **_probe(1)}, {"id": f"{node_id}_no", **_probe(0)}]


def any_of() -> Workflow:
    # Both candidates succeed (n = 1, then 9); the join reads the winner, the first declared. A choice reads only
    # the winner: locally a loser's output exists or not depending on whether it ended before the join.
    return workflow([{"id": "first", **_probe(1)}, {"id": "second", **_probe(9)},
                     {"id": "use", **_probe(0), "join": "any_of"},
                     {**_choice("route", "first.n"), "join": "any_of"}, *_branches("route")],
                    [("first", "use"), ("second", "use"), ("first", "route"), ("second", "route")])


def parallel() -> Workflow:
    # A choice through the group (a: n = 7) and one on a branch the choice does not depend on directly (b: 1).
    return workflow([{"id": "a", **_probe(7)}, {"id": "b", **_probe(1)},
                     {"id": "both", "kind": "parallel", "branches": ["a", "b"]}, {"id": "use", **_probe(0)},
                     _choice("via_group", "both.a.n"), *_branches("via_group"),
                     _choice("via_branch", "b.n", 1), *_branches("via_branch")],
                    [("both", "use"), ("both", "via_group"), ("both", "via_branch")])


def mapped() -> Workflow:
    # A map's output is the list of its items' outputs: a choice indexes it, a task reads the whole list.
    return workflow([{"id": "fan", "kind": "map", "role": "probe", "items": "inputs.xs"}, {"id": "use", **_probe(0)},
                     _choice("route", "fan.1.n"), *_branches("route")],
                    [("fan", "use"), ("fan", "route")], meta={"inputs": {"xs": "[3, 8]"}})


def gated() -> Workflow:
    # A gated-off node has no output: a choice on it is decided on a missing path (false) on both engines; a
    # gate on a string field compares the string itself; a node past a gated one reads it only if it ran.
    return workflow([{"id": "start", **_probe(2)}, {"id": "maybe", **_probe(9), "when": {
                         "path": "start.n", "op": "gt", "value": 5}},
                     {"id": "named", "role": "probe", "params": {"n": "ft06"}},
                     {"id": "same", **_probe(1), "when": {"path": "named.n", "op": "eq", "value": "ft06"}},
                     _choice("route", "maybe.n"), *_branches("route"), {"id": "use", **_probe(0)},
                     {"id": "past", **_probe(8)}],
                    [("start", "maybe"), ("start", "route"), ("start", "use"), ("named", "same"), ("maybe", "past"),
                     ("same", "past")])


def chained() -> Workflow:
    # A choice's branch not taken is skipped, and so is what follows it only (not a join after both).
    return workflow([{"id": "start", **_probe(2)}, _choice("route", "start.n"), *_branches("route"),
                     {"id": "after_yes", **_probe(5)}, {"id": "after_no", **_probe(6)},
                     {"id": "join", **_probe(7), "join": "any_of"}],
                    [("start", "route"), ("route_yes", "after_yes"), ("route_no", "after_no"),
                     ("after_yes", "join"), ("after_no", "join")])


def looped() -> Workflow:
    # A loop: each iteration sees the one before (n grows by one), until n reaches 3 under a guard of 5; what
    # follows reads the last iteration's output.
    return workflow([{"id": "grow", "role": "probe", "params": {"n": 0, "grow": True}, "policyRef": "g",
                      "loop": {"until": {"path": "output.n", "op": "ge", "value": 3}}},
                     {"id": "use", **_probe(0)}, _choice("route", "grow.n", 3), *_branches("route")],
                    [("grow", "use"), ("grow", "route")], policies={"g": {"loopGuard": {"maxIters": 5}}})


def caught(consumed: bool = False, *, fail: bool = True, gate: str = "ge") -> Workflow:
    # A node failing for good, caught: its handler runs, the run goes on; a choice elsewhere reads the failed
    # node as missing. (`consumed`: with dependents, which do not run: a chain, and a gated one (``gate`` its
    # operator against 0 on other.n = 4) whose own dependent must not run either.)
    return workflow([{"id": "risky", **_probe(1, params={"n": 1, "fail": fail}), "policyRef": "c"},
                     {"id": "handler", **_probe(2)}, {"id": "other", **_probe(4)},
                     _choice("route", "risky.n", 0), *_branches("route"),
                     *([{"id": "after", **_probe(3)}, {"id": "then", **_probe(5)},
                        {"id": "gated", **_probe(6), "when": {"path": "other.n", "op": gate, "value": 0}},
                        {"id": "last", **_probe(7)}] if consumed else [])],
                    [("other", "route"),
                     *([("risky", "after"), ("after", "then"), ("risky", "gated"), ("other", "gated"),
                        ("gated", "last")] if consumed else [])],
                    policies={"c": {"catch": [{"errors": ["*"], "next": "handler"}]}})


def caught_consumed() -> Workflow:
    return caught(consumed=True)


def caught_fine() -> Workflow:
    # The same caught node not failing: its consumers run, the handler does not; past a gate that is false the
    # run goes on.
    return caught(consumed=True, fail=False, gate="lt")


def caught_ladder() -> Workflow:
    # The caught node is a repair ladder whose every rung fails: its consumer waits on the last rung.
    return workflow([{"id": "risky", **_probe(1, params={"n": 1, "fail": True}), "policyRef": "c",
                      "repair": {"patch": "probe", "replan": "probe"}},
                     {"id": "handler", **_probe(2)}, {"id": "after", **_probe(3)}],
                    [("risky", "after")], policies={"c": {"catch": [{"errors": ["*"], "next": "handler"}]}})


def skipped() -> Workflow:
    # A node failing for good under on_failure skip: its dependents run without its output.
    return workflow([{"id": "risky", **_probe(1, params={"n": 1, "fail": True}), "policyRef": "s"},
                     {"id": "after", **_probe(3)}, _choice("route", "risky.n", 0), *_branches("route")],
                    [("risky", "after"), ("risky", "route")], policies={"s": {"onFailure": "skip"}})


def _local_probe(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    if ctx.params.get("fail"):
        raise InputError("told to fail", where=f"node {ctx.node_id}")
    if ctx.params.get("grow"):
        return {"n": (ctx.previous or {"n": 0})["n"] + 1, "iteration": ctx.iteration, "saw": ctx.deps}
    return {"n": ctx.item if ctx.item is not None else ctx.params["n"], "saw": ctx.deps}


def _argo_probe(ctx: StepContext) -> StepOutput:
    if ctx.input.params.get("fail"):
        raise InputError("told to fail", where=f"node {ctx.input.node}")
    if ctx.input.params.get("grow"):
        return StepOutput({"n": (ctx.previous or {"n": 0})["n"] + 1, "iteration": ctx.iteration + 1,
                           "saw": {d: ctx.output(d) for d in ctx.dep_names()}})
    n = ctx.input.item if ctx.input.item is not None else ctx.input.params["n"]
    # No output parameter of its own: what a gate reads, the step exports (--export).
    return StepOutput({"n": n, "saw": {d: ctx.output(d) for d in ctx.dep_names()}})


@pytest.mark.parametrize("build", [any_of, parallel, mapped, gated, chained, looped, caught, caught_consumed,
                                   caught_ladder, caught_fine, skipped])
def test_both_engines_take_the_same_turns_and_hand_over_the_same_outputs(
        build: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wf = build()
    inputs = {k: str(v) for k, v in (wf.meta.get("inputs") or {}).items()}
    local = Runtime({"probe": _local_probe}).run(wf, {k: json.loads(v) for k, v in inputs.items()})
    assert local.ok, local.errors
    monkeypatch.setitem(step_handlers.HANDLERS, "probe", _argo_probe)
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path))
    walk = Walker(to_argo(wf, image="alas:test"), main, name="g", arguments=inputs).run()
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]

    log = ExecutionLog(FsStore(tmp_path), "g")
    # Argo cannot stop an any_of join's losers: they run to the end there, and are dropped locally.
    losers = {e.source for e in wf.edges if wf.node(e.target).join is Join.ANY_OF}
    for node in wf.nodes:
        ran = local.states[node.id] is NodeState.EXECUTED
        if node.id not in losers or ran:
            assert (walk.phases[node.id.replace("_", "-")] == "Succeeded") is ran, (node.id, walk.phases)
        if not ran or node.kind is NodeKind.MAP:
            continue
        record = log.idempotency_get(output_key("g", node.id))
        assert record is not None and record["doc"] == local.output(node.id), node.id


def test_a_caught_failure_with_dependents_ends_the_argo_workflow_succeeded_as_locally(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The consumers of a caught failure do not run on either engine, and the workflow succeeds on both: they wait
    on a pod-less task after the caught node, so what does not run sits under a task that succeeded (Argo v3.6.5
    gives a task that did not complete its branch's phase, assessDAGPhase; without that task the workflow ended
    Failed on the real controller, and its exit handler compensated)."""
    wf = caught_consumed()
    local = Runtime({"probe": _local_probe}).run(wf)
    assert local.ok and local.states["handler"] is NodeState.EXECUTED
    assert {local.states[n] for n in ("after", "then", "gated", "last")} == {NodeState.SKIPPED}
    monkeypatch.setitem(step_handlers.HANDLERS, "probe", _argo_probe)
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path))
    walk = Walker(to_argo(wf, image="alas:test"), main, name="g").run()
    assert walk.status == "Succeeded"
    assert {n: walk.phases[n] for n in ("risky", "risky-ended", "handler", "after", "then", "gated", "last")} == {
        "risky": "Failed", "risky-ended": "Succeeded", "handler": "Succeeded", "after": "Skipped",
        "then": "Omitted", "gated": "Skipped", "last": "Skipped"}
    assert [p.template for p in walk.pods if p.template.startswith("risky-ended")] == []  # no pod


def test_without_the_task_after_it_a_caught_failure_fails_the_walk(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The walker's model of Argo's phase is what makes the task needed: the same phases read with the consumers
    hanging off the caught node itself (as the compiler wrote them before) make the DAG Failed."""
    monkeypatch.setitem(step_handlers.HANDLERS, "probe", _argo_probe)
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path))
    doc = to_argo(caught_consumed(), image="alas:test")
    walk = Walker(doc, main, name="g").run()
    tasks = {t["name"]: t for t in next(t for t in doc["spec"]["templates"] if t["name"] == "main")["dag"]["tasks"]}
    assert Walker.dag_phase(tasks, walk.phases) == walk.status == "Succeeded"
    direct = {n: {**t, "depends": t["depends"].replace("risky-ended", "risky")} if "risky-ended" in
              t.get("depends", "") else t for n, t in tasks.items() if n != "risky-ended"}
    assert sorted(n for n, t in tasks.items() if "risky-ended" in t.get("depends", "")) == ["after", "gated"]
    assert Walker.dag_phase(direct, walk.phases) == "Failed"


@pytest.mark.parametrize("build", [caught_consumed, caught_ladder, caught_fine])
def test_a_caught_graph_reads_back_lints_clean_and_fits_argos_schema(build: Any) -> None:
    """The task after a caught node is the compiler's, not the user's: the document reads back as the same IR,
    its references check, and Argo's CRD schema takes its pod-less template."""
    from alas_argo.engines.argo_parse import from_argo
    from alas_argo.engines.lint import lint_argo
    from tests.argo_schemas import SKIP_REASON, argo_schema_dir, argo_validator

    wf = build()
    doc = to_argo(wf, image="alas:test")
    assert from_argo(doc) == wf
    assert lint_argo(doc) == []
    assert {"name": "ended", "suspend": {"duration": "0"}} in doc["spec"]["templates"]
    if argo_schema_dir() is None:
        pytest.skip(SKIP_REASON)
    assert [e.message for e in argo_validator("Workflow").iter_errors(doc)] == []


def test_a_catch_naming_errors_keeps_its_consumers_on_the_failed_node(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Argo runs the handler after any failure, so only a `*` route is bridged: under a route naming errors, an
    unmatched failure fails the run locally, and the consumers hanging off the failed node end the Argo workflow
    Failed too (after a matched one as well: the difference the conformance row `catch` states)."""
    wf = caught(consumed=True).model_copy(update={"policies": {"c": caught().policies["c"].model_copy(update={
        "catch": [caught().policies["c"].catch[0].model_copy(update={"errors": ["IntegrityError"]})]})}})
    doc = to_argo(wf, image="alas:test")
    assert "ended" not in {t["name"] for t in doc["spec"]["templates"]}
    local = Runtime({"probe": _local_probe}).run(wf)
    assert not local.ok and local.states["handler"] is not NodeState.EXECUTED  # InputError is not caught
    monkeypatch.setitem(step_handlers.HANDLERS, "probe", _argo_probe)
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path))
    walk = Walker(doc, main, name="g").run()
    assert walk.status == "Failed" and walk.phases["after"] == "Omitted"


def test_a_node_named_as_the_task_after_a_caught_node_is_refused() -> None:
    """`<node>-ended` is the compiler's: a user's node of that name would be a second task of one name."""
    from alas_argo.engines.conformance import UnsupportedFeature

    wf = workflow([{"id": "risky", **_probe(1), "policyRef": "c"}, {"id": "handler", **_probe(2)},
                   {"id": "after", **_probe(3)}, {"id": "risky-ended", **_probe(4)}], [("risky", "after")],
                  policies={"c": {"catch": [{"errors": ["*"], "next": "handler"}]}})
    with pytest.raises(UnsupportedFeature, match=r"'risky-ended' .* already used by the task after caught node risky"):
        to_argo(wf, image="alas:test")
