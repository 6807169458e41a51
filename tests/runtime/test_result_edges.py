"""A run's result (alas_argo.runtime.result) at the edges mutation testing found unpinned: asking for the output of
a node that has none is a WorkflowError whose message says the node's final state and whose ``where`` names the
node, and the state changes a listener is given cannot be altered by it (the run's own record stays as it was)."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import PermanentError, WorkflowError
from alas_argo.runtime import NodeContext, NodeState, RunResult, RunStatus, Runtime, StateChange
from tests.runtime.runtime_helpers import workflow


def _echo(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
    return {"id": ctx.node_id}


def _broken(ctx: NodeContext, doc: dict[str, Any]) -> Any:
    raise PermanentError("broken")


def _failed_run() -> RunResult:
    """``a`` fails for good, so ``b`` after it is cancelled; ``c`` stands alone and is cancelled with the run."""
    wf = workflow([{"id": "a", "role": "broken"}, {"id": "b", "role": "echo"}, {"id": "c", "role": "echo"}],
                  [("a", "b")])
    return Runtime({"broken": _broken, "echo": _echo}).run(wf)


@pytest.mark.parametrize(("node", "state"), [("a", "failed"), ("b", "cancelled")])
def test_the_output_of_a_node_that_did_not_execute_is_an_error_naming_it_and_its_state(node: str,
                                                                                        state: str) -> None:
    result = _failed_run()
    assert result.status is RunStatus.FAILED and not result.ok
    assert result.states[node] is NodeState(state)
    with pytest.raises(WorkflowError) as caught:
        result.output(node)
    assert caught.value.message == f"node has no output (state {state})"
    assert caught.value.where == {"node": node}
    assert str(caught.value) == f"node has no output (state {state}) (node {node})"


def test_the_output_of_a_node_the_workflow_lacks_is_an_error_naming_it() -> None:
    with pytest.raises(WorkflowError) as caught:
        _failed_run().output("nosuch")
    assert caught.value.where == {"node": "nosuch"}
    assert caught.value.message.startswith("node has no output")


def test_a_listener_cannot_alter_the_state_changes_the_run_records() -> None:
    # The listener gets the same StateChange objects the result keeps; they are frozen, so a listener that
    # tries to rewrite one fails (the failure is kept, the run goes on) and the run's history is untouched.
    def rewrite(change: StateChange) -> None:
        change.new = NodeState.FAILED  # type: ignore[misc]

    result = Runtime({"echo": _echo}, listener=rewrite).run(workflow([{"id": "a", "role": "echo"}]))
    assert result.ok and result.output("a") == {"id": "a"}
    assert result.history("a") == [NodeState.PENDING, NodeState.READY, NodeState.RUNNING, NodeState.EXECUTED]
    assert len(result.listener_errors) == 3
    assert set(result.listener_errors) == {"FrozenInstanceError: cannot assign to field 'new'"}
