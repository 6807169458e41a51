"""What only verification can catch: a committed plan object lost from the store, a chain forged from its
first link, an unreadable or misplaced record, a version committed twice, a commit event naming no plan, plan
objects left behind by removed commits. Driven through the public API (the log appends and commits,
``verify_log`` and ``alas log verify`` judge), with the damage done behind the log's back, on the filesystem
and on S3 alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.log.event import GENESIS_HASH, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.fs_store import FsStore
from alas_argo.log.layout import idempotency_key
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store
from alas_argo.log.verification import verify_log
from tests.s3server import LoopbackS3

Delete = Callable[[str], None]


@pytest.fixture(params=["fs", "s3"])
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Store, Delete]:
    """A store of each backend, and a way to lose one of its records that the store API does not offer."""
    if request.param == "fs":
        fs = FsStore(tmp_path / "store")
        return fs, lambda key: fs.root.joinpath(*key.split("/")).unlink()
    server: LoopbackS3 = request.getfixturevalue("s3_server")
    s3 = S3Store(**server.store_kwargs(request.getfixturevalue("s3_bucket")), backoff=0.01, max_retries=2)
    client = server.client()
    return s3, lambda key: client.delete_object(Bucket=s3.bucket, Key=s3.prefix + key)


def _plan(makespan: int) -> dict[str, object]:
    return {"instance": "t", "makespan": makespan, "operations": [
        {"job": 0, "step": 0, "machine": 0, "start": 0, "end": makespan}]}


def _run(store: Store, run: str = "v") -> ExecutionLog:
    log = ExecutionLog(store, run)
    log.append(EventType.RUN_STARTED)
    log.commit_plan(_plan(3))
    log.append(EventType.NODE_SUCCEEDED, payload={"i": 0})
    log.commit_plan(_plan(5), parent_version=1)
    log.append(EventType.RUN_SUCCEEDED)
    return log


@pytest.mark.parametrize("version", [1, 2])
def test_a_deleted_plan_object_is_named(damaged: tuple[Store, Delete], version: int) -> None:
    store, delete = damaged
    log = _run(store)
    assert verify_log(store, "v").ok
    committed = log.plan_event(version)
    key = str(committed.payload["key"])
    delete(key)
    assert not store.exists(key=key)
    report = verify_log(store, "v")
    assert not report.ok
    missing = [p for p in report.problems if p.code == "plan_missing"]
    assert [(p.seq, p.key) for p in missing] == [(committed.seq, key)]
    assert f"plan v{version}" in missing[0].message and "missing" in missing[0].message
    assert report.versions == 2  # the commit event still counts: the object, not the record, is gone


def test_the_cli_names_a_deleted_plan_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FsStore(tmp_path / "s")
    log = _run(store)
    key = str(log.plan_event(2).payload["key"])
    store.root.joinpath(*key.split("/")).unlink()
    args = ["log", "verify", "v", "--store", "fs", "--root", str(tmp_path / "s")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "BROKEN" in out and key in out and "missing" in out
    assert main([*args, "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is False and doc["first_bad"] == doc["problems"][0]
    assert (doc["first_bad"]["code"], doc["first_bad"]["seq"], doc["first_bad"]["key"]) == ("plan_missing", 3, key)


def _forge(store: Store, log: ExecutionLog, genesis: str) -> None:
    """Re-seal every event of the run on a chain that starts from ``genesis``: each record hashes right and
    links to the one before, so only the first link can tell."""
    prev = genesis
    for event in log.events():
        fields = event.model_dump(mode="json", exclude={"hash"})
        forged = seal_event(**{**fields, "prev_hash": prev})
        store.put(key=event_key(log.run_id, event.seq), data=forged.to_bytes())
        prev = forged.hash


def test_a_chain_forged_from_another_genesis_is_broken_at_event_0(damaged: tuple[Store, Delete]) -> None:
    store, _ = damaged
    log = _run(store)
    _forge(store, log, genesis="sha256:" + "f" * 64)
    report = verify_log(store, "v")
    assert not report.ok
    chain = [(p.code, p.seq) for p in report.problems if p.code in ("broken_chain", "bad_hash")]
    assert chain == [("broken_chain", 0)]
    assert report.first_bad is not None and report.first_bad.seq == 0


def test_a_chain_resealed_from_the_genesis_value_verifies(damaged: tuple[Store, Delete]) -> None:
    """The control for the test above: the forging itself is faithful, so the genesis value is what differs."""
    store, _ = damaged
    log = _run(store)
    _forge(store, log, genesis=GENESIS_HASH)
    assert verify_log(store, "v").ok


def _append_raw(store: Store, log: ExecutionLog, type: EventType, payload: dict[str, object]) -> int:
    """Seal and store one more event on the chain by hand (a writer that bypasses ExecutionLog's checks)."""
    last = log.events()[-1]
    event = seal_event(seq=last.seq + 1, timestamp=last.timestamp, run_id=log.run_id, type=type,
                       payload=payload, prev_hash=last.hash)
    assert store.put_if_absent(key=event_key(log.run_id, event.seq), data=event.to_bytes())
    return event.seq


def _codes(store: Store) -> list[tuple[str, int | None]]:
    return [(p.code, p.seq) for p in verify_log(store, "v").problems]


def test_an_unreadable_event_is_named_and_the_rest_is_still_checked(damaged: tuple[Store, Delete]) -> None:
    store, delete = damaged
    log = _run(store)
    store.put(key=event_key("v", 2), data=b"{not an event")
    delete(str(log.plan_event(2).payload["key"]))  # damage after the unreadable record is still found
    report = verify_log(store, "v")
    assert [(p.code, p.seq, p.key) for p in report.problems] == [
        ("unreadable", 2, event_key("v", 2)), ("plan_missing", 3, str(log.plan_event(2).payload["key"]))]
    assert report.events == 5


def test_a_record_stored_under_another_sequence_number_is_named(damaged: tuple[Store, Delete]) -> None:
    store, _ = damaged
    _run(store)
    store.put(key=event_key("v", 3), data=store.get(key=event_key("v", 2)))
    mismatch = [p for p in verify_log(store, "v").problems if p.code == "seq_mismatch"]
    assert [(p.seq, p.key) for p in mismatch] == [(3, event_key("v", 3))]
    assert "seq 2" in mismatch[0].message


def test_a_version_committed_again_with_other_content_is_named(damaged: tuple[Store, Delete]) -> None:
    store, _ = damaged
    log = _run(store)
    second = log.plan_event(2).payload  # a real plan object and its hash, relabelled as version 1
    seq = _append_raw(store, log, EventType.PLAN_COMMITTED, {**second, "version": 1})
    report = verify_log(store, "v")
    assert [(p.code, p.seq, p.key) for p in report.problems] == [("duplicate_version", seq, event_key("v", seq))]
    assert "plan v1" in report.problems[0].message


@pytest.mark.parametrize("payload", [{}, {"version": "two", "key": "runs/v/plans/v0002.json"},
                                     {"version": 2, "key": "../../etc/passwd"}])
def test_a_commit_event_naming_no_plan_is_reported_not_a_crash(damaged: tuple[Store, Delete],
                                                               payload: dict[str, object]) -> None:
    store, _ = damaged
    log = _run(store)
    seq = _append_raw(store, log, EventType.PLAN_COMMITTED, payload)
    after = _append_raw(store, log, EventType.RUN_SUCCEEDED, {})
    store.put(key=event_key("v", after), data=store.get(key=event_key("v", after)).replace(b"{}", b'{"x":1}'))
    assert _codes(store) == [("bad_plan_ref", seq), ("bad_hash", after)]  # and the events after it are checked


def test_the_same_commit_recorded_twice_is_no_problem(damaged: tuple[Store, Delete]) -> None:
    """A duplicate_version is a version committed with *other* content; the same content again is not."""
    store, _ = damaged
    log = _run(store)
    _append_raw(store, log, EventType.PLAN_COMMITTED, dict(log.plan_event(2).payload))
    report = verify_log(store, "v")
    assert report.ok and report.versions == 2


def test_plan_objects_left_by_removed_commits_are_warnings(damaged: tuple[Store, Delete]) -> None:
    store, delete = damaged
    log = _run(store)
    assert verify_log(store, "v").warnings == []
    orphan = str(log.plan_event(2).payload["key"])
    for seq in (4, 3):  # the tail of the run, the second commit with it: the chain that remains is consistent
        delete(event_key("v", seq))
    report = verify_log(store, "v")
    assert report.events == 3 and report.versions == 1
    assert ("truncated", 4) in [(p.code, p.seq) for p in report.problems]  # the head still counts 5 events
    assert [w for w in report.warnings if orphan in w] and all("not referenced" not in w or orphan in w
                                                              for w in report.warnings)


def test_a_gap_names_the_missing_range(damaged: tuple[Store, Delete]) -> None:
    store, delete = damaged
    _run(store)
    delete(event_key("v", 1))
    delete(event_key("v", 2))
    report = verify_log(store, "v")
    assert [(p.code, p.seq) for p in report.problems] == [("gap", 1)]
    assert report.problems[0].message == "events 1..2 are missing"


def _gone_when_read(monkeypatch: pytest.MonkeyPatch, store: Store, delete: Delete, gone: str) -> None:
    """Delete ``gone`` just before the store first reads it: the listing that named it is stale by then."""
    get = store.get

    def get_after_delete(*, key: str) -> bytes:
        if key == gone and store.exists(key=key):
            delete(key)
        return get(key=key)

    monkeypatch.setattr(store, "get", get_after_delete)


@pytest.mark.parametrize(("seq", "problem"), [(2, ("gap", 2)), (4, ("truncated", 4))])
def test_an_event_listed_then_gone_before_it_is_read_is_judged_missing(
        damaged: tuple[Store, Delete], monkeypatch: pytest.MonkeyPatch, seq: int, problem: tuple[str, int]) -> None:
    # Found by the S3 damage sweep (an S3 listing may still show an object deleted a moment ago): `alas log
    # verify` stopped with "no such record" (exit 2) instead of reporting the run broken where it is.
    store, delete = damaged
    _run(store)
    _gone_when_read(monkeypatch, store, delete, event_key("v", seq))
    report = verify_log(store, "v")
    assert [(p.code, p.seq) for p in report.problems] == [problem]
    assert report.events == 4


def test_an_idempotency_record_listed_then_gone_is_judged_missing_not_unreadable(
        damaged: tuple[Store, Delete], monkeypatch: pytest.MonkeyPatch) -> None:
    store, delete = damaged
    log = _run(store)
    log.idempotency_put("loose", {"answer": 1})  # a record no event names: its loss leaves the run intact
    _gone_when_read(monkeypatch, store, delete, idempotency_key("v", "loose"))
    report = verify_log(store, "v")
    assert (report.ok, report.problems, report.records) == (True, [], 0)  # was record_unreadable: no such record


def test_problems_come_in_sequence_order_keyless_ones_first(damaged: tuple[Store, Delete]) -> None:
    store, _ = damaged
    _run(store)
    store.put(key="runs/v/events/notes.json", data=b"{}")
    first = verify_log(store, "v")
    assert [p.code for p in first.problems] == ["stray_key"]
    assert "runs/v/events/notes.json" in first.summary() and "event None" not in first.summary()
    store.put(key=event_key("v", 4), data=store.get(key=event_key("v", 4)).replace(b"run.succeeded", b"run.failed"))
    store.put(key=event_key("v", 0), data=store.get(key=event_key("v", 0)).replace(b"run.started", b"run.failed"))
    codes = _codes(store)
    assert ("stray_key", None) in codes and [c for c in codes if c[0] == "bad_hash"] == [("bad_hash", 0),
                                                                                       ("bad_hash", 4)]
    seqs = [s for _, s in codes if s is not None]
    assert seqs == sorted(seqs)  # in sequence order
