"""Edges of the idempotency records (alas_argo.log.idempotency) that the mutation run of the sixteenth session
found unchecked: the record hash's stored form (which logs already written carry, and which `node.succeeded`
events name), the creation time in UTC on a machine whose own zone is not UTC, and the reason a record that is
JSON but not a record is unreadable."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone

import pytest

from alas_argo.errors import IntegrityError
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.idempotency import record_hash
from alas_argo.log.layout import idempotency_key

RECORD = {"key": "node:plan", "run_id": "r", "result": {"makespan": 55}, "created": "2025-01-02T03:04:05+00:00"}


def test_a_record_hash_is_the_sha256_of_its_canonical_json_without_hash_and_mac() -> None:
    # Pinned: records already stored carry this form, and a changed prefix or digest would refuse them all as
    # edited on the next resume.
    expected = "sha256:a2046d9d128dc647d3b788cd559d6d9a0a2339f2f5e841cfd03f20b17bd80e27"
    assert record_hash(RECORD) == expected
    assert record_hash({**RECORD, "hash": "sha256:x", "mac": "m"}) == expected
    compact = json.dumps(RECORD, sort_keys=True, separators=(",", ":")).encode()
    assert expected == "sha256:" + hashlib.sha256(compact).hexdigest()


@pytest.fixture
def machine_in_tokyo(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local zone set to UTC+9 (and put back after the test)."""
    monkeypatch.setenv("TZ", "JST-9")  # a POSIX rule: no zone database needed
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("machine_in_tokyo")
def test_a_records_creation_time_is_utc_whatever_the_machines_zone(fs_store: FsStore) -> None:
    clock = lambda: datetime(2025, 1, 2, 5, 4, 5, tzinfo=timezone(timedelta(hours=2)))  # noqa: E731
    ExecutionLog(fs_store, "r", clock=clock).idempotency_put("node:plan", {"makespan": 55})
    record = json.loads(fs_store.get(key=idempotency_key("r", "node:plan")))
    assert record["created"] == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC).isoformat() == RECORD["created"]


@pytest.mark.parametrize("data", [b"[1, 2]", b'{"key": "node:plan", "result": [55]}'])
def test_json_that_is_not_a_record_is_unreadable_and_says_so(fs_store: FsStore, data: bytes) -> None:
    where = idempotency_key("r", "node:plan")
    fs_store.put(key=where, data=data)
    with pytest.raises(IntegrityError) as caught:
        ExecutionLog(fs_store, "r").idempotency_get("node:plan")
    assert caught.value.message == "unreadable idempotency record for 'node:plan': not a record"
    assert caught.value.where == fs_store.where(where)
