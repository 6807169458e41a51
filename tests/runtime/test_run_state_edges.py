"""RunState on its own (alas_argo.runtime.run_state), without a scheduler: what one change records and
announces (the attempt it carries before any was given, the clock's time), what an illegal change says, and
how a node the runtime has cancelled refuses every later change with Cancelled, not IllegalTransition."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import StoreUnavailable
from alas_argo.log.events import EventType
from alas_argo.runtime import FakeClock, IllegalTransition, MemoryJournal, NodeContext, NodeState, RunStatus, Runtime
from alas_argo.runtime.result import StateChange
from alas_argo.runtime.run_state import Cancelled, RunState
from tests.runtime.runtime_helpers import workflow


def new_run(clock: FakeClock | None = None) -> tuple[RunState, MemoryJournal, list[StateChange]]:
    """A run of two plain nodes, ``a`` and ``b``, with an in-memory journal and a listener that keeps what it
    is told."""
    seen: list[StateChange] = []
    journal = MemoryJournal()
    wf = workflow([{"id": "a", "role": "work"}, {"id": "b", "role": "work"}])
    return RunState(wf, "r1", {}, journal, clock or FakeClock(), seen.append), journal, seen


def node_events(journal: MemoryJournal) -> list[tuple[str, str | None, int | None, dict[str, Any]]]:
    return [(e["type"], e["node_id"], e["attempt"], e["payload"]) for e in journal.events]


def test_a_change_before_any_attempt_is_announced_as_attempt_0_and_journaled_without_one() -> None:
    """``StateChange.attempt`` is an int: a node made ready (no attempt yet) is announced with attempt 0,
    journaled with none; the attempt given when it starts is then kept by the changes that follow."""
    run, journal, seen = new_run()
    run.move("a", NodeState.READY)
    run.move("a", NodeState.RUNNING, attempt=1)
    run.move("a", NodeState.FAILED_RETRYABLE, error=ValueError("boom"), payload={"delay": 0.5})
    assert [(c.node_id, c.old, c.new, c.attempt, c.error) for c in seen] == [
        ("a", NodeState.PENDING, NodeState.READY, 0, None),
        ("a", NodeState.READY, NodeState.RUNNING, 1, None),
        ("a", NodeState.RUNNING, NodeState.FAILED_RETRYABLE, 1, "ValueError: boom"),
    ]
    assert type(seen[0].attempt) is int
    assert node_events(journal) == [
        (EventType.NODE_READY, "a", None, {}),
        (EventType.NODE_STARTED, "a", 1, {}),
        (EventType.NODE_RETRYING, "a", 1, {"delay": 0.5, "error": "ValueError: boom"}),
    ]
    assert run.changes == seen


def test_each_change_carries_the_run_clocks_time() -> None:
    """The time of a change is the run's clock at the change (a fake clock here, so the values are exact)."""
    clock = FakeClock(start=100.0)
    run, _, seen = new_run(clock)
    run.move("a", NodeState.READY)
    clock.sleep(2.5)
    run.move("a", NodeState.RUNNING, attempt=1)
    assert [c.time for c in seen] == [100.0, 102.5]


def test_an_illegal_change_is_refused_naming_the_node_and_records_nothing() -> None:
    """A change the machine forbids is an IllegalTransition whose ``where`` names the node: nothing is
    journaled, announced or changed."""
    run, journal, seen = new_run()
    with pytest.raises(IllegalTransition, match="illegal transition pending -> running") as caught:
        run.move("b", NodeState.RUNNING, attempt=1)
    assert caught.value.where == {"node": "b"}
    assert run.state("b") is NodeState.PENDING
    assert journal.events == [] and seen == [] and run.changes == []


def test_a_cancelled_node_refuses_every_later_change_with_cancelled() -> None:
    """Once the runtime has cancelled a node, its thread's next change (a start, a success) raises Cancelled
    naming the node, so the thread unwinds quietly: no output or commit kept, nothing journaled after the
    cancellation. Cancelling it twice is a runtime bug: IllegalTransition, terminal states are final."""
    run, journal, seen = new_run()
    run.move("a", NodeState.READY)
    run.move("a", NodeState.RUNNING, attempt=1)
    run.move("a", NodeState.CANCELLED)
    with pytest.raises(Cancelled) as started:
        run.move("a", NodeState.RUNNING, attempt=2)
    assert started.value.args == ("a",)
    with pytest.raises(Cancelled) as done:
        run.executed("a", {"x": 1}, side_effecting=True)
    assert done.value.args == ("a",)
    assert run.outputs == {} and run.commits == []
    with pytest.raises(IllegalTransition, match=r"cancelled -> cancelled \(terminal states are final\)"):
        run.move("a", NodeState.CANCELLED)
    assert run.state("a") is NodeState.CANCELLED
    assert [e[0] for e in node_events(journal)] == [EventType.NODE_READY, EventType.NODE_STARTED,
                                                    EventType.NODE_CANCELLED]
    assert [c.new for c in seen] == [NodeState.READY, NodeState.RUNNING, NodeState.CANCELLED]
    assert run.attempts == {"a": 1}


