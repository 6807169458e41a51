"""verify(): every kind of damage is detected and the first bad record is named, on both backends."""

from __future__ import annotations

from alas_argo.log.event import Event, seal_event
from alas_argo.log.execution_log import ExecutionLog, event_key, plan_key
from alas_argo.log.fs_store import FsStore
from alas_argo.log.plans import encode_plan
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store


def _log(store: Store, run: str = "v", n: int = 5) -> ExecutionLog:
    log = ExecutionLog(store, run)
    log.append("run.started")
    log.commit_plan({"instance": "t", "makespan": 3, "operations": [
        {"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]})
    for i in range(n - 2):
        log.append("node.succeeded", payload={"i": i})
    return log


def _edit(store: Store, key: str, **changes: object) -> None:
    doc = Event.model_validate_json(store.get(key=key)).model_dump(mode="json")
    doc.update(changes)
    store.put(key=key, data=Event.model_validate(doc).to_bytes())


def test_intact_log_verifies(store: Store) -> None:
    report = _log(store).verify()
    assert report.ok and report.events == 5 and report.versions == 1 and report.problems == []
    assert report.summary() == (f"run {report.run_id}: intact (5 events, 1 plan version, current v1, "
                                f"{report.records} idempotency records; no key: seals not checked)")


def test_edited_payload_is_a_bad_hash_at_that_event(store: Store) -> None:
    log = _log(store)
    _edit(store, event_key("v", 3), payload={"i": 42})
    report = log.verify()
    assert not report.ok and report.first_bad is not None
    assert (report.first_bad.code, report.first_bad.seq) == ("bad_hash", 3)
    assert "event 3" in report.summary()


def test_resealed_edit_breaks_the_chain_at_the_next_event(store: Store) -> None:
    log = _log(store)
    doc = Event.model_validate_json(store.get(key=event_key("v", 2))).model_dump(mode="json")
    doc["payload"] = {"i": 42}
    doc.pop("hash")
    store.put(key=event_key("v", 2), data=seal_event(**doc).to_bytes())  # a forger re-hashes the record
    report = log.verify()
    assert [(p.code, p.seq) for p in report.problems] == [("broken_chain", 3)]


def _delete(store: Store, key: str) -> None:
    """Lose a record behind the log's back (the store API itself cannot delete, which is the point)."""
    if isinstance(store, FsStore):
        store.root.joinpath(*key.split("/")).unlink()
    else:
        assert isinstance(store, S3Store)
        store._client.delete_object(Bucket=store.bucket, Key=store.prefix + key)


def test_missing_event_is_a_gap(store: Store) -> None:
    log = _log(store)
    _delete(store, event_key("v", 2))
    report = log.verify()
    assert [(p.code, p.seq) for p in report.problems] == [("gap", 2)]
    assert report.events == 4 and "missing" in report.problems[0].message


def test_event_copied_from_another_run_is_named(store: Store) -> None:
    _log(store, "src")
    log = _log(store, "dst")
    store.put(key=event_key("dst", 4), data=store.get(key=event_key("src", 4)))
    codes = {(p.code, p.seq) for p in log.verify().problems}
    assert ("run_mismatch", 4) in codes


def test_plan_missing_or_altered_is_named(store: Store) -> None:
    log = _log(store)
    store.put(key=plan_key("v", 1), data=encode_plan({"instance": "t", "makespan": 1, "operations": []}))
    report = log.verify()
    assert [(p.code, p.seq) for p in report.problems] == [("plan_hash_mismatch", 1)]
    store.put(key=plan_key("v", 1), data=b"not gzip")
    assert [(p.code, p.seq) for p in log.verify().problems] == [("plan_unreadable", 1)]


def test_stray_key_is_reported(store: Store) -> None:
    log = _log(store)
    store.put(key="runs/v/events/notes.json", data=b"{}")
    assert [p.code for p in log.verify().problems] == ["stray_key"]
