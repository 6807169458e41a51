"""What a run returns, how each node's life ended, and what listeners are told."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from alas_argo.errors import WorkflowError
from alas_argo.ir.plan import PlanVersion
from alas_argo.runtime.states import NodeState

__all__ = ["Outcome", "RunResult", "RunStatus", "StateChange"]


@dataclass
class Outcome:
    """How a node's life ended: with an output, or with the error that failed it."""

    ok: bool
    output: Any = None
    error: BaseException | None = None


class RunStatus(StrEnum):
    """Outcome of a run."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class StateChange:
    """One node state change, as given to a run's listener (called from runtime threads, in order)."""

    node_id: str
    old: NodeState
    new: NodeState
    attempt: int
    time: float
    error: str | None = None


@dataclass
class RunResult:
    """Everything a caller needs after a run.

    Attributes:
        run_id: Id of the run.
        workflow: Name of the workflow.
        status: succeeded or failed.
        outputs: Output of every executed node, by id.
        states: Final state of every node.
        attempts: Attempts made per node (loop iterations and recovery calls not included).
        errors: Last error per failed node (``"<ErrorName>: <message>"``).
        failed_node: The node whose failure failed the run, if any.
        compensated: Nodes whose compensation ran, in the order it ran.
        escalations: ``(node, level)`` recovery escalations in order (level "patch" or "replan").
        plan_versions: The workflow's plan version first, then one per replan.
        changes: Every state change in order.
        seconds: Wall time of the run.
        listener_errors: Errors the listener raised (they never fail the run).
    """

    run_id: str
    workflow: str
    status: RunStatus
    outputs: dict[str, Any]
    states: dict[str, NodeState]
    attempts: dict[str, int]
    errors: dict[str, str]
    failed_node: str | None
    compensated: list[str]
    escalations: list[tuple[str, str]]
    plan_versions: list[PlanVersion]
    changes: list[StateChange] = field(default_factory=list)
    seconds: float = 0.0
    listener_errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the run succeeded."""
        return self.status is RunStatus.SUCCEEDED

    def output(self, node_id: str) -> Any:
        """The output of ``node_id``; WorkflowError if it did not execute."""
        if node_id not in self.outputs:
            state = self.states.get(node_id)
            raise WorkflowError(f"node has no output (state {state})", where={"node": node_id})
        return self.outputs[node_id]

    def history(self, node_id: str) -> list[NodeState]:
        """The states ``node_id`` went through, starting from pending."""
        out = [NodeState.PENDING]
        out.extend(c.new for c in self.changes if c.node_id == node_id)
        return out
