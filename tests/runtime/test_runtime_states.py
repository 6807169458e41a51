"""The node state machine: every legal transition, every illegal one, terminal states final."""

from __future__ import annotations

import itertools

import pytest

from alas_argo.runtime import TERMINAL, TRANSITIONS, IllegalTransition, NodeState, NodeStateMachine
from alas_argo.runtime.states import check_transition

LEGAL = [(a, b) for a, targets in TRANSITIONS.items() for b in targets]
ILLEGAL = [(a, b) for a, b in itertools.product(NodeState, NodeState) if b not in TRANSITIONS[a]]


def test_the_transition_table_is_the_documented_one() -> None:
    assert set(LEGAL) == {
        ("pending", "ready"), ("pending", "skipped"), ("pending", "cancelled"),
        ("ready", "running"), ("ready", "skipped"), ("ready", "cancelled"),
        ("running", "executed"), ("running", "failed_retryable"), ("running", "failed"),
        ("running", "cancelled"),
        ("failed_retryable", "running"), ("failed_retryable", "failed"), ("failed_retryable", "cancelled"),
    }
    assert set(TERMINAL) == {"executed", "failed", "skipped", "cancelled"}


@pytest.mark.parametrize(("old", "new"), LEGAL)
def test_legal_transition(old: NodeState, new: NodeState) -> None:
    m = NodeStateMachine("n", old)
    assert m.to(new) is old
    assert m.state is new and m.history == [old, new]


@pytest.mark.parametrize(("old", "new"), ILLEGAL)
def test_illegal_transition_raises_and_changes_nothing(old: NodeState, new: NodeState) -> None:
    m = NodeStateMachine("n", old)
    with pytest.raises(IllegalTransition, match=f"{old} -> {new}"):
        m.to(new)
    assert m.state is old and m.history == [old]


@pytest.mark.parametrize("terminal", sorted(TERMINAL))
def test_terminal_states_are_final(terminal: NodeState) -> None:
    for new in NodeState:
        with pytest.raises(IllegalTransition, match="terminal states are final"):
            check_transition("n", terminal, new)


def test_a_full_life_with_a_retry() -> None:
    m = NodeStateMachine("n")
    for s in ("ready", "running", "failed_retryable", "running", "executed"):
        m.to(NodeState(s))
    assert m.terminal and [str(s) for s in m.history] == [
        "pending", "ready", "running", "failed_retryable", "running", "executed"]
    with pytest.raises(IllegalTransition, match=r"node n"):
        m.to(NodeState.RUNNING)
