"""IR -> engine -> IR is identical, for hand-built workflows and for generated policies."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo, read_native
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl
from alas_argo.engines.asl_parse import read_native as asl_native
from alas_argo.engines.conformance import MATRIX, UnsupportedFeature
from alas_argo.ir import Backoff, Catch, Edge, Idempotency, LoopGuard, Node, Policy, RepairSpec, Retry, Workflow
from tests.engines.samples import kitchen_sink, minimal

ENGINES = {
    "argo": (lambda wf: to_argo(wf, image="alas:test"), from_argo),
    "argo-template": (lambda wf: to_argo(wf, image="alas:test", kind="WorkflowTemplate", namespace="alas"),
                      from_argo),
    "asl": (to_asl, from_asl),
}


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("build", [kitchen_sink, minimal], ids=["kitchen_sink", "minimal"])
def test_round_trip_is_identical(engine: str, build: Any) -> None:
    wf = build()
    compile_, parse = ENGINES[engine]
    back = parse(compile_(wf))
    assert back == wf
    # Order and types too, not just equality of the models: compare the wire forms field by field.
    assert back.to_json() == wf.to_json()
    assert list(back.policies) == list(wf.policies) or set(back.policies) == set(wf.policies)
    for name, policy in wf.policies.items():
        assert back.policies[name].model_dump() == policy.model_dump()
        assert type(back.policies[name].retry.backoff.initial) is type(policy.retry.backoff.initial)


def test_minimal_workflow_needs_no_annotations() -> None:
    doc = to_argo(minimal(), image="alas:test")
    assert "annotations" not in doc["metadata"]
    templates = {t["name"]: t for t in doc["spec"]["templates"]}
    assert "alas-argo.dev/node-extras" not in templates["only"]["metadata"]["annotations"]


def test_argo_native_reading_recovers_native_policy_fields() -> None:
    """Without any annotation, the fields the matrix calls native come back from Argo's own fields."""
    wf = kitchen_sink()
    native = read_native(to_argo(wf, image="alas:test"))
    io = native["policies"]["io"]
    assert io["retry"]["maxAttempts"] == 4
    assert io["retry"]["backoff"]["initial"] == 1.0 and io["retry"]["backoff"]["factor"] == 3.0
    # The cap (30 s) is reached by none of the delays (1, 3, 9 s) and Argo v3.6.5 has no field for it: it
    # travels in the policy annotation only (from_argo restores it).
    assert "max" not in io["retry"]["backoff"] and io["timeout"] == 60.0
    assert from_argo(to_argo(wf, image="alas:test")).policies["io"].retry.backoff.max == 30.0
    assert native["policies"]["commit"]["retry"]["backoff"]["kind"] == "fixed"
    assert native["policies"]["commit"]["retry"]["retryOn"] == ["*"]
    nodes = {n["id"]: n for n in native["nodes"]}
    assert nodes["merged"]["join"] == "any_of"
    assert nodes["agents"]["items"] == "blueprint.jobs" and nodes["agents"]["maxConcurrency"] == 4
    assert nodes["bench"]["items"] == "inputs.cases"
    assert nodes["checks"]["branches"] == ["check_a", "check_b"]
    assert nodes["commit"]["compensation"] == "uncommit"
    assert nodes["route"]["choices"][1]["when"]["value"] == ["fast", "quick"]
    assert {"source": "checks", "target": "commit"} in native["edges"]


def test_asl_native_reading_recovers_native_policy_fields() -> None:
    wf = kitchen_sink()
    native = asl_native(to_asl(wf))
    io = native["policies"]["io"]
    assert io["retry"]["maxAttempts"] == 4 and io["retry"]["backoff"]["factor"] == 3.0
    assert io["retry"]["backoff"]["jitter"] == 1.0 and io["retry"]["backoff"]["max"] == 30.0
    assert native["policies"]["agents"]["retry"]["retryOn"] == ["TransientError", "ContractError"]
    assert native["policies"]["fragile"]["catch"] == [{"errors": ["ContractError", "Timeout"], "next": "handler"}]
    nodes = {n["id"]: n for n in native["nodes"]}
    assert nodes["route"]["choices"][0]["when"] == {"path": "agents.count", "op": "gt", "value": 2,
                                                    "negate": False}
    assert nodes["merged"]["join"] == "any_of"
    assert nodes["commit"]["compensation"] == "uncommit"


