"""Idempotency records: one result per key *per run*, the key kept in clear for operators, an unreadable
record named with its key and location (on both backends)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from alas_argo.errors import IntegrityError
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.layout import idempotency_key
from alas_argo.log.store import Store


def test_the_same_key_in_two_runs_keeps_two_results(store: Store) -> None:
    first, second = ExecutionLog(store, "one"), ExecutionLog(store, "two")
    assert first.idempotency_put("node:plan", {"makespan": 55}) == {"makespan": 55}
    assert second.idempotency_put("node:plan", {"makespan": 60}) == {"makespan": 60}
    assert first.idempotency_get("node:plan") == {"makespan": 55}
    assert second.idempotency_get("node:plan") == {"makespan": 60}


def test_a_record_keeps_its_key_run_and_creation_time_in_clear(store: Store) -> None:
    # A clock in another zone: the record says UTC whatever the clock's zone.
    clock = lambda: datetime(2025, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))  # noqa: E731
    log = ExecutionLog(store, "clear", clock=clock)
    log.idempotency_put("node:plan:abc", {"makespan": 55})
    record = json.loads(store.get(key=idempotency_key("clear", "node:plan:abc")))
    assert {k: record[k] for k in ("key", "run_id", "result", "created")} == {
        "key": "node:plan:abc", "run_id": "clear", "result": {"makespan": 55},
        "created": datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC).isoformat()}


@pytest.mark.parametrize("data", [b"not json", b'{"key": "k"}', b"[1, 2]"])
def test_an_unreadable_record_is_named_with_its_key_and_location(store: Store, data: bytes) -> None:
    log = ExecutionLog(store, "bad")
    where = idempotency_key("bad", "node:plan:abc")
    store.put(key=where, data=data)
    with pytest.raises(IntegrityError) as err:
        log.idempotency_get("node:plan:abc")
    text = str(err.value)
    assert "unreadable idempotency record for 'node:plan:abc'" in text and f"{store.location}/{where}" in text
