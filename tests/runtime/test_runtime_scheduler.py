"""The scheduler's own decisions (alas_argo.runtime.scheduler), some through a pool the test controls: what
a failing run still starts, what a stop leaves, which futures count, which any_of losers are withdrawn."""

from __future__ import annotations

import concurrent.futures as cf
import signal
import threading
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

import pytest

from alas_argo import interrupts
from alas_argo.ir import Workflow
from alas_argo.ir.validation import ensure_valid
from alas_argo.runtime import FakeClock, MemoryJournal, NodeContext, NodeState, Runtime
from alas_argo.runtime.context import Handler
from alas_argo.runtime.contracts import ContractChecker
from alas_argo.runtime.dispatch import Dispatcher
from alas_argo.runtime.lifecycle import NodeRunner
from alas_argo.runtime.run_state import RunState
from alas_argo.runtime.scheduler import Scheduler
from tests.runtime.runtime_helpers import workflow

P = ParamSpec("P")
T = TypeVar("T")


def echo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"id": ctx.node_id, "deps": sorted(ctx.deps)}


class InlinePool(cf.ThreadPoolExecutor):
    """Starts every submission at once, in the submitting thread: what an idle worker of a real pool may do
    before the scheduler's next line runs."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> cf.Future[T]:
        fut: cf.Future[T] = cf.Future()
        fut.set_running_or_notify_cancel()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:
            fut.set_exception(e)
        return fut


class QueuedPool(cf.ThreadPoolExecutor):
    """Runs nodes in threads, but keeps the nodes named in ``queued`` in the queue, as behind busy workers:
    their futures stay pending (so the scheduler can still cancel them) until ``release`` is set."""

    def __init__(self, queued: set[str]) -> None:
        super().__init__(max_workers=4, thread_name_prefix="test-node")
        self.queued = queued
        self.release = threading.Event()
        self.futures: dict[str, cf.Future[Any]] = {}

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> cf.Future[T]:
        node_id = getattr(args[0], "id", None)
        if node_id not in self.queued:
            return super().submit(fn, *args, **kwargs)
        fut: cf.Future[T] = cf.Future()
        self.futures[str(node_id)] = fut

        def later() -> None:
            self.release.wait(5)
            if fut.set_running_or_notify_cancel():
                try:
                    fut.set_result(fn(*args, **kwargs))
                except BaseException as e:
                    fut.set_exception(e)
        threading.Thread(target=later, daemon=True).start()
        return fut


def drive(wf: Workflow, handlers: Mapping[str, Handler], pool: cf.ThreadPoolExecutor,
          listener: Any = None) -> tuple[Scheduler, RunState]:
    """One run's scheduler on ``pool``, wired as the Runtime wires it; the run's state after ``drive``."""
    ensure_valid(wf)
    run = RunState(wf, "r1", {}, MemoryJournal(), FakeClock(), listener)
    dispatcher = Dispatcher("thread", 2, "thread")
    try:
        with pool:
            scheduler = Scheduler(run, NodeRunner(run, handlers, dispatcher, ContractChecker(), 0, 2), pool)
            scheduler.drive()
    finally:
        dispatcher.close()
    return scheduler, run


def test_a_failed_run_starts_none_of_the_nodes_it_was_holding_back() -> None:
    """The run is failing: a branch held back by its group's max_concurrency is cancelled, not submitted (a
    pool with an idle worker would start it before the scheduler could take it back)."""
    ran: list[str] = []

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.append(ctx.node_id)
        if ctx.node_id == "w0":
            raise ValueError("w0 broke")
        return {"by": ctx.node_id}
    nodes: list[dict[str, Any]] = [{"id": f"w{i}", "role": "work", "policyRef": "p"} for i in range(3)]
    nodes.append({"id": "group", "kind": "parallel", "branches": ["w0", "w1", "w2"], "maxConcurrency": 1})
    wf = workflow(nodes, policies={"p": {"onFailure": "stop"}})
    scheduler, run = drive(wf, {"work": work}, InlinePool())
    assert scheduler.failed_node == "w0" and ran == ["w0"]
    assert [run.state(n) for n in ("w1", "w2", "group")] == [NodeState.CANCELLED] * 3


def test_every_future_of_one_wait_counts() -> None:
    """Two nodes done by the same wait: the successors of both are decided, not only of the last one seen."""
    wf = workflow([{"id": "a", "role": "echo"}, {"id": "b", "role": "echo"}, {"id": "x", "role": "echo"},
                   {"id": "y", "role": "echo"}], [("a", "x"), ("b", "y")])
    scheduler, run = drive(wf, {"echo": echo}, InlinePool())
    assert scheduler.failed_node is None
    assert run.outputs["x"] == {"id": "x", "deps": ["a"]} and run.outputs["y"] == {"id": "y", "deps": ["b"]}


def test_a_failing_run_cancels_what_is_queued_and_lets_what_runs_finish() -> None:
    """a fails (once s is running) while b waits in the pool's queue: b's submission is withdrawn (its handler
    never runs), s finishes after that with its output, and what had not started (after) is cancelled by the
    scheduler."""
    ran: list[str] = []
    s_running, aborted = threading.Event(), threading.Event()

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.append(ctx.node_id)
        if ctx.node_id == "a":
            assert s_running.wait(5)
            raise ValueError("a broke")
        if ctx.node_id == "s":
            s_running.set()
            assert aborted.wait(5)  # still running when the scheduler aborts
        return {"by": ctx.node_id}

    def listener(change: Any) -> None:
        if change.node_id == "b" and change.new is NodeState.CANCELLED:
            aborted.set()
    wf = workflow([{"id": "a", "role": "work", "policyRef": "p"}, {"id": "s", "role": "work"},
                   {"id": "b", "role": "work"}, {"id": "after", "role": "work"}], [("s", "after")],
                  policies={"p": {"onFailure": "stop"}})
    pool = QueuedPool({"b"})
    scheduler, run = drive(wf, {"work": work}, pool, listener)
    pool.release.set()
    assert scheduler.failed_node == "a" and pool.futures["b"].cancelled()
    assert sorted(ran) == ["a", "s"] and run.outputs == {"s": {"by": "s"}}
    assert {n: run.state(n) for n in ("a", "s", "b", "after")} == {
        "a": NodeState.FAILED, "s": NodeState.EXECUTED, "b": NodeState.CANCELLED, "after": NodeState.CANCELLED}


def test_a_stop_withdraws_a_queued_node_names_the_stop_and_lets_what_runs_finish() -> None:
    """a asks for a stop (once s is running) and finishes; b waits in the pool's queue; s runs until b is
    cancelled. b's submission is withdrawn and its cancellation names the stop; a and s keep their outputs."""
    interrupts.reset()
    ran: list[str] = []
    s_running, withdrawn = threading.Event(), threading.Event()

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.append(ctx.node_id)
        if ctx.node_id == "a":
            assert s_running.wait(5)
            interrupts.request_stop(signal.SIGINT)
        elif ctx.node_id == "s":
            s_running.set()
            assert withdrawn.wait(5)  # still running when the scheduler takes the stop
        return {"by": ctx.node_id}

    def listener(change: Any) -> None:
        if change.node_id == "b" and change.new is NodeState.CANCELLED:
            withdrawn.set()
    wf = workflow([{"id": "a", "role": "work"}, {"id": "s", "role": "work"}, {"id": "b", "role": "work"}])
    pool = QueuedPool({"b"})
    try:
        scheduler, run = drive(wf, {"work": work}, pool, listener)
    finally:
        interrupts.reset()
        pool.release.set()
    assert scheduler.interrupted is not None and scheduler.stopped == [] and sorted(ran) == ["a", "s"]
    assert pool.futures["b"].cancelled() and run.state("b") is NodeState.CANCELLED
    assert [c.error for c in run.changes if c.node_id == "b"][-1] == f"Interrupted: {scheduler.interrupted}"
    assert run.outputs == {"a": {"by": "a"}, "s": {"by": "s"}}


