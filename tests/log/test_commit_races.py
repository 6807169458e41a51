"""Two writers committing to one run, interleaved at the worst moment on purpose (not by chance): the second
writer's commit event is about to land when the first writer's commit overtakes it. Version numbers stay
unique, a commit under one idempotency key lands once, and a compare-and-swap overtaken fails (on both
backends)."""

from __future__ import annotations

import builtins
from collections.abc import Callable

import pytest

from alas_argo.errors import ConflictError
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.store import Store
from alas_argo.log.verification import verify_log


class _Overtaken(Store):
    """The inner store, except that ``overtake`` runs once, just before this writer's first event write."""

    def __init__(self, inner: Store, overtake: Callable[[], object]) -> None:
        self.inner, self.overtake, self.location = inner, overtake, inner.location
        self.fired = False

    def put_if_absent(self, *, key: str, data: bytes) -> bool:
        if "/events/" in key and not self.fired:
            self.fired = True
            self.overtake()
        return self.inner.put_if_absent(key=key, data=data)

    def put(self, *, key: str, data: bytes) -> None:
        self.inner.put(key=key, data=data)

    def get(self, *, key: str) -> bytes:
        return self.inner.get(key=key)

    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        return self.inner.list(prefix=prefix, start_after=start_after)

    def exists(self, *, key: str) -> bool:
        return self.inner.exists(key=key)


def _plan(makespan: int) -> dict[str, object]:
    return {"instance": "t", "makespan": makespan, "operations": [
        {"job": 0, "step": 0, "machine": 0, "start": 0, "end": makespan}]}


def _commits(store: Store) -> list[int]:
    return [int(e.payload["version"]) for e in ExecutionLog(store, "r").events()
            if e.type is EventType.PLAN_COMMITTED]


def test_the_same_commit_by_two_writers_at_once_lands_once(store: Store) -> None:
    """Exactly-once by idempotency key holds when the other writer's commit overtakes this one."""
    first = ExecutionLog(store, "r")
    first.append(EventType.RUN_STARTED)
    won: list[int] = []
    overtake = _Overtaken(store, lambda: won.append(first.commit_plan(_plan(3), idempotency_key="node:commit")))
    second = ExecutionLog(overtake, "r")
    assert second.commit_plan(_plan(3), idempotency_key="node:commit") == 1
    assert won == [1] and _commits(store) == [1]
    assert verify_log(store, "r").ok


def test_different_plans_committed_at_once_get_different_versions(store: Store) -> None:
    first = ExecutionLog(store, "r")
    first.append(EventType.RUN_STARTED)
    won: list[int] = []
    second = ExecutionLog(_Overtaken(store, lambda: won.append(first.commit_plan(_plan(3)))), "r")
    mine = second.commit_plan(_plan(5))
    assert sorted([*won, mine]) == [1, 2] and sorted(_commits(store)) == [1, 2]
    report = verify_log(store, "r")
    assert report.ok and report.versions == 2


def test_a_compare_and_swap_overtaken_by_another_commit_fails(store: Store) -> None:
    first = ExecutionLog(store, "r")
    first.append(EventType.RUN_STARTED)
    first.commit_plan(_plan(3))
    second = ExecutionLog(_Overtaken(store, lambda: first.commit_plan(_plan(4), expect_current=1)), "r")
    with pytest.raises(ConflictError, match="not v1"):
        second.commit_plan(_plan(5), expect_current=1)  # derived from v1, which is no longer current
    committed = [e.payload["makespan"] for e in ExecutionLog(store, "r").events()
                 if e.type is EventType.PLAN_COMMITTED]
    assert committed == [3, 4]  # the overtaking commit landed, the stale one did not


def test_one_key_with_different_plans_at_once_still_lands_once(store: Store) -> None:
    """The overtaking commit under the same key carries another plan, so it takes another version number: only
    the guard at the event write (not the number) can see that the key is taken."""
    first = ExecutionLog(store, "r")
    first.append(EventType.RUN_STARTED)
    won: list[int] = []
    overtake = _Overtaken(store, lambda: won.append(first.commit_plan(_plan(3), idempotency_key="node:commit")))
    mine = ExecutionLog(overtake, "r").commit_plan(_plan(5), idempotency_key="node:commit")
    assert mine == won[0] and _commits(store) == won
    assert verify_log(store, "r").ok


def test_equal_plans_committed_at_once_get_different_versions(store: Store) -> None:
    """Equal bytes share the plan object's number, so only the guard's "version taken" check keeps the two
    commits apart."""
    first = ExecutionLog(store, "r")
    first.append(EventType.RUN_STARTED)
    won: list[int] = []
    second = ExecutionLog(_Overtaken(store, lambda: won.append(first.commit_plan(_plan(3)))), "r")
    mine = second.commit_plan(_plan(3))
    assert (won, mine) == ([1], 2) and _commits(store) == [1, 2]
    assert verify_log(store, "r").ok
