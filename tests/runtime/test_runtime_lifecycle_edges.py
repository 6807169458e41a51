"""A node's life at its edges: the errors that fail it (each naming the node), what task, loop and map handlers
are given, map items under their concurrency bound and the node's timeout, loop deadlines from any clock, the
journal of retries and timeouts, stop requests, and a node skipped on resume by its idempotency record."""

from __future__ import annotations

import signal
import threading
from typing import Any

import pytest

from alas_argo import interrupts
from alas_argo.errors import TransientError
from alas_argo.runtime import FakeClock, MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import workflow

UNTIL = {"until": {"path": "output.valid", "op": "truthy"}}



def _echo(ctx: NodeContext, doc: dict[str, Any]) -> Any:
    return doc.get("reply", {})


#: A one-node workflow (``a``, or ``m`` for a map, ``fix`` for a loop) that fails, and the error it fails with.
FAILURES: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "no handler": ({"id": "a", "role": "ghost"}, {},
                   "WorkflowError: no handler registered for role 'ghost' (node a)"),
    "input contract": ({"id": "a", "role": "f", "input": {"required": ["x"]}}, {},
                       "ContractError: input breaks its contract at (root): 'x' is a required property (node a)"),
    "output contract": ({"id": "a", "role": "f", "output": {"required": ["plan"]}}, {},
                        "ContractError: output breaks its contract at (root): 'plan' is a required property "
                        "(node a)"),
    "idempotency key": ({"id": "a", "role": "f", "policyRef": "p"}, {"idempotency": {"key": "{inputs.nope}"}},
                        "WorkflowError: idempotency key placeholder {inputs.nope} resolves to nothing (node a)"),
    "map items": ({"id": "m", "kind": "map", "role": "f", "items": "inputs.one"}, {},
                  "WorkflowError: map items 'inputs.one' is not a list (node m)"),
    "map item contract": ({"id": "m", "kind": "map", "role": "f", "items": "inputs.xs",
                           "output": {"required": ["v"]}}, {},
                          "ContractError: output of item 0 breaks its contract at (root): 'v' is a required "
                          "property (node m)"),
    "loop output contract": ({"id": "fix", "role": "f", "policyRef": "p", "loop": UNTIL,
                              "output": {"required": ["valid"]}}, {"loopGuard": {"maxIters": 3}},
                             "ContractError: output breaks its contract at (root): 'valid' is a required property "
                             "(node fix)"),
    "loop guard": ({"id": "fix", "role": "f", "policyRef": "p", "loop": UNTIL, "params": {"reply": {"n": 1}}},
                   {"loopGuard": {"maxIters": 2}},
                   "LoopGuardTripped: loop stopped by its guard (max_iters) after 2 iterations (node fix)"),
}


@pytest.mark.parametrize("case", FAILURES)
def test_every_error_that_fails_a_node_names_it_in_the_result_and_the_journal(case: str) -> None:
    node, policy, error = FAILURES[case]
    journal = MemoryJournal()
    wf = workflow([node], policies={"p": policy} if policy else None)
    result = Runtime({"f": _echo}, journal=journal).run(wf, {"one": 1, "xs": [1]})
    node_id = node["id"]
    assert result.states[node_id] is NodeState.FAILED and result.errors[node_id] == error
    failed = [e for e in journal.events if e["type"] == "node.failed"]
    assert [(e["node_id"], e["payload"]) for e in failed] == [(node_id, {"error": error})]


def test_a_tripped_loop_guard_is_journaled_under_its_node() -> None:
    journal = MemoryJournal()
    wf = workflow([{"id": "fix", "role": "f", "policyRef": "p", "loop": UNTIL}],
                  policies={"p": {"loopGuard": {"maxIters": 2}}})
    Runtime({"f": _echo}, journal=journal).run(wf)
    tripped = [(e["node_id"], e["payload"]) for e in journal.events if e["type"] == "loop.guard_tripped"]
    assert tripped == [("fix", {"reason": "max_iters", "iterations": 2})]


