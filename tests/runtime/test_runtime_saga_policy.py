"""A compensation runs under its own node's policy, as every step does: a hung undo is stopped at its timeout
and the rollback goes on; errors the policy retries are retried with its backoff; the handler sees the run's
inputs."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from alas_argo.errors import TransientError
from alas_argo.runtime import MemoryJournal, NodeContext, NodeState, Runtime
from alas_argo.runtime.clock import FakeClock
from tests.runtime.runtime_helpers import FOREVER, workflow


def two_writes(undo_policy: dict[str, Any] | None) -> Any:
    """``a -> b`` commit (undone by ``undo_a``/``undo_b``, policy ``u`` when given), then ``c`` fails."""
    nodes: list[dict[str, Any]] = [{"id": n, "role": "write", "sideEffect": "write", "compensation": f"undo_{n}"}
                                   for n in "ab"]
    nodes.append({"id": "c", "role": "boom", "policyRef": "f"})
    nodes += [{"id": f"undo_{n}", "role": f"undo_{n}", **({"policyRef": "u"} if undo_policy else {})} for n in "ab"]
    policies: dict[str, Any] = {"f": {"onFailure": "rollback"}}
    if undo_policy:
        policies["u"] = undo_policy
    return workflow(nodes, [("a", "b"), ("b", "c")], policies=policies)


def write(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"wrote": ctx.node_id}


def boom(ctx: NodeContext, inputs: dict[str, Any]) -> None:
    raise RuntimeError("c broke")


def finished(journal: MemoryJournal) -> dict[str, dict[str, Any]]:
    return {e["payload"]["compensates"]: e["payload"] for e in journal.events
            if e["type"] == "compensation.finished"}


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_a_hung_compensation_is_stopped_at_its_timeout_and_the_rollback_goes_on(mode: str) -> None:
    release = threading.Event()

    def hang(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        release.wait(FOREVER)

    undone: list[str] = []

    def undo_a(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        undone.append(ctx.node_id)
        return {"undone": "a"}

    journal = MemoryJournal()
    started = time.monotonic()
    try:
        result = Runtime({"write": write, "boom": boom, "undo_b": hang, "undo_a": undo_a}, journal=journal,
                         timeout_mode=mode).run(two_writes({"timeout": 0.3}))  # type: ignore[arg-type]
    finally:
        release.set()
    # Far below FOREVER: without the policy's timeout the rollback waits on the hung undo.
    assert time.monotonic() - started < FOREVER / 2
    assert result.compensated == ["a"]
    assert result.states["undo_b"] is NodeState.FAILED and result.states["undo_a"] is NodeState.EXECUTED
    error = finished(journal)["b"]["error"]
    assert error.startswith("Timeout: attempt 1 timed out after 0.3 s") and "(node" not in error
    assert finished(journal)["b"]["ok"] is False
    assert result.errors["undo_b"] == f"WorkflowError: {error} (node undo_b)"
    assert finished(journal)["a"] == {"compensates": "a", "ok": True, "result": {"undone": "a"}}
    if mode == "thread":  # a forked child's appends are not seen here
        assert undone == ["undo_a"]


def test_transient_errors_of_a_compensation_are_retried_with_its_backoff() -> None:
    calls: list[int] = []

    def flaky(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.append(ctx.attempt)
        if ctx.attempt < 3:
            raise TransientError("store busy")
        return {"undone": "b"}

    clock = FakeClock()
    journal = MemoryJournal()
    policy = {"retry": {"maxAttempts": 4, "backoff": {"kind": "exponential", "initial": 2, "factor": 3}}}
    result = Runtime({"write": write, "boom": boom, "undo_b": flaky, "undo_a": write}, journal=journal,
                     clock=clock).run(two_writes(policy))
    assert calls == [1, 2, 3]
    assert clock.sleeps == [2.0, 6.0]
    assert result.compensated == ["b", "a"]
    assert finished(journal)["b"] == {"compensates": "b", "ok": True, "result": {"undone": "b"}}
    started = [e for e in journal.events if e["type"] == "node.started" and e["node_id"] == "undo_b"]
    assert [e["attempt"] for e in started] == [3]


def test_a_compensation_fails_with_its_last_error_once_its_attempts_are_spent() -> None:
    calls: list[int] = []

    def down(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        calls.append(ctx.attempt)
        raise TransientError(f"store down ({ctx.attempt})")

    clock = FakeClock()
    result = Runtime({"write": write, "boom": boom, "undo_b": down, "undo_a": write}, clock=clock).run(
        two_writes({"retry": {"maxAttempts": 2, "backoff": {"kind": "fixed", "initial": 1}}}))
    assert calls == [1, 2] and clock.sleeps == [1.0]
    assert result.errors["undo_b"] == "WorkflowError: TransientError: store down (2) (node undo_b)"
    assert result.compensated == ["a"]


@pytest.mark.parametrize(("policy", "error"), [
    ({"retry": {"maxAttempts": 5}}, ValueError("no such table")),  # an error the policy does not retry
    (None, TransientError("store down")),  # no policy: one attempt, untimed
], ids=["not retried", "no policy"])
def test_a_compensation_fails_at_once_when_its_policy_does_not_retry_the_error(
        policy: dict[str, Any] | None, error: Exception) -> None:
    calls: list[int] = []

    def broken(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        calls.append(ctx.attempt)
        raise error

    clock = FakeClock()
    result = Runtime({"write": write, "boom": boom, "undo_b": broken, "undo_a": write}, clock=clock).run(
        two_writes(policy))
    assert calls == [1] and clock.sleeps == []
    assert result.states["undo_b"] is NodeState.FAILED
    assert result.errors["undo_b"] == f"WorkflowError: {type(error).__name__}: {error} (node undo_b)"


def test_a_compensation_handler_sees_the_run_inputs() -> None:
    seen: list[dict[str, Any]] = []

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen.append(dict(ctx.inputs))
        return {}

    Runtime({"write": write, "boom": boom, "undo_b": undo, "undo_a": undo}).run(
        two_writes(None), {"tenant": "acme"})
    assert seen == [{"tenant": "acme"}, {"tenant": "acme"}]
