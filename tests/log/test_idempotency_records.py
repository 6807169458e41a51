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
    assert "unreadable idempotency record for 'node:plan:abc'" in text and store.where(where) in text


def _edited(store: Store, how: str) -> str:
    """Damage the record of ``node:plan`` in run ``r`` as ``how`` says; return its store key."""
    log, other = ExecutionLog(store, "r"), ExecutionLog(store, "other")
    log.idempotency_put("node:plan", {"makespan": 55})
    log.idempotency_put("node:opt", {"makespan": 50})
    other.idempotency_put("node:plan", {"makespan": 40})
    where = idempotency_key("r", "node:plan")
    record = json.loads(store.get(key=where))
    if how == "edited":  # the result changed, the hash left as it was
        store.put(key=where, data=json.dumps({**record, "result": {"makespan": 1}}).encode())
    elif how == "another key's":
        store.put(key=where, data=store.get(key=idempotency_key("r", "node:opt")))
    else:  # another run's record of the same key
        store.put(key=where, data=store.get(key=idempotency_key("other", "node:plan")))
    return where


@pytest.mark.parametrize("how", ["edited", "another key's", "another run's"])
def test_a_record_that_is_not_the_one_written_for_its_key_is_refused(store: Store, how: str) -> None:
    """Guards resumes: an edited or copied record was handed to the step it names as that step's result (a
    resumed run went on from it while `log verify` said the log was broken)."""
    where = _edited(store, how)
    with pytest.raises(IntegrityError) as caught:
        ExecutionLog(store, "r").idempotency_get("node:plan")
    assert caught.value.message == ("the idempotency record for 'node:plan' is not the one written for it (edited, "
                                    "or copied from another key or run); run `alas log verify`")
    assert caught.value.where == store.where(where)
    assert ExecutionLog(store, "r").idempotency_get("node:opt") == {"makespan": 50}  # the others read on


def test_a_record_written_before_records_were_hashed_is_read_as_it_is(store: Store) -> None:
    where = idempotency_key("r", "node:plan")
    store.put(key=where, data=json.dumps({"key": "node:plan", "run_id": "r", "result": {"makespan": 55}}).encode())
    assert ExecutionLog(store, "r").idempotency_get("node:plan") == {"makespan": 55}


def test_a_record_nested_past_pythons_limit_is_unreadable_to_the_reader_and_to_verify(store: Store) -> None:
    # json.loads raised RecursionError: a traceback from `alas log verify` and from a resume.
    log = ExecutionLog(store, "r")
    log.idempotency_put("node:plan", {"makespan": 55})
    where = idempotency_key("r", "node:plan")
    store.put(key=where, data=b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(IntegrityError, match="unreadable idempotency record for 'node:plan': nested too deep"):
        log.idempotency_get("node:plan")
    report = log.verify()
    assert not report.ok
    assert [(p.code, p.key) for p in report.problems] == [("record_unreadable", where)]
