"""Runtime edges: the run's bounds and options, what a run journals from ``run.started`` to its last event, the
compensation nodes' states after a rollback (a shared one included), and how a stop names what it stopped."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from alas_argo import interrupts
from alas_argo.errors import WorkflowError
from alas_argo.runtime import MemoryJournal, NodeContext, NodeState, Runtime
from tests.runtime.runtime_helpers import workflow


def write(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"wrote": ctx.node_id}


def boom(ctx: NodeContext, inputs: dict[str, Any]) -> None:
    raise RuntimeError("d broke")


def undo_all_but_b(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    if next(iter(ctx.deps)) == "b":
        raise RuntimeError("undo broke")
    return {}


HANDLERS = {"write": write, "boom": boom, "undo": undo_all_but_b}


def rollback(*, shared: bool = False) -> Any:
    """``a -> b -> c`` commit and ``d`` fails the run under ``rollback``: each write compensated by its own
    ``undo_<n>``, or with ``shared`` by the one ``undo`` their policy names."""
    if shared:
        nodes: list[dict[str, Any]] = [{"id": n, "role": "write", "sideEffect": "write", "policyRef": "w"}
                                       for n in "abc"]
        nodes.append({"id": "undo", "role": "undo"})
    else:
        nodes = [{"id": n, "role": "write", "sideEffect": "write", "compensation": f"undo_{n}"} for n in "abc"]
        nodes += [{"id": f"undo_{n}", "role": "undo"} for n in "abc"]
    nodes.append({"id": "d", "role": "boom", "policyRef": "f"})
    return workflow(nodes, [("a", "b"), ("b", "c"), ("c", "d")],
                    policies={"w": {"compensation": "undo"}, "f": {"onFailure": "rollback"}})


def test_max_workers_below_one_is_refused_and_one_runs() -> None:
    with pytest.raises(ValueError) as refused:
        Runtime(HANDLERS, max_workers=0)
    assert str(refused.value) == "max_workers must be >= 1"
    result = Runtime(HANDLERS, max_workers=1).run(workflow([{"id": "a", "role": "write"}]))
    assert result.ok and result.outputs == {"a": {"wrote": "a"}}


@pytest.mark.parametrize("limit", [None, 1, 2], ids=["default", "one", "two"])
def test_no_more_than_max_workers_nodes_run_at_once(limit: int | None) -> None:
    bound = 2 if limit is None else limit  # the documented default
    lock = threading.Condition()
    running = [0]
    peak = [0]

    def hold(ctx: NodeContext, inputs: dict[str, Any]) -> None:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            lock.notify_all()
            # Held until the bound is reached (so the peak is the bound), then a little longer, long enough
            # for a node past the bound to start if the runtime let it.
            lock.wait_for(lambda: running[0] >= bound, timeout=5)
            lock.wait_for(lambda: running[0] > bound, timeout=0.2)
            running[0] -= 1
            lock.notify_all()
    wf = workflow([{"id": n, "role": "hold"} for n in "xyz"])
    runtime = Runtime({"hold": hold}) if limit is None else Runtime({"hold": hold}, max_workers=limit)
    result = runtime.run(wf)
    assert result.ok and peak[0] == bound


def _one_at_a_time(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    """A map item in a worker process: it marks itself started, then waits (at most 0.3 s) for a sibling to
    start beside it, which only a second worker could run."""
    here = Path(ctx.params["dir"])
    (here / str(ctx.index)).write_text(str(os.getpid()))
    deadline = time.monotonic() + 0.3
    while len(list(here.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return {"pid": os.getpid()}


def test_the_process_pool_has_max_workers_processes(tmp_path: Path) -> None:
    # The map's maxConcurrency lets three items call at once; the pool of one worker runs them one by one.
    wf = workflow([{"id": "m", "kind": "map", "role": "item", "items": "inputs.xs", "maxConcurrency": 3,
                    "params": {"dir": str(tmp_path)}}])
    result = Runtime({"item": _one_at_a_time}, pool="process", max_workers=1).run(wf, {"xs": [0, 1, 2]})
    assert result.ok
    pids = {o["pid"] for o in result.output("m")}
    assert len(pids) == 1 and os.getpid() not in pids


def test_output_contracts_are_required_only_when_asked() -> None:
    wf = workflow([{"id": "a", "role": "write"}])
    assert Runtime(HANDLERS).run(wf).ok
    with pytest.raises(WorkflowError) as refused:
        Runtime(HANDLERS, require_output_contracts=True).run(wf)
    assert "node a: node has no output contract" in str(refused.value)


def test_a_successful_run_is_journaled_from_started_to_succeeded() -> None:
    journal = MemoryJournal()
    wf = workflow([{"id": "a", "role": "write"}], version=4)
    before = time.perf_counter()
    result = Runtime(HANDLERS, journal=journal).run(wf)
    elapsed = time.perf_counter() - before
    assert re.fullmatch("[0-9a-f]{12}", result.run_id)
    assert result.workflow == "t" and result.ok and result.failed_node is None
    first, last = journal.events[0], journal.events[-1]
    assert (first["type"], first["payload"]) == ("run.started", {"workflow": "t", "version": 4})
    assert (last["type"], last["payload"]) == ("run.succeeded", {"failed_node": None, "compensated": []})
    # The run's own measure of its wall time lies inside the caller's.
    assert 0 < result.seconds <= elapsed


def test_a_rolled_back_run_ends_with_run_failed_naming_the_node_and_the_compensations() -> None:
    journal = MemoryJournal()
    result = Runtime(HANDLERS, journal=journal).run(rollback(), run_id="r1")
    assert result.run_id == "r1" and result.failed_node == "d" and result.compensated == ["c", "a"]
    last = journal.events[-1]
    assert (last["type"], last["payload"]) == ("run.failed", {"failed_node": "d", "compensated": ["c", "a"]})


def test_compensation_nodes_run_once_as_attempt_one_and_a_failed_one_carries_its_error() -> None:
    journal = MemoryJournal()
    result = Runtime(HANDLERS, journal=journal).run(rollback())
    assert {n: (result.states[n], result.attempts[n]) for n in ("undo_a", "undo_b", "undo_c")} == {
        "undo_a": (NodeState.EXECUTED, 1), "undo_b": (NodeState.FAILED, 1), "undo_c": (NodeState.EXECUTED, 1)}
    error = "WorkflowError: RuntimeError: undo broke (node undo_b)"
    assert result.errors["undo_b"] == error and "undo_a" not in result.errors
    states = [(e["type"], e["attempt"], e["payload"]) for e in journal.events
              if e["node_id"] == "undo_b" and e["type"].startswith("node.")]
    assert states == [("node.ready", None, {}), ("node.started", 1, {}), ("node.failed", 1, {"error": error})]


def test_a_shared_compensation_node_that_failed_once_ends_failed() -> None:
    # One compensation node for three writes (their policy's): undoing b fails between two that succeed. The
    # node used to end executed, with no error in the result, as if everything had been undone.
    result = Runtime(HANDLERS).run(rollback(shared=True))
    assert result.compensated == ["c", "a"]
    assert result.states["undo"] is NodeState.FAILED and result.attempts["undo"] == 1
    assert result.errors["undo"] == "WorkflowError: RuntimeError: undo broke (node undo)"


def test_a_shared_compensation_node_that_always_succeeded_ends_executed() -> None:
    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {}
    result = Runtime({**HANDLERS, "undo": undo}).run(rollback(shared=True))
    assert result.compensated == ["c", "b", "a"]
    assert result.states["undo"] is NodeState.EXECUTED and "undo" not in result.errors


def test_own_and_shared_compensation_nodes_are_all_settled() -> None:
    # a has its own compensation node, b and c share their policy's: settling the shared one twice (once per
    # node it undid) must not stop the settling of a's.
    nodes: list[dict[str, Any]] = [
        {"id": "a", "role": "write", "sideEffect": "write", "compensation": "undo_a"},
        {"id": "b", "role": "write", "sideEffect": "write", "policyRef": "w"},
        {"id": "c", "role": "write", "sideEffect": "write", "policyRef": "w"},
        {"id": "d", "role": "boom", "policyRef": "f"}, {"id": "undo", "role": "undo"},
        {"id": "undo_a", "role": "undo"}]
    wf = workflow(nodes, [("a", "b"), ("b", "c"), ("c", "d")],
                  policies={"w": {"compensation": "undo"}, "f": {"onFailure": "rollback"}})

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {}
    result = Runtime({**HANDLERS, "undo": undo}).run(wf)
    assert result.compensated == ["c", "b", "a"]
    assert result.states["undo"] is NodeState.EXECUTED and result.states["undo_a"] is NodeState.EXECUTED


def stopping(where: Any) -> tuple[Any, dict[str, Any]]:
    """``a`` then ``b`` and ``c`` side by side; each of ``b`` and ``c`` asks for a stop once both run, and
    stops with ``where(node)`` (a ``check`` in its own frames)."""
    both = threading.Barrier(2, timeout=5)

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.node_id in ("b", "c"):
            both.wait()
            interrupts.request_stop(signal.SIGTERM)
            interrupts.check(where(ctx.node_id))
        return {"did": ctx.node_id}
    wf = workflow([{"id": n, "role": "work"} for n in "abc"], [("a", "b"), ("a", "c")])
    return wf, {"work": work}


@pytest.mark.parametrize(("where", "suffix"), [
    (lambda node: None, ""),  # nothing said where: the nodes alone
    (lambda node: "the search", " (the search)"),
    (lambda node: node, ""),  # said where and it is a stopped node: not repeated
], ids=["none", "search", "node"])
def test_a_stop_names_every_node_it_stopped(where: Any, suffix: str) -> None:
    wf, handlers = stopping(where)
    journal = MemoryJournal()
    with pytest.raises(interrupts.Interrupted) as stopped:
        Runtime(handlers, journal=journal).run(wf, run_id="r1")
    last = journal.events[-1]
    assert last["type"] == "run.interrupted"
    nodes = last["payload"]["stopped"]
    assert sorted(nodes) == ["b", "c"]
    assert last["payload"] == {"signal": "SIGTERM", "exit_code": 143, "stopped": nodes, "executed": ["a"]}
    assert stopped.value.where == ", ".join(nodes) + suffix