def test_a_task_handler_is_given_its_role_run_plan_version_and_deps() -> None:
    seen: dict[str, Any] = {}

    def look(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        seen[ctx.node_id] = (ctx.role, ctx.run_id, ctx.workflow, ctx.plan_version, ctx.attempt, dict(ctx.deps))
        return {"by": ctx.node_id}
    wf = workflow([{"id": "a", "role": "look"}, {"id": "b", "role": "look"}], [("a", "b")], version=3)
    assert Runtime({"look": look}).run(wf, run_id="r7").ok
    assert seen == {"a": ("look", "r7", "t", 3, 1, {}), "b": ("look", "r7", "t", 3, 1, {"a": {"by": "a"}})}


def test_each_loop_iteration_is_given_the_attempt_the_deps_and_the_previous_output() -> None:
    seen: list[tuple[int, int | None, dict[str, Any], Any]] = []

    def step(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        seen.append((ctx.attempt, ctx.iteration, dict(ctx.deps), doc["previous"]))
        return {"valid": ctx.iteration == 2}
    wf = workflow([{"id": "a", "role": "give"}, {"id": "fix", "role": "step", "policyRef": "p", "loop": UNTIL}],
                  [("a", "fix")], policies={"p": {"loopGuard": {"maxIters": 5}}})
    assert Runtime({"give": lambda ctx, doc: {"g": 1}, "step": step}).run(wf).ok
    assert seen == [(1, 1, {"a": {"g": 1}}, None), (1, 2, {"a": {"g": 1}}, {"valid": False})]


def test_each_map_item_is_given_its_item_index_and_deps() -> None:
    seen: list[tuple[Any, int | None, dict[str, Any], dict[str, Any]]] = []
    lock = threading.Lock()

    def item(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        with lock:
            seen.append((ctx.item, ctx.index, dict(ctx.deps), doc))
        return {"v": doc["item"] * 10}
    wf = workflow([{"id": "a", "role": "give"},
                   {"id": "m", "kind": "map", "role": "item", "items": "a.xs", "params": {"k": 1}}], [("a", "m")])
    result = Runtime({"give": lambda ctx, doc: {"xs": [4, 5]}, "item": item}).run(wf)
    assert result.ok and result.output("m") == [{"v": 40}, {"v": 50}]
    deps = {"a": {"xs": [4, 5]}}
    assert sorted(seen, key=lambda s: s[1] or 0) == [
        (4, 0, deps, {"k": 1, "a": deps["a"], "item": 4, "index": 0}),
        (5, 1, deps, {"k": 1, "a": deps["a"], "item": 5, "index": 1})]


def test_map_items_run_within_the_nodes_max_concurrency() -> None:
    # Each item waits (at most 0.2 s) for a third item to be running at once: within the bound none ever is.
    cond, running, most = threading.Condition(), [0], [0]

    def item(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        with cond:
            running[0] += 1
            most[0] = max(most[0], running[0])
            cond.notify_all()
            cond.wait_for(lambda: running[0] >= 3, timeout=0.2)
            running[0] -= 1
        return {"v": doc["item"]}
    wf = workflow([{"id": "m", "kind": "map", "role": "item", "items": "inputs.xs", "maxConcurrency": 2}])
    result = Runtime({"item": item}, max_workers=4).run(wf, {"xs": [1, 2, 3, 4]})
    assert result.ok and most[0] == 2


def _stuck(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
    """Returns once the runtime gives the call up (without a timeout, after 5 s, with a valid output)."""
    assert ctx.cancel_event is not None
    return {"valid": True, "cancelled": ctx.cancel_event.wait(5)}


@pytest.mark.parametrize("node", [{"id": "n", "kind": "map", "role": "f", "items": "inputs.xs"},
                                  {"id": "n", "role": "f", "loop": UNTIL}], ids=["map item", "loop iteration"])
def test_map_items_and_loop_iterations_are_held_to_the_node_timeout(node: dict[str, Any]) -> None:
    journal = MemoryJournal()
    wf = workflow([{**node, "policyRef": "t"}], policies={"t": {"timeout": 0.1, "loopGuard": {"maxIters": 2}}})
    result = Runtime({"f": _stuck}, journal=journal, timeout_mode="thread").run(wf, {"xs": [1]})
    assert result.states["n"] is NodeState.FAILED and result.errors["n"].startswith("Timeout:")
    timed_out = [(e["node_id"], e["payload"]) for e in journal.events if e["type"] == "node.timed_out"]
    assert timed_out == [("n", {"seconds": 0.1})]


@pytest.mark.parametrize(("start", "deadline", "iterations"), [(0.0, 2.5, 3), (100.0, 2.5, 3), (0.0, 2.0, 2)])
def test_a_loop_deadline_counts_from_the_loops_start_and_trips_when_reached(start: float, deadline: float,
                                                                             iterations: int) -> None:
    clock = FakeClock(start)

    def step(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        clock.advance(1.0)
        return {"valid": False}
    wf = workflow([{"id": "fix", "role": "f", "policyRef": "p", "loop": UNTIL}],
                  policies={"p": {"loopGuard": {"maxIters": 10, "deadline": deadline}}})
    result = Runtime({"f": step}, clock=clock).run(wf)
    assert result.errors["fix"] == (f"LoopGuardTripped: loop stopped by its guard (deadline) after {iterations} "
                                    "iterations (node fix)")


def test_a_retry_is_journaled_with_its_delay_and_error() -> None:
    calls: list[int] = []

    def flaky(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        calls.append(ctx.attempt)
        if ctx.attempt == 1:
            raise TransientError("busy")
        return {}
    journal, clock = MemoryJournal(), FakeClock()
    wf = workflow([{"id": "a", "role": "f", "policyRef": "p"}],
                  policies={"p": {"retry": {"maxAttempts": 2, "backoff": {"initial": 1.5, "jitter": 0}}}})
    assert Runtime({"f": flaky}, journal=journal, clock=clock).run(wf).ok
    retrying = [(e["attempt"], e["payload"]) for e in journal.events if e["type"] == "node.retrying"]
    assert retrying == [(1, {"delay": 1.5, "error": "TransientError: busy"})] and clock.sleeps == [1.5]


def test_a_run_without_idempotency_keys_records_none() -> None:
    journal = MemoryJournal()
    assert Runtime({"f": _echo}, journal=journal).run(workflow([{"id": "a", "role": "f"}])).ok
    assert journal.idempotency == {}


def test_a_write_skipped_on_resume_by_its_record_is_still_a_commit_to_compensate() -> None:
    # Run r1 is stopped after its write committed; resumed by its id, the write comes back from its idempotency
    # record (not written twice), and when a later node fails the run, the write is compensated.
    wrote: list[str] = []
    undone: list[str] = []

    def write(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        wrote.append(ctx.run_id)
        interrupts.request_stop(signal.SIGTERM)
        return {"wrote": 1}

    def undo(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        undone.append(next(iter(ctx.deps)))
        return {}

    def fail(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("downstream broke")
    wf = workflow([{"id": "w", "role": "write", "sideEffect": "write", "compensation": "u", "policyRef": "once"},
                   {"id": "u", "role": "undo"}, {"id": "d", "role": "fail", "policyRef": "back"}], [("w", "d")],
                  policies={"once": {"idempotency": {"key": "{run}:{node}"}}, "back": {"onFailure": "rollback"}})
    handlers = {"write": write, "undo": undo, "fail": fail}
    journal = MemoryJournal()
    with pytest.raises(interrupts.Interrupted):
        Runtime(handlers, journal=journal).run(wf, run_id="r1")
    interrupts.reset()
    seen = len(journal.events)
    result = Runtime(handlers, journal=journal).run(wf, run_id="r1")
    assert wrote == ["r1"] and result.output("w") == {"wrote": 1} and result.attempts["w"] == 1
    resumed = [(e["type"], e["attempt"], e["payload"]) for e in journal.events[seen:] if e["node_id"] == "w"]
    assert resumed == [("node.ready", None, {}), ("node.started", 1, {}),
                       ("node.idempotent_hit", 1, {"key": "r1:w"}), ("node.succeeded", 1, {})]
    assert not result.ok and result.failed_node == "d" and result.compensated == ["w"] and undone == ["w"]


def _stop_then(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
    """Asks the process to stop on its first call, then fails (or, in a loop, is not done yet)."""
    if not interrupts.stop_requested():
        interrupts.request_stop(signal.SIGTERM)
        if ctx.iteration is None and ctx.item is None:
            raise TransientError("busy")
    return {"valid": False}


@pytest.mark.parametrize(("node", "where"), [
    ({"id": "n", "role": "f", "policyRef": "p"}, "node n"),
    ({"id": "n", "role": "f", "policyRef": "p", "loop": UNTIL}, "node n"),
    ({"id": "n", "kind": "map", "role": "f", "items": "inputs.xs", "maxConcurrency": 1}, "node n item 1"),
], ids=["retry", "loop iteration", "map item"])
def test_a_stop_request_stops_the_node_before_its_next_call_and_says_where(node: dict[str, Any],
                                                                            where: str) -> None:
    wf = workflow([node], policies={"p": {"retry": {"maxAttempts": 2, "backoff": {"initial": 0}},
                                          "loopGuard": {"maxIters": 3}}})
    with pytest.raises(interrupts.Interrupted) as stopped:
        Runtime({"f": _stop_then}).run(wf, {"xs": [1, 2, 3]})
    assert stopped.value.where == f"n ({where})"
