"""The shared, lock-protected state of one run: node machines, outputs, errors, and the one place where
state changes are made, journaled and announced."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from alas_argo.ir.plan import PlanVersion
from alas_argo.ir.workflow import Workflow
from alas_argo.log.events import EventType
from alas_argo.runtime.clock import Clock
from alas_argo.runtime.context import Failure
from alas_argo.runtime.journal import Journal
from alas_argo.runtime.policies import primary_error_name
from alas_argo.runtime.result import StateChange
from alas_argo.runtime.states import NodeState, NodeStateMachine, check_transition

__all__ = ["Cancelled", "Listener", "RunState"]

#: Receives every state change (from runtime threads, serialized).
Listener = Callable[[StateChange], None]

_EVENT = {
    NodeState.READY: EventType.NODE_READY,
    NodeState.RUNNING: EventType.NODE_STARTED,
    NodeState.FAILED_RETRYABLE: EventType.NODE_RETRYING,
    NodeState.EXECUTED: EventType.NODE_SUCCEEDED,
    NodeState.FAILED: EventType.NODE_FAILED,
    NodeState.SKIPPED: EventType.NODE_SKIPPED,
    NodeState.CANCELLED: EventType.NODE_CANCELLED,
}


class Cancelled(Exception):
    """Raised inside a node's life when the runtime has cancelled the node meanwhile (lost any_of race,
    run failing); it unwinds the node's thread quietly."""


class RunState:
    """State of one run; every method is thread-safe."""

    def __init__(self, workflow: Workflow, run_id: str, inputs: dict[str, Any], journal: Journal,
                 clock: Clock, listener: Listener | None) -> None:
        self.workflow = workflow
        self.run_id = run_id
        self.inputs = inputs
        self.journal = journal
        self.clock = clock
        self.listener = listener
        self.lock = threading.RLock()
        self.machines = {n.id: NodeStateMachine(n.id) for n in workflow.nodes}
        self.outputs: dict[str, Any] = {}
        self.errors: dict[str, BaseException] = {}
        self.last_output: dict[str, Any] = {}
        self.attempts: dict[str, int] = {}
        self.commits: list[str] = []
        self.changes: list[StateChange] = []
        self.escalations: list[tuple[str, str]] = []
        self.plan_versions: list[PlanVersion] = [PlanVersion.first(workflow.name, workflow.to_json())]
        self.failures: dict[str, Failure | None] = {}
        self.listener_errors: list[str] = []
        self.cancel_events: dict[str, threading.Event] = {n.id: threading.Event() for n in workflow.nodes}

    def state(self, node_id: str) -> NodeState:
        """Current state of a node."""
        with self.lock:
            return self.machines[node_id].state

    def move(self, node_id: str, new: NodeState, *, attempt: int | None = None,
             error: BaseException | None = None, payload: dict[str, Any] | None = None) -> None:
        """Change a node's state, journal it and tell the listener.

        Raises:
            Cancelled: The node was cancelled meanwhile (its thread should stop).
            IllegalTransition: Any other illegal change (a runtime bug).
        """
        with self.lock:
            machine = self.machines[node_id]
            if machine.state is NodeState.CANCELLED and new is not NodeState.CANCELLED:
                raise Cancelled(node_id)
            check_transition(node_id, machine.state, new)
            att = attempt if attempt is not None else self.attempts.get(node_id, 0)
            msg = f"{primary_error_name(error)}: {error}" if error is not None else None
            body = dict(payload or {})
            if msg is not None:
                body["error"] = msg
            # Journaled first: a change the journal did not take (the store did not answer) did not happen. The
            # node stays where it was and fails on the store's error; changed first, a node whose success was not
            # recorded counted as executed, its output was lost to the nodes after it and the run "succeeded"
            # with a log that never saw it succeed.
            self.journal.record(_EVENT[new], node_id=node_id, attempt=att or None, payload=body)
            old = machine.to(new)
            if attempt is not None:
                self.attempts[node_id] = attempt
            change = StateChange(node_id, old, new, att, self.clock.now(), msg)
            self.changes.append(change)
            if self.listener is not None:
                try:
                    self.listener(change)
                except Exception as e:
                    # A broken progress view must not fail the plan; the error is reported in the result.
                    self.listener_errors.append(f"{type(e).__name__}: {e}")

    def executed(self, node_id: str, output: Any, *, side_effecting: bool, key: str | None = None,
                 record_hash: str | None = None) -> None:
        """Record a node's output and move it to executed (a commit when it has side effects). The event names
        the idempotency record ``key`` holding the output by its hash, when the journal gave one: that ties the
        record into the hash chain, so verify detects it deleted or replaced (as the cluster's steps do)."""
        tie = {"key": key, "record_hash": record_hash} if key is not None and record_hash is not None else None
        with self.lock:
            self.move(node_id, NodeState.EXECUTED, payload=tie)
            self.outputs[node_id] = output
            if side_effecting:
                self.commits.append(node_id)

    def record(self, etype: EventType, node_id: str | None = None, **payload: Any) -> None:
        """Journal an event that is not a state change."""
        with self.lock:
            self.journal.record(etype, node_id=node_id, attempt=self.attempts.get(node_id or "") or None,
                                payload=payload)
