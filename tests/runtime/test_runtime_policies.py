"""Policies enforced exactly: attempts, backoff delays, retry_on, catch, idempotency, failure strategies."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import ContractError, TransientError, WorkflowError
from alas_argo.runtime import FakeClock, MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import Calls, workflow

OUT = {"type": "object", "required": ["v"]}


def flaky(calls: Calls, failures: int, exc: type[Exception] = TransientError) -> Any:
    def handler(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.add(ctx)
        if ctx.attempt <= failures:
            raise exc(f"boom {ctx.attempt}")
        return {"v": ctx.attempt}
    return handler


def test_retry_until_success_with_exact_attempts_and_exponential_delays() -> None:
    calls, clock, journal = Calls(), FakeClock(), MemoryJournal()
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}], policies={"p": {
        "retry": {"maxAttempts": 4, "backoff": {"kind": "exponential", "initial": 1, "factor": 2}}}})
    result = Runtime({"f": flaky(calls, 2)}, clock=clock, journal=journal).run(wf)
    assert result.ok and result.output("a") == {"v": 3}
    assert result.attempts["a"] == 3 and len(calls.log) == 3
    assert clock.sleeps == [1.0, 2.0]
    assert [str(s) for s in result.history("a")] == [
        "pending", "ready", "running", "failed_retryable", "running", "failed_retryable", "running", "executed"]
    assert journal.types("a").count("node.retrying") == 2


@pytest.mark.parametrize(("kind", "sleeps"), [
    ("fixed", [0.5, 0.5, 0.5]), ("linear", [0.5, 1.0, 1.2]), ("exponential", [0.5, 1.0, 1.2])])
def test_retries_exhausted_fail_the_node_after_max_attempts(kind: str, sleeps: list[float]) -> None:
    calls, clock = Calls(), FakeClock()
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}], policies={"p": {
        "retry": {"maxAttempts": 4, "backoff": {"kind": kind, "initial": 0.5, "max": 1.2}}}})
    result = Runtime({"f": flaky(calls, 99)}, clock=clock).run(wf)
    assert not result.ok and result.failed_node == "a"
    assert result.states["a"] is NodeState.FAILED and result.attempts["a"] == 4
    assert clock.sleeps == sleeps and len(calls.log) == 4
    assert result.errors["a"] == "TransientError: boom 4"


def test_jittered_delays_are_seeded_and_bounded() -> None:
    def run(seed: int) -> list[float]:
        clock = FakeClock()
        wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}], policies={"p": {
            "retry": {"maxAttempts": 4, "backoff": {"kind": "fixed", "initial": 2, "jitter": 1}}}})
        Runtime({"f": flaky(Calls(), 99)}, clock=clock, seed=seed).run(wf)
        return clock.sleeps
    assert run(1) == run(1) and run(1) != run(2)
    assert all(0 <= d <= 2 for d in run(3)) and len(run(3)) == 3


def test_errors_outside_retry_on_are_not_retried() -> None:
    calls, clock = Calls(), FakeClock()
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}], policies={"p": {"retry": {"maxAttempts": 5}}})
    result = Runtime({"f": flaky(calls, 99, ValueError)}, clock=clock).run(wf)
    assert result.attempts["a"] == 1 and clock.sleeps == [] and not result.ok


def test_contract_violations_fail_the_attempt_and_are_retried_only_when_asked() -> None:
    def bad_then_good(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {"v": 1} if ctx.attempt == 2 else {"w": 1}
    base = {"id": "a", "role": "f", "output": OUT, "policyRef": "p"}
    default = workflow([base], policies={"p": {"retry": {"maxAttempts": 3}}})
    result = Runtime({"f": bad_then_good}, clock=FakeClock()).run(default)
    assert result.states["a"] is NodeState.FAILED and result.attempts["a"] == 1
    assert "ContractError" in result.errors["a"] and "'v' is a required property" in result.errors["a"]
    assert "a" not in result.outputs
    asked = workflow([base], policies={"p": {"retry": {"maxAttempts": 3, "retryOn": ["ContractError"]}}})
    result = Runtime({"f": bad_then_good}, clock=FakeClock()).run(asked)
    assert result.ok and result.attempts["a"] == 2 and result.output("a") == {"v": 1}


def test_retry_on_star_retries_everything() -> None:
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}],
                  policies={"p": {"retry": {"maxAttempts": 3, "retryOn": ["*"]}}})
    result = Runtime({"f": flaky(Calls(), 2, KeyError)}, clock=FakeClock()).run(wf)
    assert result.ok and result.attempts["a"] == 3


def test_input_contract_is_checked() -> None:
    wf = workflow([{"id": "a", "role": "f", "params": {"n": "x"},
                    "input": {"type": "object", "properties": {"n": {"type": "integer"}}}}])
    result = Runtime({"f": flaky(Calls(), 0)}).run(wf)
    assert not result.ok and "input breaks its contract at n" in result.errors["a"]


def test_catch_routes_to_next_with_the_failure_and_skips_dependents() -> None:
    seen: dict[str, Any] = {}

    def handle(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen["failure"] = ctx.failure
        return {"v": 0}
    wf = workflow([{"id": "a", "role": "bad", "policyRef": "p"}, {"id": "b", "role": "ok"},
                   {"id": "h", "role": "handle"}], [("a", "b")],
                  policies={"p": {"catch": [{"errors": ["ContractError"], "next": "h"}]}})
    handlers = {"bad": flaky(Calls(), 9, ContractError), "ok": flaky(Calls(), 0), "handle": handle}
    result = Runtime(handlers).run(wf)
    assert result.ok and result.states == {"a": "failed", "b": "skipped", "h": "executed"}
    assert seen["failure"].error == "ContractError" and "boom 1" in seen["failure"].message


def test_catch_that_does_not_match_leaves_the_failure_to_on_failure() -> None:
    wf = workflow([{"id": "a", "role": "bad", "policyRef": "p"}, {"id": "h", "role": "ok"}],
                  policies={"p": {"catch": [{"errors": ["Timeout"], "next": "h"}]}})
    result = Runtime({"bad": flaky(Calls(), 9, ContractError), "ok": flaky(Calls(), 0)}).run(wf)
    assert not result.ok and result.states == {"a": "failed", "h": "cancelled"}


def test_idempotency_key_returns_the_recorded_result_instead_of_running() -> None:
    calls, journal = Calls(), MemoryJournal()
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p", "params": {"planner": "cpsat"}}],
                  policies={"p": {"idempotency": {"key": "solve-{inputs.instance}-{node}-{planner}"}}})
    rt = Runtime({"f": flaky(calls, 0)}, journal=journal)
    first = rt.run(wf, {"instance": "ta01"})
    second = rt.run(wf, {"instance": "ta01"})
    assert first.output("a") == second.output("a") == {"v": 1}
    assert len(calls.log) == 1 and "solve-ta01-a-cpsat" in journal.idempotency
    assert journal.types("a").count("node.idempotent_hit") == 1
    rt.run(wf, {"instance": "ta02"})
    assert len(calls.log) == 2


def test_idempotency_key_that_resolves_to_nothing_fails_the_node() -> None:
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}],
                  policies={"p": {"idempotency": {"key": "{inputs.missing}"}}})
    result = Runtime({"f": flaky(Calls(), 0)}).run(wf)
    assert not result.ok and "resolves to nothing" in result.errors["a"]


def test_on_failure_skip_lets_the_run_go_on_without_the_output() -> None:
    seen: dict[str, Any] = {}

    def after(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen["deps"] = dict(ctx.deps)
        return {"v": 9}
    wf = workflow([{"id": "a", "role": "bad", "policyRef": "s"}, {"id": "b", "role": "after"}], [("a", "b")],
                  policies={"s": {"onFailure": "skip"}})
    result = Runtime({"bad": flaky(Calls(), 9), "after": after}).run(wf)
    assert result.ok and result.states == {"a": "failed", "b": "executed"} and seen["deps"] == {}


def test_missing_handler_fails_the_node_not_the_runtime() -> None:
    result = Runtime({}).run(workflow([{"id": "a", "role": "ghost"}]))
    assert not result.ok and "no handler registered for role 'ghost'" in result.errors["a"]


def test_an_invalid_workflow_is_rejected_before_anything_runs() -> None:
    calls = Calls()
    wf = workflow([{"id": "a", "role": "f"}, {"id": "b", "role": "f", "sideEffect": "write"}])
    with pytest.raises(WorkflowError, match="node b: write side effect without a compensation"):
        Runtime({"f": flaky(calls, 0)}).run(wf)
    assert calls.log == []
