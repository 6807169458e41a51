"""Edges of alas_argo.runtime.states left open by mutation testing: an illegal move out of a state that is not
terminal says only which move was refused; "terminal states are final" is reserved for moves out of a terminal
state, where it is the reason (telling a runtime bug in the scheduler apart from a late event on a finished
node), and both name the node in ``where``."""

from __future__ import annotations

import pytest

from alas_argo.runtime import TERMINAL, IllegalTransition, NodeState
from alas_argo.runtime.states import check_transition


@pytest.mark.parametrize(("old", "new"), [(NodeState.PENDING, NodeState.RUNNING),
                                          (NodeState.READY, NodeState.EXECUTED),
                                          (NodeState.FAILED_RETRYABLE, NodeState.READY)])
def test_an_illegal_move_out_of_a_live_state_names_only_the_move(old: NodeState, new: NodeState) -> None:
    assert old not in TERMINAL
    with pytest.raises(IllegalTransition) as caught:
        check_transition("n1", old, new)
    assert caught.value.args == (f"illegal transition {old} -> {new}",)
    assert caught.value.where == {"node": "n1"}


def test_a_move_out_of_a_terminal_state_says_why() -> None:
    with pytest.raises(IllegalTransition) as caught:
        check_transition("n2", NodeState.EXECUTED, NodeState.RUNNING)
    assert caught.value.args == ("illegal transition executed -> running (terminal states are final)",)
    assert caught.value.where == {"node": "n2"}
