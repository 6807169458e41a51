"""The local runtime: validates a workflow, runs it by ready-set scheduling on a pool
(:mod:`~alas_argo.runtime.scheduler`), rolls a failed run back (saga), and returns a RunResult."""

from __future__ import annotations

import concurrent.futures as cf
import time
import uuid
from collections.abc import Mapping
from typing import Any

from alas_argo.errors import WorkflowError
from alas_argo.ir.policy import OnFailure
from alas_argo.ir.validation import ensure_valid
from alas_argo.ir.workflow import Workflow
from alas_argo.log.events import EventType
from alas_argo.runtime.clock import Clock, RealClock
from alas_argo.runtime.context import Handler
from alas_argo.runtime.contracts import ContractChecker
from alas_argo.runtime.dispatch import Dispatcher, PoolKind, TimeoutMode
from alas_argo.runtime.journal import Journal, MemoryJournal
from alas_argo.runtime.lifecycle import NodeRunner
from alas_argo.runtime.policies import primary_error_name
from alas_argo.runtime.result import RunResult, RunStatus
from alas_argo.runtime.run_state import Listener, RunState
from alas_argo.runtime.saga import Saga
from alas_argo.runtime.scheduler import Scheduler
from alas_argo.runtime.states import NodeState

__all__ = ["Runtime"]

class Runtime:
    """Runs IR workflows in this process.

    Args:
        handlers: Handler per role (task and map nodes, patch/replan roles, compensation roles).
        journal: Where events and idempotency records go (a fresh MemoryJournal by default; keep one
            journal across runs for idempotency keys to span runs).
        clock: Time source for backoff and loop deadlines (a FakeClock in tests).
        max_workers: Nodes running at once, and a map's items unless the map declares its own
            ``max_concurrency`` (the IR's bound for that node, as Argo's ``parallelism``, wins).
        pool: "thread" runs handlers in threads; "process" in a process pool (handlers must pickle).
        timeout_mode: How timed calls are stopped, "process" (killed) or "thread" (abandoned).
        listener: Called with every StateChange, in order.
        seed: Seed of the backoff jitter.
        require_output_contracts: Reject workflows with task/map nodes lacking an output contract.
    """

    def __init__(self, handlers: Mapping[str, Handler], *, journal: Journal | None = None,
                 clock: Clock | None = None, max_workers: int = 2, pool: PoolKind = "thread",
                 timeout_mode: TimeoutMode = "process", listener: Listener | None = None, seed: int = 0,
                 require_output_contracts: bool = False) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be >= 1")
        self.handlers = dict(handlers)
        self.journal: Journal = journal if journal is not None else MemoryJournal()
        self.clock: Clock = clock or RealClock()
        self.max_workers = max_workers
        self.pool: PoolKind = pool
        self.timeout_mode: TimeoutMode = timeout_mode
        self.listener = listener
        self.seed = seed
        self.require_output_contracts = require_output_contracts
        self._contracts = ContractChecker()

    def run(self, workflow: Workflow, inputs: Mapping[str, Any] | None = None, *,
            run_id: str | None = None) -> RunResult:
        """Validate ``workflow`` (WorkflowError listing every problem) and run it to the end.

        Raises:
            Interrupted: A stop request (SIGINT / SIGTERM, :mod:`alas_argo.interrupts`) ended the run; a
                ``run.interrupted`` event names the nodes it stopped.
        """
        ensure_valid(workflow, require_output_contracts=self.require_output_contracts)
        started = time.perf_counter()
        run = RunState(workflow, run_id or uuid.uuid4().hex[:12], dict(inputs or {}), self.journal,
                       self.clock, self.listener)
        run.record(EventType.RUN_STARTED, workflow=workflow.name, version=workflow.version)
        dispatcher = Dispatcher(self.pool, self.max_workers, self.timeout_mode)
        try:
            with cf.ThreadPoolExecutor(self.max_workers, thread_name_prefix="alas-node") as pool:
                runner = NodeRunner(run, self.handlers, dispatcher, self._contracts, self.seed,
                                    self.max_workers)
                schedule = Scheduler(run, runner, pool)
                failed_node, mode = schedule.drive()
        finally:
            dispatcher.close()
        if schedule.interrupted is not None:
            # Stopped on request: nothing is compensated (what finished stays, a resume continues from it).
            stop = schedule.interrupted
            if schedule.stopped:
                nodes = ", ".join(schedule.stopped)
                stop.where = f"{nodes} ({stop.where})" if stop.where and stop.where not in nodes else nodes
            run.record(EventType.RUN_INTERRUPTED, signal=stop.signal_name, exit_code=stop.exit_code,
                       stopped=schedule.stopped, executed=sorted(run.outputs))
            raise stop
        compensated: list[str] = []
        if failed_node is not None and mode in (OnFailure.ROLLBACK, OnFailure.RETRY):
            # Compensations run one at a time, in this thread; only a timed one leaves it (the timeout mode's
            # child or thread), so untimed handlers keep their in-memory effects, as on the node pool.
            saga = Saga(workflow, self.handlers, self.journal, run.run_id, clock=self.clock, inputs=run.inputs,
                        seed=self.seed, dispatcher=Dispatcher("thread", 1, self.timeout_mode))
            compensated = saga.compensate(list(run.commits), run.outputs)
            _settle_compensations(run, compensated, saga.errors, saga.attempts)
        for n in workflow.nodes:
            if run.state(n.id) is NodeState.PENDING:
                run.move(n.id, NodeState.SKIPPED if failed_node is None else NodeState.CANCELLED)
        status = RunStatus.SUCCEEDED if failed_node is None else RunStatus.FAILED
        run.record(EventType.RUN_SUCCEEDED if failed_node is None else EventType.RUN_FAILED,
                   failed_node=failed_node, compensated=compensated)
        return RunResult(
            run_id=run.run_id, workflow=workflow.name, status=status, outputs=dict(run.outputs),
            states={n.id: run.state(n.id) for n in workflow.nodes}, attempts=dict(run.attempts),
            errors={k: f"{primary_error_name(e)}: {e}" for k, e in run.errors.items()},
            failed_node=failed_node, compensated=compensated, escalations=list(run.escalations),
            plan_versions=list(run.plan_versions), changes=list(run.changes),
            seconds=time.perf_counter() - started, listener_errors=list(run.listener_errors))


def _settle_compensations(run: RunState, compensated: list[str], errors: dict[str, str],
                          attempts: dict[str, int]) -> None:
    """Reflect the saga in the compensation nodes' states.

    A compensation node that several nodes share (a policy's) ends failed if any of its compensations failed:
    the failures are settled first, so one that succeeded cannot hide another that did not."""
    wf = run.workflow
    for node_id in list(errors) + compensated:
        comp = wf.compensation_of(wf.node(node_id))
        if comp is None or run.state(comp) is not NodeState.PENDING:
            continue
        run.move(comp, NodeState.READY)
        run.move(comp, NodeState.RUNNING, attempt=attempts.get(node_id, 1))
        if node_id in errors:
            run.errors[comp] = WorkflowError(errors[node_id], where={"node": comp})
            run.move(comp, NodeState.FAILED, error=run.errors[comp])
        else:
            run.move(comp, NodeState.EXECUTED)
