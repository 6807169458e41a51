"""The life of one task or map node: idempotency, attempts with backoff, loops under their guard, map
fan-out, contract checks, and the recovery ladder after the retries are spent."""

from __future__ import annotations

import concurrent.futures as cf
import random
from collections.abc import Mapping
from typing import Any

from alas_argo import interrupts
from alas_argo.errors import LoopGuardTripped, WorkflowError
from alas_argo.ir.node import Node, NodeKind, SideEffect
from alas_argo.log.events import EventType
from alas_argo.runtime.backoff import delay
from alas_argo.runtime.context import Failure, Handler, NodeContext
from alas_argo.runtime.contracts import ContractChecker
from alas_argo.runtime.dispatch import Dispatcher
from alas_argo.runtime.policies import (
    MISSING,
    NodeTimeout,
    evaluate,
    matches,
    primary_error_name,
    render_key,
    resolve,
)
from alas_argo.runtime.recovery import Recovery
from alas_argo.runtime.result import Outcome
from alas_argo.runtime.run_state import Cancelled, RunState
from alas_argo.runtime.states import NodeState

__all__ = ["NodeRunner", "Outcome"]


class NodeRunner:
    """Runs task and map nodes of one run (shared by all its threads)."""

    def __init__(self, run: RunState, handlers: Mapping[str, Handler], dispatcher: Dispatcher,
                 contracts: ContractChecker, seed: int, item_workers: int) -> None:
        self.run = run
        self.handlers = handlers
        self.dispatcher = dispatcher
        self.contracts = contracts
        self.seed = seed
        self.item_workers = item_workers
        self.recovery = Recovery(self)

    def handler(self, role: str | None, node_id: str) -> Handler:
        """The handler registered for ``role``."""
        if role is None or role not in self.handlers:
            raise WorkflowError(f"no handler registered for role {role!r}", where={"node": node_id})
        return self.handlers[role]

    def context(self, node: Node, attempt: int, deps: dict[str, Any], **extra: Any) -> NodeContext:
        """A handler context for ``node``."""
        extra.setdefault("failure", self.run.failures.get(node.id))
        return NodeContext(node_id=node.id, role=extra.pop("role", node.role or ""), attempt=attempt,
                           run_id=self.run.run_id, workflow=self.run.workflow.name,
                           plan_version=self.run.workflow.version, inputs=self.run.inputs, deps=deps,
                           params=node.params, cancel_event=self.run.cancel_events[node.id], **extra)

    def input_document(self, node: Node, deps: dict[str, Any]) -> dict[str, Any]:
        """The node's input: its static params, then its dependencies' outputs by id; contract-checked."""
        doc = {**node.params, **deps}
        self.contracts.check(node.input, doc, node_id=node.id, what="input")
        return doc

    def run_node(self, node: Node, deps: dict[str, Any]) -> Outcome:
        """Drive ``node`` from ready to executed or failed; Cancelled propagates."""
        run, wf = self.run, self.run.workflow
        policy = wf.policy_for(node)
        rng = random.Random(f"{self.seed}:{node.id}")
        side_effecting = node.side_effect in (SideEffect.WRITE, SideEffect.EXTERNAL)
        key = None
        if policy.idempotency is not None:
            scope = {"node": node.id, "run": run.run_id, "inputs": run.inputs, **node.params, **deps}
            key = render_key(policy.idempotency.key, scope, node_id=node.id)
            found = run.journal.find_idempotent(key)
            if found is not None:
                recorded, tie = found
                run.move(node.id, NodeState.RUNNING, attempt=1)
                run.record(EventType.NODE_IDEMPOTENT_HIT, node.id, key=key)
                # The success event names the record too: a run stopped between its record and its success event
                # left the record named by no event, and this one ties it into the chain.
                run.executed(node.id, recorded["output"], side_effecting=side_effecting, key=key, record_hash=tie)
                return Outcome(True, recorded["output"])
        error: BaseException | None = None
        items_done: dict[int, Any] = {}
        loop_state: dict[str, Any] = {}
        for attempt in range(1, policy.retry.max_attempts + 1):
            interrupts.check(f"node {node.id}")  # a stop request: no new attempt (not a failure either)
            run.move(node.id, NodeState.RUNNING, attempt=attempt)
            try:
                doc = self.input_document(node, deps)
                if node.kind is NodeKind.MAP:
                    output: Any = self._map(node, attempt, deps, doc, items_done, policy.timeout)
                else:
                    output = self._task(node, attempt, deps, doc, loop_state, policy.timeout)
            except Exception as e:
                if run.state(node.id) is NodeState.CANCELLED:
                    raise Cancelled(node.id) from None
                error = e
                if isinstance(e, NodeTimeout):
                    run.record(EventType.NODE_TIMED_OUT, node.id, seconds=policy.timeout)
                if attempt < policy.retry.max_attempts and matches(policy.retry.retry_on, e):
                    wait = delay(policy.retry.backoff, attempt, rng)
                    run.move(node.id, NodeState.FAILED_RETRYABLE, error=e, payload={"delay": wait})
                    run.clock.sleep(wait)
                    continue
                break
            else:
                tie = run.journal.put_idempotent(key, {"output": output}) if key is not None else None
                run.executed(node.id, output, side_effecting=side_effecting, key=key, record_hash=tie)
                return Outcome(True, output)
        assert error is not None
        if node.repair is not None:
            return self.recovery.escalate(node, deps, error, side_effecting=side_effecting, key=key)
        run.errors[node.id] = error
        run.move(node.id, NodeState.FAILED, error=error)
        return Outcome(False, error=error)

    def _call(self, node: Node, ctx: NodeContext, doc: dict[str, Any], timeout: float | None) -> Any:
        return self.dispatcher.call(self.handler(ctx.role or node.role, node.id), ctx, doc, timeout)

    def _task(self, node: Node, attempt: int, deps: dict[str, Any], doc: dict[str, Any],
              loop_state: dict[str, Any], timeout: float | None) -> Any:
        if node.loop is None:
            output = self._call(node, self.context(node, attempt, deps), doc, timeout)
            self.run.last_output[node.id] = output
            self.contracts.check(node.output, output, node_id=node.id, what="output")
            return output
        guard = self.run.workflow.policy_for(node).loop_guard
        assert guard is not None  # validation guarantees every loop a guard
        clock = self.run.clock
        loop_state.setdefault("start", clock.now())
        while True:
            interrupts.check(f"node {node.id}")
            iteration = loop_state.get("iterations", 0) + 1
            over_time = guard.deadline is not None and clock.now() - loop_state["start"] >= guard.deadline
            if iteration > guard.max_iters or over_time:
                why = "deadline" if over_time else "max_iters"
                self.run.record(EventType.LOOP_GUARD_TRIPPED, node.id, reason=why,
                                iterations=iteration - 1)
                raise LoopGuardTripped(f"loop stopped by its guard ({why}) after {iteration - 1} "
                                       "iterations", where={"node": node.id})
            loop_state["iterations"] = iteration
            ctx = self.context(node, attempt, deps, iteration=iteration, previous=loop_state.get("previous"))
            output = self._call(node, ctx, {**doc, "previous": loop_state.get("previous")}, timeout)
            self.run.last_output[node.id] = output
            self.contracts.check(node.output, output, node_id=node.id, what="output")
            loop_state["previous"] = output
            if evaluate(node.loop.until, {"output": output}):
                return output

    def _map(self, node: Node, attempt: int, deps: dict[str, Any], doc: dict[str, Any],
             done: dict[int, Any], timeout: float | None) -> list[Any]:
        assert node.items is not None
        items = resolve(node.items, {"inputs": self.run.inputs, **deps})
        if items is MISSING or not isinstance(items, list):
            raise WorkflowError(f"map items {node.items!r} is not a list", where={"node": node.id})

        def one(index: int, item: Any) -> Any:
            interrupts.check(f"node {node.id} item {index}")
            ctx = self.context(node, attempt, deps, item=item, index=index)
            out = self._call(node, ctx, {**doc, "item": item, "index": index}, timeout)
            self.contracts.check(node.output, out, node_id=node.id, what=f"output of item {index}")
            return out

        todo = [i for i in range(len(items)) if i not in done]
        workers = min(node.max_concurrency or self.item_workers, max(len(todo), 1))
        first_error: BaseException | None = None
        # Items that succeeded are kept across attempts: a retry redoes only the failed ones.
        with cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"alas-map-{node.id}") as pool:
            futures = {pool.submit(one, i, items[i]): i for i in todo}
            for fut in cf.as_completed(futures):
                try:
                    done[futures[fut]] = fut.result()
                except Exception as e:
                    first_error = first_error or e
        if first_error is not None:
            raise first_error
        return [done[i] for i in range(len(items))]

    def failure_of(self, node_id: str) -> Failure | None:
        """The failure of a failed node, for the handler a catch routes to."""
        err = self.run.errors.get(node_id)
        if err is None:
            return None
        return Failure(error=primary_error_name(err), error_type=type(err).__name__, message=str(err),
                       output=self.run.last_output.get(node_id))

