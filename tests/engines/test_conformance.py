"""One test per row of the conformance matrix, per engine: native rows are read back from the engine's own
fields, approximated rows round-trip through annotations, unsupported rows raise naming node and feature."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import main
from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo
from alas_argo.engines.argo_parse import read_native as argo_native
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl
from alas_argo.engines.asl_parse import read_native as asl_native
from alas_argo.engines.conformance import ENGINES, MATRIX, Support, UnsupportedFeature, matrix_json
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
from tests.engines.samples import with_node


def _retry(**kw: Any) -> Policy:
    return Policy(retry=Retry(max_attempts=3, backoff=Backoff(**kw)))


def _choice_join(concurrent: bool) -> Workflow:
    if concurrent:
        return Workflow(name="row", nodes=[Node(id="a", role="x"), Node(id="b", role="y"),
                                           Node(id="work", role="z", join="any_of")],
                        edges=[Edge(source="a", target="work"), Edge(source="b", target="work")])
    return Workflow(name="row", nodes=[
        Node(id="c", kind="choice", choices=[Branch(when=Condition(path="inputs.mode", value="a"), next="a")],
             default="b"), Node(id="a", role="x"), Node(id="b", role="y"), Node(id="work", role="z", join="any_of")],
        edges=[Edge(source="a", target="work"), Edge(source="b", target="work")], meta={"inputs": {"mode": "a"}})


def _parallel(bound: int | None) -> Workflow:
    return Workflow(name="row", nodes=[Node(id="x", role="v"), Node(id="y", role="v"),
                                       Node(id="work", kind="parallel", branches=["x", "y"], max_concurrency=bound)])


T = Node(id="work", role="solver")
CASES: dict[str, tuple[Callable[[], Workflow], list[str]]] = {
    "task": (lambda: with_node(T), ["role"]),
    "dependencies": (lambda: with_node(T), []),
    "any_of": (lambda: _choice_join(False), ["join"]),
    "any_of_concurrent": (lambda: _choice_join(True), ["join"]),
    "choice": (lambda: with_node(Node(id="work", kind="choice", choices=[
        Branch(when=Condition(path="inputs.items", op="ne", value="x"), next="t")], default="u"),
        extra=[Node(id="t", role="a"), Node(id="u", role="b")]), ["choices", "default"]),
    "gate": (lambda: with_node(Node(id="work", role="s", when=Condition(path="start.count", op="ge", value=2)),
                               extra=[Node(id="after", role="x")], edges=[Edge(source="start", target="work"),
                                                                          Edge(source="work", target="after")]),
             ["when"]),
    "parallel": (lambda: _parallel(None), ["branches"]),
    "parallel_concurrency": (lambda: _parallel(2), ["maxConcurrency"]),
    "branch_path": (lambda: Workflow(name="row", nodes=[
        Node(id="x", role="v"), Node(id="y", role="v"), Node(id="both", kind="parallel", branches=["x", "y"]),
        Node(id="work", kind="choice", choices=[Branch(when=Condition(path="x.n", op="ge", value=1), next="t")],
             default="u"), Node(id="t", role="a"), Node(id="u", role="b")],
        edges=[Edge(source="both", target="work")]), ["choices"]),
    "map": (lambda: with_node(Node(id="work", kind="map", role="agent", items="inputs.items")), ["items"]),
    "map_outputs": (lambda: Workflow(name="row", nodes=[
        Node(id="start", role="plan"), Node(id="work", kind="map", role="agent", items="start.jobs"),
        Node(id="after", role="merge")],
        edges=[Edge(source="start", target="work"), Edge(source="work", target="after")]), ["items"]),
    "map_concurrency": (lambda: with_node(Node(id="work", kind="map", role="agent", items="start.jobs",
                                               max_concurrency=3)), ["maxConcurrency", "items"]),
    "retry": (lambda: with_node(T, policy=Policy(retry=Retry(max_attempts=4))), ["policy.retry.maxAttempts"]),
    "retry_on": (lambda: with_node(T, policy=Policy(retry=Retry(max_attempts=2, retry_on=["ContractError"]))),
                 ["policy.retry.retryOn"]),
    "backoff_fixed": (lambda: with_node(T, policy=_retry(kind="fixed", initial=3)),
                      ["policy.retry.backoff.kind", "policy.retry.backoff.initial"]),
    "backoff_linear": (lambda: with_node(T, policy=_retry(kind="linear", initial=3)), ["policy.retry.backoff.kind"]),
    "backoff_exponential": (lambda: with_node(T, policy=_retry(kind="exponential", initial=2, factor=3)),
                            ["policy.retry.backoff.kind", "policy.retry.backoff.initial",
                             "policy.retry.backoff.factor"]),
    "backoff_max": (lambda: with_node(T, policy=_retry(initial=1, max=40)), ["policy.retry.backoff.max"]),
    # Delays 2 s then 4 s: the second would pass a 3 s cap.
    "backoff_max_binding": (lambda: with_node(T, policy=_retry(initial=2, factor=2, max=3)),
                            ["policy.retry.backoff.max"]),
    "backoff_jitter": (lambda: with_node(T, policy=_retry(jitter=0.5)), ["policy.retry.backoff.jitter"]),
    "timeout": (lambda: with_node(T, policy=Policy(timeout=90)), ["policy.timeout"]),
    "catch": (lambda: with_node(T, policy=Policy(catch=[Catch(errors=["ContractError"], next="h")]),
                                extra=[Node(id="h", role="report")]), ["policy.catch"]),
    "idempotency": (lambda: with_node(T, policy=Policy(idempotency=Idempotency(key="{run}-{node}"))),
                    ["policy.idempotency.key"]),
    "compensation": (lambda: with_node(Node(id="work", role="commit", side_effect="write", compensation="undo"),
                                       extra=[Node(id="undo", role="revert"), Node(id="after", role="x")],
                                       edges=[Edge(source="start", target="work"),
                                              Edge(source="work", target="after")]),
                     ["compensation"]),
    "loop": (lambda: with_node(Node(id="work", role="solver",
                                    loop=Loop(until=Condition(path="output.ok", op="exists"))),
                               policy=Policy(loop_guard=LoopGuard(max_iters=4, deadline=60))),
             ["loop", "policy.loopGuard"]),
    "on_failure": (lambda: with_node(T, policy=Policy(on_failure="skip")), ["policy.onFailure"]),
    "params": (lambda: with_node(Node(id="work", role="solver", params={"limit": 2, "tags": ["a"]})), ["params"]),
    "contracts": (lambda: with_node(Node(id="work", role="s", output={"type": "object"})), ["output"]),
    "repair": (lambda: with_node(Node(id="work", role="s", repair=RepairSpec(patch="repairer"))), ["repair"]),
    "side_effect": (lambda: with_node(Node(id="work", role="s", side_effect="read")), ["sideEffect"]),
}

COMPILE = {"argo": (lambda wf: to_argo(wf, image="alas:test"), from_argo, argo_native),
           "asl": (to_asl, from_asl, asl_native)}


def _probe(native: dict[str, Any], path: str) -> Any:
    node = next(n for n in native["nodes"] if n["id"] == "work")
    doc: Any = native["policies"][node["policyRef"]] if path.startswith("policy.") else node
    for part in path.removeprefix("policy.").split("."):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


def test_every_row_has_a_case() -> None:
    assert sorted(CASES) == sorted(f.key for f in MATRIX)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("feature", MATRIX, ids=[f.key for f in MATRIX])
def test_row(feature: Any, engine: str) -> None:
    build, probes = CASES[feature.key]
    wf = build()
    assert feature.uses(wf, wf.node("work")), "the case must exercise the row"
    status, _ = feature.support(engine)
    compile_, parse, native_reader = COMPILE[engine]
    if status is Support.UNSUPPORTED:
        with pytest.raises(UnsupportedFeature) as err:
            compile_(wf)
        assert err.value.node == "work" and err.value.feature == feature.key
        assert "work" in str(err.value) and feature.key in str(err.value)
        return
    doc = compile_(wf)
    assert parse(doc) == wf
    if status is Support.NATIVE:
        native = native_reader(doc)
        original = {"nodes": [n.to_json() for n in wf.nodes],
                    "policies": {k: p.to_json() for k, p in wf.policies.items()}}
        for path in probes:
            assert _probe(native, path) == _probe(original, path), path


@pytest.mark.timeout(120)  # 31 s measured in the whole suite on a loaded 2-core machine
def test_matrix_json_and_cli() -> None:
    rows = matrix_json()
    assert {r["feature"] for r in rows} == {f.key for f in MATRIX}
    assert all(r[e]["support"] in {"native", "approximated", "unsupported"} for r in rows for e in ENGINES)
    out = subprocess.run(["alas", "engines", "matrix", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == rows
    table = subprocess.run(["alas", "engines", "matrix"], capture_output=True, text=True, check=True).stdout
    assert all(f.key in table for f in MATRIX)


def test_reverse_parsers_reject_foreign_documents() -> None:
    from alas_argo.errors import InputError

    with pytest.raises(InputError, match="not an Argo Workflow"):
        from_argo({"kind": "Pod"})
    with pytest.raises(InputError, match="entrypoint"):
        from_argo({"kind": "Workflow", "spec": {"entrypoint": "x", "templates": []}})
    with pytest.raises(InputError, match="not an ASL state machine"):
        from_asl({"States": {}})
    with pytest.raises(InputError, match="unsupported state type"):
        from_asl({"StartAt": "w", "States": {"w": {"Type": "Wait", "Seconds": 1, "End": True}}})


def test_unsupported_feature_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UnsupportedFeature) as err:
        to_asl(_parallel(2))
    assert str(err.value) == ("asl cannot express parallel_concurrency (Parallel states have no concurrency bound) "
                              "(node work, feature parallel_concurrency)")
    # Through the CLI: a definitions directory holding that workflow renders nothing and says why in one line.
    defs = tmp_path / "defs"
    defs.mkdir()
    (defs / "__init__.py").write_text(
        "from alas_argo.ir import Node, Workflow\n"
        "WORKFLOWS = {'bad': lambda: Workflow(name='bad', nodes=[Node(id='x', role='v'), Node(id='y', role='v'),\n"
        "    Node(id='work', kind='parallel', branches=['x', 'y'], max_concurrency=2)])}\n")
    out = tmp_path / "out"
    try:
        assert main(["render", "--workflows", str(defs), "--out", str(out), "--no-chart"]) == 2
    finally:
        sys.modules.pop("workflows", None)  # the next test loads the real definitions again
    err_line = capsys.readouterr().err.strip()
    assert "\n" not in err_line and "node work" in err_line and "feature parallel" in err_line
    assert not out.exists()  # nothing half-written


@pytest.mark.parametrize(("ids", "why"), [(["Work", "work"], "already used"), (["_x", "y"], "not a valid"),
                                         (["main", "y"], "already used")])
def test_argo_names_must_be_distinct_and_valid(ids: list[str], why: str) -> None:
    wf = Workflow(name="names", nodes=[Node(id=i, role="r") for i in ids])
    with pytest.raises(UnsupportedFeature, match=why) as err:
        to_argo(wf, image="alas:test")
    assert err.value.node in ids and err.value.feature == "node_id"


def test_an_asl_parallel_keeps_each_branchs_output_by_its_id() -> None:
    """The IR's parallel output is each branch's output by branch id (the local runtime's, Argo's gather step's):
    ASL's Parallel result is the list of the branches' final states, so a ResultSelector picks each output."""
    state = to_asl(_parallel(None))["States"]["work"]
    assert state["ResultSelector"] == {"x.$": "$[0].results.x", "y.$": "$[1].results.y"}
    assert state["ResultPath"] == "$.results.work"