def test_an_event_that_is_not_a_change_carries_its_nodes_last_attempt_and_a_run_event_none() -> None:
    """``record`` journals under the node's current attempt; a run-level event (no node) carries none."""
    run, journal, _ = new_run()
    run.move("a", NodeState.READY)
    run.move("a", NodeState.RUNNING, attempt=3)
    run.record(EventType.NODE_IDEMPOTENT_HIT, "a", key="k1")
    run.record(EventType.NODE_IDEMPOTENT_HIT, "b", key="k2")
    run.record(EventType.RUN_STARTED, workflow="t")
    assert node_events(journal)[2:] == [
        (EventType.NODE_IDEMPOTENT_HIT, "a", 3, {"key": "k1"}),
        (EventType.NODE_IDEMPOTENT_HIT, "b", None, {"key": "k2"}),
        (EventType.RUN_STARTED, None, None, {"workflow": "t"}),
    ]


class FailingJournal(MemoryJournal):
    """A journal whose ``fail_at``-th record raises StoreUnavailable (a store that stopped answering once)."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.calls, self.fail_at = 0, fail_at

    def record(self, type: EventType | str, **fields: Any) -> None:
        self.calls += 1
        if self.calls == self.fail_at:
            raise StoreUnavailable("the store did not answer", where="s3")
        super().record(type, **fields)


def test_a_change_the_journal_did_not_take_did_not_happen() -> None:
    """The journal is written before the state changes: when it raises, the node stays where it was, nothing
    is announced, and no output or commit is kept; the next change is journaled from there."""
    seen: list[StateChange] = []
    journal = FailingJournal(fail_at=3)
    run = RunState(workflow([{"id": "a", "role": "work"}]), "r1", {}, journal, FakeClock(), seen.append)
    run.move("a", NodeState.READY)
    run.move("a", NodeState.RUNNING, attempt=1)
    with pytest.raises(StoreUnavailable):
        run.executed("a", {"x": 1}, side_effecting=True)
    assert run.state("a") is NodeState.RUNNING and run.attempts == {"a": 1}
    assert run.outputs == {} and run.commits == [] and [c.new for c in seen] == [NodeState.READY, NodeState.RUNNING]
    run.move("a", NodeState.FAILED, error=StoreUnavailable("the store did not answer", where="s3"))
    assert [e[0] for e in node_events(journal)] == [EventType.NODE_READY, EventType.NODE_STARTED,
                                                    EventType.NODE_FAILED]
    # An attempt given with a change that was not journaled is not kept either.
    other = RunState(workflow([{"id": "a", "role": "work"}]), "r2", {}, FailingJournal(fail_at=2), FakeClock(),
                     None)
    other.move("a", NodeState.READY)
    with pytest.raises(StoreUnavailable):
        other.move("a", NodeState.RUNNING, attempt=4)
    assert other.state("a") is NodeState.READY and other.attempts == {}


@pytest.mark.parametrize(("fail_at", "lost"), [(4, "node.succeeded of a"), (7, "node.succeeded of b")])
def test_a_success_the_log_did_not_take_fails_the_run_instead_of_succeeding_it(fail_at: int, lost: str) -> None:
    """A two-node run whose store misses one node's success: the run fails at that node with the store's
    error, and the log says so. (The success used to count in memory only: the run "succeeded", the next node
    ran without the lost output, and the log never saw the node succeed.)"""
    journal = FailingJournal(fail_at)
    wf = workflow([{"id": "a", "role": "work"}, {"id": "b", "role": "work"}], [("a", "b")])
    given: list[dict[str, Any]] = []

    def work(ctx: NodeContext, doc: dict[str, Any]) -> dict[str, Any]:
        given.append(doc)
        return {"ok": 1}

    result = Runtime({"work": work}, journal=journal).run(wf)
    failed = lost.rsplit(" ", 1)[-1]
    assert (result.status, result.failed_node) == (RunStatus.FAILED, failed), lost
    assert result.errors == {failed: "StoreUnavailable: s3: the store did not answer"}
    assert failed not in result.outputs
    events = [(e["type"], e["node_id"]) for e in journal.events]
    assert (EventType.NODE_FAILED, failed) in events and events[-1] == (EventType.RUN_FAILED, None)
    assert (EventType.NODE_SUCCEEDED, failed) not in events
    assert all(doc.get("a") == {"ok": 1} for doc in given[1:])  # b, when it ran, had a's output
