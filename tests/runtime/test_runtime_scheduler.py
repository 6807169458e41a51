"""The scheduler's own decisions (alas_argo.runtime.scheduler), some through a pool the test controls: what
a failing run still starts, what a stop leaves, which futures count, which any_of losers are withdrawn."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

from alas_argo.ir import Workflow
from alas_argo.ir.validation import ensure_valid
from alas_argo.runtime import FakeClock, MemoryJournal, NodeContext, NodeState
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
