"""What a handler sees: the node context, the failure being recovered from, and the handler type."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Failure", "Handler", "NodeContext"]


@dataclass(frozen=True)
class Failure:
    """The failure a patch, replan or compensation handler is called about."""

    error: str
    error_type: str
    message: str
    output: Any = None


@dataclass(frozen=True)
class NodeContext:
    """Read-only facts about the call a handler is serving.

    Attributes:
        node_id: Id of the node being run (for a compensation: the compensation node).
        role: Role of the handler called.
        attempt: 1-based attempt number of this node.
        run_id: Id of the run.
        workflow: Name of the workflow.
        plan_version: Version of the workflow plan being executed.
        inputs: The run's shared inputs (do not mutate).
        deps: Outputs of the node's satisfied dependencies, by node id.
        params: The node's static parameters.
        item: The map item (map nodes), else None.
        index: The map item's index (map nodes), else None.
        iteration: 1-based loop iteration (looping nodes), else None.
        previous: The previous loop iteration's output, else None.
        failure: The failure being recovered from (patch, replan), or the compensated node's output.
        level: "run", "patch", "replan" or "compensate".
    """

    node_id: str
    role: str
    attempt: int
    run_id: str
    workflow: str
    plan_version: int = 1
    inputs: Mapping[str, Any] = field(default_factory=dict)
    deps: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)
    item: Any = None
    index: int | None = None
    iteration: int | None = None
    previous: Any = None
    failure: Failure | None = None
    level: str = "run"
    cancel_event: threading.Event | None = field(default=None, compare=False, repr=False)

    def cancelled(self) -> bool:
        """Whether the runtime has given up on this call (time out, lost any_of race): cooperative
        handlers poll this and return early."""
        return self.cancel_event is not None and self.cancel_event.is_set()

    def portable(self) -> NodeContext:
        """A copy that can cross a process boundary (events do not pickle)."""
        return replace(self, cancel_event=None, inputs=dict(self.inputs), deps=dict(self.deps),
                       params=dict(self.params))


#: A handler: called with the context and the node's input document, returns the output (JSON data).
Handler = Callable[[NodeContext, dict[str, Any]], Any]
