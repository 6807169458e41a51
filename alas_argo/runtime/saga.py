"""Saga compensation: undo the committed side effects of a failed run, newest first.

A node with a ``write`` or ``external`` side effect *commits* when it executes. When the run fails under
``on_failure: rollback`` (or ``retry``, once recovery is exhausted), the compensation node of every
committed node runs in reverse commit order. Each finished compensation is recorded in the journal's
idempotency records under ``compensation/<run>/<node>``, so compensating again (a crashed rollback
resumed, a double call) skips what is already undone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from alas_argo.ir.workflow import Workflow
from alas_argo.log.events import EventType
from alas_argo.runtime.context import Failure, Handler, NodeContext
from alas_argo.runtime.journal import Journal
from alas_argo.runtime.policies import primary_error_name

__all__ = ["Saga", "compensation_key"]


def compensation_key(run_id: str, node_id: str) -> str:
    """Idempotency key recording that ``node_id``'s compensation in run ``run_id`` is done."""
    return f"compensation/{run_id}/{node_id}"


class Saga:
    """Compensates committed nodes of one run."""

    def __init__(self, workflow: Workflow, handlers: Mapping[str, Handler], journal: Journal,
                 run_id: str) -> None:
        self.workflow = workflow
        self.handlers = handlers
        self.journal = journal
        self.run_id = run_id
        self.errors: dict[str, str] = {}

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
            ctx = NodeContext(node_id=comp_id, role=comp.role or "", attempt=1, run_id=self.run_id,
                              workflow=self.workflow.name, plan_version=self.workflow.version,
                              deps={node_id: outputs.get(node_id)}, params=comp.params, level="compensate",
                              failure=Failure(error="", error_type="", message="run failed",
                                              output=outputs.get(node_id)))
            try:
                handler = self.handlers[comp.role or ""]
                result = handler(ctx, {**comp.params, node_id: outputs.get(node_id)})
            except Exception as e:
                self.errors[node_id] = f"{primary_error_name(e)}: {e}"
                self.journal.record(EventType.COMPENSATION_FINISHED, node_id=comp_id,
                                    payload={"compensates": node_id, "ok": False,
                                             "error": self.errors[node_id]})
                continue
            self.journal.put_idempotent(key, {"compensates": node_id, "by": comp_id})
            # The handler's result too, as the cluster's exit handler words it: one wording on every engine.
            self.journal.record(EventType.COMPENSATION_FINISHED, node_id=comp_id,
                                payload={"compensates": node_id, "ok": True, "result": result})
            ran.append(node_id)
        return ran