def test_a_queued_any_of_loser_is_withdrawn_and_what_waited_on_it_goes_on() -> None:
    """pick = any_of(first, second); second is still queued when first wins: its submission is cancelled, it
    is skipped, and y = any_of(second, w), which waited on second's turn, is decided at once (w wins)."""
    ran: list[str] = []

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.append(ctx.node_id)
        return {"id": ctx.node_id, "deps": sorted(ctx.deps)}
    wf = workflow([{"id": "w", "role": "work"}, {"id": "first", "role": "work"}, {"id": "second", "role": "work"},
                   {"id": "pick", "role": "work", "join": "any_of"}, {"id": "y", "role": "work", "join": "any_of"}],
                  [("w", "first"), ("first", "pick"), ("second", "pick"), ("second", "y"), ("w", "y")])
    pool = QueuedPool({"second"})
    try:
        scheduler, run = drive(wf, {"work": work}, pool)
    finally:
        pool.release.set()
    assert scheduler.failed_node is None and pool.futures["second"].cancelled() and "second" not in ran
    assert run.state("second") is NodeState.SKIPPED
    assert run.outputs["pick"]["deps"] == ["first"] and run.outputs["y"]["deps"] == ["w"]


def test_a_catch_route_runs_only_for_the_failure_it_names() -> None:
    def handlers(error: type[Exception] | None) -> dict[str, Handler]:
        def a(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
            if error is not None:
                raise error("a broke")
            return {"id": "a"}
        return {"a": a, "echo": echo}
    wf = workflow([{"id": "a", "role": "a", "policyRef": "p"}, {"id": "on_key", "role": "echo"},
                   {"id": "on_value", "role": "echo"}],
                  policies={"p": {"catch": [{"errors": ["KeyError"], "next": "on_key"},
                                            {"errors": ["ValueError"], "next": "on_value"}]}})
    value = Runtime(handlers(ValueError)).run(wf)
    assert value.ok and value.states == {"a": "failed", "on_key": "skipped", "on_value": "executed"}
    clean = Runtime(handlers(None)).run(wf)
    assert clean.ok and clean.states == {"a": "executed", "on_key": "skipped", "on_value": "skipped"}


def test_a_gate_reads_the_run_inputs() -> None:
    wf = workflow([{"id": "a", "role": "echo", "when": {"path": "inputs.go", "op": "truthy"}}])
    assert Runtime({"echo": echo}).run(wf, {"go": True}).states["a"] is NodeState.EXECUTED
    assert Runtime({"echo": echo}).run(wf, {"go": False}).states["a"] is NodeState.SKIPPED


def _waiting_for(key: str) -> tuple[Handler, Handler]:
    """Two handlers: one that waits (at most 5 s) until the other has run and answers ``{key: whether it had}``,
    and the other, an echo that says it ran."""
    ran = threading.Event()

    def waiting(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {key: ran.wait(5)}

    def running(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.set()
        return echo(ctx, inputs)

    return waiting, running


def test_a_join_still_waiting_holds_back_nothing_else() -> None:
    """z finishes while pick = any_of(first, z) still waits for first: z's other successor y runs meanwhile
    (first returns only once y has run)."""
    first, mark = _waiting_for("saw_y")
    wf = workflow([{"id": "first", "role": "first"}, {"id": "z", "role": "echo"},
                   {"id": "pick", "role": "echo", "join": "any_of"}, {"id": "y", "role": "mark"}],
                  [("first", "pick"), ("z", "pick"), ("z", "y")])
    result = Runtime({"first": first, "mark": mark, "echo": echo}, max_workers=2).run(wf)
    assert result.output("first") == {"saw_y": True} and result.output("y") == {"id": "y", "deps": ["z"]}
    assert result.output("pick")["deps"] == ["first"]


def test_a_node_skipped_early_does_not_stop_the_decisions_after_it() -> None:
    """j (after t and s) is skipped as soon as the choice drops t; when s finishes, j is looked at again with
    s's other successor y, which must still run."""
    wf = workflow([{"id": "route", "kind": "choice", "choices": [
                       {"when": {"path": "inputs.x", "op": "exists"}, "next": "t"}], "default": "other"},
                   {"id": "t", "role": "echo"}, {"id": "other", "role": "echo"}, {"id": "s", "role": "echo"},
                   {"id": "j", "role": "echo"}, {"id": "y", "role": "echo"}],
                  [("t", "j"), ("s", "j"), ("s", "y")])
    result = Runtime({"echo": echo}).run(wf)
    assert result.ok and result.output("y") == {"id": "y", "deps": ["s"]}
    assert result.states["t"] is NodeState.SKIPPED and result.states["j"] is NodeState.SKIPPED


def test_the_losers_of_an_any_of_join_are_decided_with_everything_around_them() -> None:
    """first wins pick = any_of(first, third) while third still waits behind gate. In that same pass: also
    (after first, declared before pick) is started, g (after first) is gated off, so h after it runs; third is
    skipped, so y = any_of(third, w), which waited on third's turn, is won by w."""
    gate, pick = _waiting_for("saw_pick")
    wf = workflow([{"id": "w", "role": "echo"}, {"id": "gate", "role": "gate"}, {"id": "first", "role": "echo"},
                   {"id": "also", "role": "echo"},
                   {"id": "g", "role": "echo", "when": {"path": "inputs.never", "op": "exists"}},
                   {"id": "h", "role": "echo"}, {"id": "pick", "role": "pick", "join": "any_of"},
                   {"id": "third", "role": "echo"}, {"id": "y", "role": "echo", "join": "any_of"}],
                  [("w", "first"), ("gate", "third"), ("first", "also"), ("first", "g"), ("g", "h"),
                   ("first", "pick"), ("third", "pick"), ("third", "y"), ("w", "y")])
    result = Runtime({"gate": gate, "pick": pick, "echo": echo}, max_workers=3).run(wf)
    assert result.ok and result.output("gate") == {"saw_pick": True}
    assert result.output("pick")["deps"] == ["first"] and result.states["third"] is NodeState.SKIPPED
    assert result.output("y")["deps"] == ["w"] and result.output("also")["deps"] == ["first"]
    assert result.states["g"] is NodeState.SKIPPED and result.output("h")["deps"] == []


def test_a_parallel_group_runs_as_many_branches_at_once_as_it_allows() -> None:
    """maxConcurrency 2 on four workers: pairs of branches meet at a barrier (so two run at once), and never
    more than two run."""
    barrier = threading.Barrier(2, timeout=5)
    lock, running, peak = threading.Lock(), [0], [0]

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        barrier.wait()
        with lock:
            running[0] -= 1
        return {"by": ctx.node_id}
    nodes: list[dict[str, Any]] = [{"id": f"w{i}", "role": "work"} for i in range(4)]
    nodes.append({"id": "group", "kind": "parallel", "branches": ["w0", "w1", "w2", "w3"], "maxConcurrency": 2})
    result = Runtime({"work": work}, max_workers=4).run(workflow(nodes))
    assert result.ok and peak[0] == 2
    assert result.output("group") == {f"w{i}": {"by": f"w{i}"} for i in range(4)}


def test_a_stop_cancels_the_branches_held_back_and_a_resume_runs_them() -> None:
    interrupts.reset()
    ran: list[str] = []

    def work(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        ran.append(ctx.node_id)
        if ctx.node_id == "w0" and ran.count("w0") == 1:
            interrupts.request_stop(signal.SIGTERM)
        return {"by": ctx.node_id}
    nodes: list[dict[str, Any]] = [{"id": f"w{i}", "role": "work", "policyRef": "p"} for i in range(3)]
    nodes.append({"id": "group", "kind": "parallel", "branches": ["w0", "w1", "w2"], "maxConcurrency": 1})
    wf = workflow(nodes, policies={"p": {"idempotency": {"key": "{run}:{node}"}}})
    journal = MemoryJournal()
    try:
        with pytest.raises(interrupts.Interrupted) as stopped:
            Runtime({"work": work}, journal=journal, max_workers=2).run(wf, run_id="r1")
    finally:
        interrupts.reset()
    stop = stopped.value
    assert ran == ["w0"]
    for node_id in ("w1", "w2"):
        last = [e for e in journal.events if e["node_id"] == node_id][-1]
        assert last["type"] == "node.cancelled" and last["payload"]["error"] == f"Interrupted: {stop}"
    resumed = Runtime({"work": work}, journal=journal, max_workers=2).run(wf, run_id="r1")
    assert resumed.ok and sorted(ran) == ["w0", "w1", "w2"]
    assert resumed.output("group") == {f"w{i}": {"by": f"w{i}"} for i in range(3)}


def test_failures_outside_the_attempts_and_inline_nodes_count_one_attempt_and_say_why() -> None:
    journal = MemoryJournal()  # a key that resolves to nothing fails the node before its first attempt
    keyless = workflow([{"id": "a", "role": "echo", "policyRef": "p"}],
                       policies={"p": {"idempotency": {"key": "{inputs.missing}"}}})
    unkeyed = Runtime({"echo": echo}, journal=journal).run(keyless)
    assert unkeyed.attempts == {"a": 1} and "resolves to nothing" in unkeyed.errors["a"]
    failed = [e for e in journal.events if e["type"] == "node.failed"]
    assert [(e["node_id"], e["payload"]["error"]) for e in failed] == [("a", unkeyed.errors["a"])]
    assert unkeyed.changes[-1].error == unkeyed.errors["a"]
    journal = MemoryJournal()
    wf = workflow([{"id": "c", "kind": "choice", "choices": [{"when": {"path": "inputs.x", "op": "exists"},
                                                              "next": "a"}]}, {"id": "a", "role": "echo"}])
    lost = Runtime({"echo": echo}, journal=journal).run(wf)
    assert lost.attempts == {"c": 1}
    assert lost.errors["c"] == "WorkflowError: no branch condition holds and there is no default (node c)"
    failed = [e for e in journal.events if e["type"] == "node.failed"]
    assert [(e["node_id"], e["payload"]["error"]) for e in failed] == [("c", lost.errors["c"])]
    nodes: list[dict[str, Any]] = [{"id": "w0", "role": "echo"},
                                   {"id": "group", "kind": "parallel", "branches": ["w0"]}]
    taken = Runtime({"echo": echo}).run(workflow(nodes))
    assert taken.attempts == {"w0": 1, "group": 1}


def test_choice_and_parallel_nodes_commit_nothing_a_rollback_would_undo() -> None:
    """Only side-effecting nodes commit: a choice or parallel node with a compensation declared is not undone."""
    undone: list[str] = []

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        undone.extend(ctx.deps)
        return {}

    def bad(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        raise ValueError("bad broke")
    wf = workflow([{"id": "w", "role": "echo", "sideEffect": "write", "compensation": "undo_w"},
                   {"id": "route", "kind": "choice", "choices": [{"when": {"path": "inputs.x", "op": "exists"},
                                                                "next": "b1"}], "default": "b1",
                    "compensation": "undo_route"},
                   {"id": "b1", "role": "echo"},
                   {"id": "group", "kind": "parallel", "branches": ["b1"], "compensation": "undo_group"},
                   {"id": "bad", "role": "bad"}, {"id": "undo_w", "role": "undo"},
                   {"id": "undo_route", "role": "undo"}, {"id": "undo_group", "role": "undo"}],
                  [("w", "route"), ("group", "bad")])
    result = Runtime({"echo": echo, "bad": bad, "undo": undo}).run(wf)
    assert result.states["route"] is NodeState.EXECUTED and result.states["group"] is NodeState.EXECUTED
    assert result.failed_node == "bad" and result.compensated == ["w"] and undone == ["w"]