def test_annotations_are_what_makes_approximations_lossless() -> None:
    """Strip the annotations and the approximated fields are lost: the extras are load-bearing."""
    wf = kitchen_sink()
    doc = copy.deepcopy(to_argo(wf, image="alas:test"))
    for t in doc["spec"]["templates"]:
        for key in ("alas-argo.dev/node-extras", "alas-argo.dev/policy-extras"):
            (t.get("metadata") or {}).get("annotations", {}).pop(key, None)
    doc["metadata"].pop("annotations", None)
    lossy = read_native(doc)
    assert lossy["policies"]["agents"]["retry"]["backoff"]["kind"] != "linear"
    assert from_argo(to_argo(wf, image="alas:test")).policies["agents"].retry.backoff.kind == "linear"


_names = st.sampled_from(["TransientError", "Timeout", "ContractError", "StoreUnavailable", "InputError", "*"])
_seconds = st.one_of(st.integers(1, 600).map(float), st.sampled_from([0.05, 0.25, 1.5, 2.75]))
# Keyword construction through lambdas: st.builds would also fill the camelCase alias parameters.
_backoff = st.tuples(st.sampled_from(["fixed", "linear", "exponential"]), _seconds, st.one_of(st.none(), _seconds),
                     st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.sampled_from([0.0, 0.2, 1.0])).map(
    lambda t: Backoff(kind=t[0], initial=t[1], max=t[2], factor=t[3], jitter=t[4]))
_retry = st.tuples(st.integers(1, 6), _backoff, st.lists(_names, min_size=1, max_size=3, unique=True)).map(
    lambda t: Retry(max_attempts=t[0], backoff=t[1], retry_on=t[2]))


@st.composite
def _policies(draw: st.DrawFn) -> Policy:
    catch_names = draw(st.lists(st.sampled_from(["ContractError", "Timeout", "*", "InputError"]), min_size=0,
                                max_size=2, unique=True))
    return Policy(
        retry=draw(_retry), timeout=draw(st.one_of(st.none(), _seconds)),
        catch=[Catch(errors=[n], next="handler") for n in catch_names],
        idempotency=draw(st.one_of(st.none(), st.sampled_from(
            ["{run}-{node}", "{run}-{inputs.instance}", "fixed-key", "{start.key}-{node}"]).map(
            lambda k: Idempotency(key=k)))),
        loop_guard=draw(st.one_of(st.none(), st.tuples(st.integers(1, 9), st.one_of(st.none(), _seconds)).map(
            lambda t: LoopGuard(max_iters=t[0], deadline=t[1])))),
        on_failure=draw(st.sampled_from(["stop", "skip", "rollback", "retry"])))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=_policies(), map_node=st.booleans())
def test_every_policy_field_round_trips(policy: Policy, map_node: bool) -> None:
    node = Node(id="work", kind="map" if map_node else "task", role="job_agent",
                items="start.jobs" if map_node else None, policy_ref="p",
                repair=RepairSpec(patch="repairer") if policy.on_failure == "retry" else None)
    wf = Workflow(name="generated", nodes=[Node(id="start", role="blueprint"), node, Node(id="handler", role="report")],
                  edges=[Edge(source="start", target="work")], policies={"p": policy},
                  meta={"inputs": {"instance": "ta01"}})
    binding = next(f for f in MATRIX if f.key == "backoff_max_binding").uses(wf, node)
    for engine in sorted(ENGINES):
        compile_, parse = ENGINES[engine]
        if engine.startswith("argo") and binding:  # Argo v3.6.5 has no cap on one delay: refused, never dropped
            with pytest.raises(UnsupportedFeature, match="backoff_max_binding"):
                compile_(wf)
            continue
        back = parse(compile_(wf))
        assert back.policies["p"].to_json() == policy.to_json(), engine
        assert back == wf, engine


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_the_local_pipeline_workflow_round_trips(engine: str) -> None:
    """The lead's five-layer workflow (loops, repair specs, compensations, any map) compiles losslessly too."""
    from alas_argo.pipeline import RunConfig, build_workflow

    wf = build_workflow(RunConfig(instance="ft06", disrupt="breakdown"), disruptions=2)
    compile_, parse = ENGINES[engine]
    assert parse(compile_(wf)) == wf


def test_an_input_enum_is_a_native_argo_parameter_enum() -> None:
    """``meta.input_enums`` renders as the parameter's ``enum`` and reads back from it (no annotation needed)."""
    wf = minimal().model_copy(update={"meta": {"inputs": {"n": "1", "m": "x"}, "input_enums": {"n": ["0", "1"]}}})
    doc = to_argo(wf, image="alas:test", kind="WorkflowTemplate")
    assert doc["spec"]["arguments"]["parameters"] == [{"name": "n", "value": "1", "enum": ["0", "1"]},
                                                      {"name": "m", "value": "x"}]
    assert "annotations" not in doc["metadata"]
    assert read_native(doc)["meta"]["input_enums"] == {"n": ["0", "1"]}
    assert from_argo(doc) == wf
