"""Policy semantics at their edges: every comparison at its boundary, list indices at both ends, and errors
that cannot cross a process boundary as themselves still matching ``retry_on`` and ``catch`` by name."""

from __future__ import annotations

import pickle
import threading
from typing import Any

import pytest

from alas_argo.errors import TransientError
from alas_argo.ir.condition import Condition
from alas_argo.runtime import MemoryJournal, NodeContext, NodeState, Runtime, error_names, evaluate, matches, resolve
from alas_argo.runtime.policies import MISSING, RemoteError, primary_error_name
from tests.runtime.runtime_helpers import workflow

SCOPE = {"n": 3, "items": [10, 20, 30], "name": "a"}


@pytest.mark.parametrize(("op", "value", "expected"), [
    ("eq", 3, True), ("eq", 4, False), ("ne", 3, False), ("ne", 4, True),
    ("lt", 3, False), ("lt", 4, True), ("le", 3, True), ("le", 2, False),
    ("gt", 3, False), ("gt", 2, True), ("ge", 3, True), ("ge", 4, False),
    ("in", [1, 3], True), ("in", [1, 2], False), ("exists", None, True), ("truthy", None, True)])
def test_every_comparison_at_its_boundary(op: str, value: Any, expected: bool) -> None:
    assert evaluate(Condition(path="n", op=op, value=value), SCOPE) is expected
    assert evaluate(Condition(path="n", op=op, value=value, negate=True), SCOPE) is not expected


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge", "in", "truthy"])
def test_a_missing_path_is_false_for_every_op_but_exists(op: str) -> None:
    assert evaluate(Condition(path="ghost", op=op, value=1), SCOPE) is False
    assert evaluate(Condition(path="ghost", op="exists"), SCOPE) is False


@pytest.mark.parametrize(("path", "expected"), [
    ("items.0", 10), ("items.2", 30), ("items.3", MISSING), ("items.-1", 30), ("items.-3", 10),
    ("items.-4", MISSING), ("items.x", MISSING), ("name.0", MISSING)])
def test_list_indices_at_both_ends(path: str, expected: Any) -> None:
    assert resolve(path, SCOPE) is expected or resolve(path, SCOPE) == expected


class Unsendable(TransientError):
    """A transient error that cannot be pickled (it holds a lock), so it crosses back as a RemoteError."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.lock = threading.Lock()


def test_a_remote_error_answers_to_the_names_of_the_error_it_stands_for() -> None:
    names = [c.__name__ for c in Unsendable.__mro__ if c not in (object, BaseException)]
    remote = RemoteError("Unsendable: boom", names, transient=True)
    back = pickle.loads(pickle.dumps(remote))
    for err in (remote, back):
        assert isinstance(err, RemoteError) and err.type_names == tuple(names) and err.transient is True
        assert error_names(err) == set(names) and primary_error_name(err) == "Unsendable"
        assert matches(["TransientError"], err) and not matches(["ContractError"], err)


def _raise_first(calls: list[int]) -> Any:
    def handler(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.append(ctx.attempt)
        if ctx.attempt == 1:
            raise Unsendable("not this time")
        return {"attempt": ctx.attempt}
    return handler


def test_retry_on_matches_an_error_that_could_not_leave_its_child_process() -> None:
    # A timed policy: the attempt runs in a forked child, and the error comes back by name only.
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}], policies={"p": {
        "timeout": 30, "retry": {"maxAttempts": 2, "retryOn": ["Unsendable"], "backoff": {"initial": 0}}}})
    journal = MemoryJournal()
    result = Runtime({"f": _raise_first([])}, journal=journal).run(wf)
    assert result.ok and result.output("a") == {"attempt": 2} and result.attempts["a"] == 2


def test_an_error_that_retry_on_does_not_name_is_not_retried_across_the_fork() -> None:
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}], policies={"p": {
        "timeout": 30, "retry": {"maxAttempts": 3, "retryOn": ["ContractError"], "backoff": {"initial": 0}}}})
    result = Runtime({"f": _raise_first([])}).run(wf)
    assert result.states["a"] is NodeState.FAILED and result.attempts["a"] == 1
    assert result.errors["a"].startswith("Unsendable")


def test_catch_routes_an_error_that_could_not_leave_its_child_process() -> None:
    def always(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        raise Unsendable("for good")

    seen: dict[str, Any] = {}

    def handle(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen["failure"] = ctx.failure
        return {"handled": True}

    wf = workflow([{"id": "a", "role": "bad", "policyRef": "p"}, {"id": "h", "role": "handle"}],
                  policies={"p": {"timeout": 30, "catch": [{"errors": ["Unsendable"], "next": "h"}]}})
    result = Runtime({"bad": always, "handle": handle}).run(wf)
    assert result.ok and result.states == {"a": "failed", "h": "executed"}
    assert seen["failure"].error == "Unsendable" and "for good" in seen["failure"].message
