"""Saga compensation: undo the committed side effects of a failed run, newest first.

A node with a ``write`` or ``external`` side effect *commits* when it executes. When the run fails under
``on_failure: rollback`` (or ``retry``, once recovery is exhausted), the compensation node of every
committed node runs in reverse commit order. Each finished compensation is recorded in the journal's
idempotency records under ``compensation/<run>/<node>``, so compensating again (a crashed rollback
resumed, a double call) skips what is already undone.

A compensation runs under its own node's policy, as any step does: each attempt within the policy's
``timeout`` (a hung undo is stopped, not waited on for ever, so the rollback goes on to the others), and
errors in ``retry_on`` retried up to ``max_attempts`` with the policy's backoff. The handler sees the run's
inputs, like every other handler.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from alas_argo.errors import AlasError
from alas_argo.ir.node import Node
from alas_argo.ir.workflow import Workflow
from alas_argo.log.events import EventType
from alas_argo.runtime.backoff import delay
from alas_argo.runtime.clock import Clock, RealClock
from alas_argo.runtime.context import Failure, Handler, NodeContext
from alas_argo.runtime.dispatch import Dispatcher
from alas_argo.runtime.journal import Journal
from alas_argo.runtime.policies import matches, primary_error_name

__all__ = ["Saga", "compensation_key"]


def compensation_key(run_id: str, node_id: str) -> str:
    """Idempotency key recording that ``node_id``'s compensation in run ``run_id`` is done."""
    return f"compensation/{run_id}/{node_id}"


class Saga:
    """Compensates committed nodes of one run."""

    def __init__(self, workflow: Workflow, handlers: Mapping[str, Handler], journal: Journal,
                 run_id: str, *, dispatcher: Dispatcher | None = None, clock: Clock | None = None,
                 inputs: Mapping[str, Any] | None = None, seed: int = 0) -> None:
        self.workflow = workflow
        self.handlers = handlers
        self.journal = journal
        self.run_id = run_id
        self.dispatcher = dispatcher or Dispatcher()
        self.clock: Clock = clock or RealClock()
        self.inputs: Mapping[str, Any] = inputs or {}
        self.seed = seed
        self.errors: dict[str, str] = {}
        #: Attempts each compensation took, by the committed node it undid (or failed to).
        self.attempts: dict[str, int] = {}

    def compensate(self, commits: Sequence[str], outputs: Mapping[str, Any]) -> list[str]:
        """Run the compensations of ``commits`` (in commit order) newest first; returns the committed node
        ids whose compensation ran now. A failing compensation is recorded and the others still run."""
        ran: list[str] = []
        for node_id in reversed(commits):
            comp_id = self.workflow.compensation_of(self.workflow.node(node_id))
            if comp_id is None:
                continue
            key = compensation_key(self.run_id, node_id)
            if self.journal.get_idempotent(key) is not None:
                continue
            comp = self.workflow.node(comp_id)
            self.journal.record(EventType.COMPENSATION_STARTED, node_id=comp_id,
                                payload={"compensates": node_id})
            try:
                result = self._attempts(comp, node_id, outputs.get(node_id))
            except Exception as e:
                # A timeout names the compensation node already; the node's failure says where once.
                said = e.message if isinstance(e, AlasError) and e.where == {"node": comp_id} else str(e)
                self.errors[node_id] = f"{primary_error_name(e)}: {said}"
                self.journal.record(EventType.COMPENSATION_FINISHED, node_id=comp_id,
                                    payload={"compensates": node_id, "ok": False,
                                             "error": self.errors[node_id]})
                continue
            tie = self.journal.put_idempotent(key, {"compensates": node_id, "by": comp_id})
            # The handler's result too, as the cluster's exit handler words it: one wording on every engine. The
            # record that keeps the compensation from running twice is named by its hash where it has one, so
            # verify detects it deleted or replaced.
            finished: dict[str, Any] = {"compensates": node_id, "ok": True, "result": result}
            if tie is not None:
                finished.update(key=key, record_hash=tie)
            self.journal.record(EventType.COMPENSATION_FINISHED, node_id=comp_id, payload=finished)
            ran.append(node_id)
        return ran

    def _attempts(self, comp: Node, node_id: str, output: Any) -> Any:
        """Call ``comp``'s handler under its policy: each attempt within the timeout, retried with backoff
        while the error is one the policy retries; the last error is raised."""
        policy = self.workflow.policy_for(comp)
        rng = random.Random(f"{self.seed}:{comp.id}:{node_id}")
        attempt = self.attempts[node_id] = 1
        handler = self.handlers.get(comp.role or "")
        if handler is None:
            raise KeyError(comp.role or "")
        while True:
            ctx = NodeContext(node_id=comp.id, role=comp.role or "", attempt=attempt, run_id=self.run_id,
                              workflow=self.workflow.name, plan_version=self.workflow.version,
                              inputs=self.inputs, deps={node_id: output}, params=comp.params, level="compensate",
                              failure=Failure(error="", error_type="", message="run failed", output=output))
            try:
                return self.dispatcher.call(handler, ctx, {**comp.params, node_id: output}, policy.timeout)
            except Exception as e:
                if attempt >= policy.retry.max_attempts or not matches(policy.retry.retry_on, e):
                    raise
                self.clock.sleep(delay(policy.retry.backoff, attempt, rng))
            attempt = self.attempts[node_id] = attempt + 1
