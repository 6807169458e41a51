"""The node state machine.

::

    pending -> ready -> running -> executed
       |         |        |  ^
       |         |        v  |
       |         |   failed_retryable -> failed
       +---------+--------+--------------> skipped / cancelled

``running -> failed_retryable -> running`` is one more attempt (a retry, a patch or a replan);
``executed``, ``failed``, ``skipped`` and ``cancelled`` are terminal: nothing leaves them.
"""

from __future__ import annotations

from enum import StrEnum

from alas_argo.errors import WorkflowError

__all__ = ["TERMINAL", "TRANSITIONS", "IllegalTransition", "NodeState", "NodeStateMachine", "check_transition"]


class NodeState(StrEnum):
    """Where a node is in its life."""

    PENDING = "pending"
    READY = "ready"
    RUNNING = "running"
    FAILED_RETRYABLE = "failed_retryable"
    EXECUTED = "executed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


#: States nothing leaves.
TERMINAL = frozenset({NodeState.EXECUTED, NodeState.FAILED, NodeState.SKIPPED, NodeState.CANCELLED})

#: Every legal transition.
TRANSITIONS: dict[NodeState, frozenset[NodeState]] = {
    NodeState.PENDING: frozenset({NodeState.READY, NodeState.SKIPPED, NodeState.CANCELLED}),
    NodeState.READY: frozenset({NodeState.RUNNING, NodeState.SKIPPED, NodeState.CANCELLED}),
    NodeState.RUNNING: frozenset({NodeState.EXECUTED, NodeState.FAILED_RETRYABLE, NodeState.FAILED,
                                  NodeState.CANCELLED}),
    NodeState.FAILED_RETRYABLE: frozenset({NodeState.RUNNING, NodeState.FAILED, NodeState.CANCELLED}),
    NodeState.EXECUTED: frozenset(),
    NodeState.FAILED: frozenset(),
    NodeState.SKIPPED: frozenset(),
    NodeState.CANCELLED: frozenset(),
}


class IllegalTransition(WorkflowError):
    """A state change the machine does not allow (a runtime bug, never a user error)."""


def check_transition(node_id: str, old: NodeState, new: NodeState) -> None:
    """Raise IllegalTransition unless ``old -> new`` is legal."""
    if new not in TRANSITIONS[old]:
        final = " (terminal states are final)" if old in TERMINAL else ""
        raise IllegalTransition(f"illegal transition {old} -> {new}{final}", where={"node": node_id})


class NodeStateMachine:
    """The state of one node plus its history; every change goes through :meth:`to`."""

    def __init__(self, node_id: str, state: NodeState = NodeState.PENDING) -> None:
        self.node_id = node_id
        self.state = state
        self.history: list[NodeState] = [state]

    @property
    def terminal(self) -> bool:
        """Whether the node has reached a final state."""
        return self.state in TERMINAL

    def to(self, new: NodeState) -> NodeState:
        """Move to ``new``; returns the previous state; IllegalTransition if not allowed."""
        check_transition(self.node_id, self.state, new)
        old, self.state = self.state, new
        self.history.append(new)
        return old
