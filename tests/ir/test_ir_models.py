"""IR models: wire format, defaults, plan versions, exports."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import ValidationError

import alas_argo.ir as ir
from alas_argo.bounds import MAX_WAIT_SECONDS
from alas_argo.ir import (
    Backoff,
    BackoffKind,
    Edge,
    Node,
    NodeKind,
    PlanVersion,
    Policy,
    Retry,
    Workflow,
    content_hash,
)


def _wf() -> Workflow:
    return Workflow(name="demo", nodes=[Node(id="a", role="r"), Node(id="b", role="r", policy_ref="p")],
                    edges=[Edge(source="a", target="b")],
                    policies={"p": Policy(retry=Retry(max_attempts=3, backoff=Backoff(kind="linear",
                                                                                          initial=0.5)))})


def test_dump_uses_camel_case_aliases_and_drops_none() -> None:
    doc = _wf().to_json()
    node_b = doc["nodes"][1]
    assert node_b["policyRef"] == "p" and node_b["sideEffect"] == "none"
    assert "compensation" not in node_b and "timeout" not in doc["policies"]["p"]
    assert doc["policies"]["p"]["retry"]["maxAttempts"] == 3
    assert doc["policies"]["p"]["retry"]["backoff"]["kind"] == "linear"
    assert "logSchemas" in doc


def test_round_trip_through_wire_form() -> None:
    wf = _wf()
    again = Workflow.model_validate(wf.to_json())
    assert again == wf and again.digest() == wf.digest()


def test_snake_case_names_are_accepted_too() -> None:
    p = Policy.model_validate({"retry": {"max_attempts": 2}, "on_failure": "skip"})
    assert p.retry.max_attempts == 2 and p.on_failure == "skip"


def test_unknown_fields_and_bad_values_are_rejected() -> None:
    with pytest.raises(ValidationError):
        Policy.model_validate({"retyr": {}})
    with pytest.raises(ValidationError):
        Backoff(kind="quadratic")
    with pytest.raises(ValidationError):
        Retry(max_attempts=0)
    with pytest.raises(ValidationError):
        Backoff(jitter=1.5)


def test_defaults() -> None:
    p = Policy()
    assert p.retry.max_attempts == 1 and p.on_failure == "rollback" and p.timeout is None
    assert Backoff().kind is BackoffKind.EXPONENTIAL
    assert Node(id="x").kind is NodeKind.TASK and Node(id="x").join == "all_of"


def test_catching_one_error_twice_is_rejected() -> None:
    with pytest.raises(ValidationError, match="caught twice"):
        Policy.model_validate({"catch": [{"errors": ["X"], "next": "a"}, {"errors": ["X"], "next": "b"}]})


def test_plan_versions_are_frozen_and_chained() -> None:
    v1 = PlanVersion.first("demo", {"makespan": 10})
    v2 = v1.successor({"makespan": 9}, reason="repair")
    assert (v2.version, v2.parent, v2.reason) == (2, v1.hash, "repair")
    assert v1.hash != v2.hash and len(v1.hash) == 64
    assert v1.hash == PlanVersion.first("demo", {"makespan": 10}).hash
    with pytest.raises(ValidationError):
        v1.version = 5  # type: ignore[misc]
    assert v2.to_json()["hash"] == v2.hash


def test_content_hash_ignores_key_order() -> None:
    assert content_hash({"a": 1, "b": [1, 2]}) == content_hash({"b": [1, 2], "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 2})


def test_dependencies_include_implied_arcs() -> None:
    wf = Workflow.model_validate({
        "name": "g", "nodes": [
            {"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x", "op": "truthy"},
                                                       "next": "a"}], "default": "b"},
            {"id": "a", "role": "r", "policyRef": "p"}, {"id": "b", "role": "r"},
            {"id": "h", "role": "r"}, {"id": "g", "kind": "parallel", "branches": ["a", "b"]}],
        "policies": {"p": {"catch": [{"errors": ["*"], "next": "h"}]}}})
    arcs = {(d.source, d.target, str(d.via)) for d in wf.dependencies()}
    assert arcs == {("c", "a", "choice"), ("c", "b", "choice"), ("a", "g", "branch"), ("b", "g", "branch"),
                    ("a", "h", "catch")}


def test_package_exports_are_pinned() -> None:
    assert sorted(ir.__all__) == sorted([
        "ANY_ERROR", "TIMEOUT_ERROR", "Backoff", "BackoffKind", "Branch", "Catch", "Condition", "Dependency",
        "Edge", "FrozenIRModel", "IRModel", "Idempotency", "Join", "Loop", "LoopGuard", "Node", "NodeKind",
        "OnFailure", "Op", "PlanVersion", "Policy", "Problem", "RepairSpec", "Retry", "SideEffect", "Via",
        "Workflow", "canonical_json", "content_hash", "ensure_valid", "parse_workflow", "validate",
        "validate_document", "workflow_schema"])
    for name in ir.__all__:
        assert hasattr(ir, name)


@pytest.mark.parametrize("build", [
    lambda s: Policy(timeout=s),
    lambda s: Backoff(initial=s),
    lambda s: Backoff(max=s),
    lambda s: ir.LoopGuard(max_iters=2, deadline=s),
], ids=["timeout", "backoff.initial", "backoff.max", "loopGuard.deadline"])
def test_a_wait_is_at_most_a_year(build: Callable[[float], object]) -> None:
    """A backoff of 1e12 s passed validation and failed its node with an OverflowError from the sleep between
    attempts (Python's timers end near 9.2e9 s); a year is the longest wait any field takes."""
    assert build(MAX_WAIT_SECONDS) is not None
    with pytest.raises(ValidationError, match="less than or equal to 31536000"):
        build(MAX_WAIT_SECONDS + 1)
