"""The head: opening a run costs the same number of store requests however long its log is, the head is
the fold of the chain, a trailing head is read past, and a head that names a missing event stops writers.
Requests are counted as the store sees them: HTTP requests on the wire for S3, operations for the filesystem.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.benchmarks.open_cost import KINDS, build_run, measure_open
from alas_argo.errors import InputError, IntegrityError, StoreError, StoreUnavailable
from alas_argo.log.event import Event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.head import LogHead
from alas_argo.log.layout import event_key, head_key
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store, open_store
from alas_argo.settings import load_settings
from tests.log.test_verification import _delete

PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}


def _fresh(store: Store) -> Store:
    """Another client on the same store, as a new pod has (nothing cached, its own request counter)."""
    if isinstance(store, S3Store):
        return S3Store(bucket=store.bucket, endpoint=store.endpoint, prefix=store.prefix,
                       access_key="testing", secret_key="testing", backoff=0.01, max_retries=2)
    assert isinstance(store, FsStore)
    return FsStore(store.root)


# 9.6 s measured (s3) in the whole suite at load 5; past the default 30 s at load 11 (the cluster e2e beside it).
@pytest.mark.timeout(120)
def test_requests_to_open_a_run_do_not_grow_with_its_log(store: Store) -> None:
    counts = {}
    for size in (10, 300):
        key = build_run(store, f"open-{size}", size)
        assert len(ExecutionLog(store, f"open-{size}").events()) >= size
        counts[size] = measure_open(lambda: _fresh(store), f"open-{size}", key)
    # The same requests for a run 30 times longer: the head, the event it names, one miss past it, and then
    # exactly what the access itself reads and writes.
    assert counts[10] == counts[300], counts
    assert set(counts[10]) == set(KINDS)
    assert counts[10]["open"] <= 7 and counts[10]["job_agent"] <= 15 and counts[10]["controller"] <= 30, counts


def test_the_head_is_the_fold_of_the_chain(store: Store) -> None:
    log = ExecutionLog(store, "h")
    log.append(EventType.RUN_STARTED, payload={"instance": {"name": "t"}})
    log.commit_plan(PLAN, idempotency_key="k1")
    log.append(EventType.DISRUPTION_OBSERVED, payload={"disruption": {"time": 1, "events": []}})
    log.commit_plan({**PLAN, "makespan": 4})
    log.retract(2)
    stored = LogHead.from_bytes(store.get(key=head_key("h")), where="head")
    assert stored.state() == LogHead.fold("h", log.events()).state()
    assert (stored.events, stored.current, stored.commit_keys, list(stored.retracted)) == (5, 1, {"k1": 1}, [2])
    assert (ref := stored.ref(2)) is not None and ref.observed == 2  # the disruption it was made under
    assert stored.first[EventType.RUN_STARTED.value] == 0 and stored.last[EventType.PLAN_COMMITTED.value] == 3


def test_a_trailing_head_is_read_past(store: Store) -> None:
    log = ExecutionLog(store, "t")
    log.commit_plan(PLAN)
    old_head = store.get(key=head_key("t"))
    log.commit_plan({**PLAN, "makespan": 5})
    log.append(EventType.NODE_SUCCEEDED)
    store.put(key=head_key("t"), data=old_head)  # a slower writer's head landed last
    reader = ExecutionLog(_fresh(store), "t")
    assert reader.current_version() == 2 and reader.versions() == [1, 2]
    reader.append(EventType.NODE_SUCCEEDED)  # appends after the real end, and moves the head there
    assert LogHead.from_bytes(store.get(key=head_key("t")), where="head").events == 4
    report = ExecutionLog(store, "t").verify()
    assert report.ok and report.anchored == 4, report


def test_a_run_without_a_head_opens_verifies_with_a_warning_and_gets_one(store: Store) -> None:
    log = ExecutionLog(store, "old")
    log.commit_plan(PLAN)
    log.append(EventType.NODE_SUCCEEDED)
    _delete(store, head_key("old"))  # as written before heads existed
    report = ExecutionLog(store, "old").verify()
    assert report.ok and report.anchored is None
    assert any("no head object" in w for w in report.warnings)
    reader = ExecutionLog(_fresh(store), "old")
    assert reader.exists() and (current := reader.current_plan()) is not None and current[0] == 1
    reader.append(EventType.NODE_SUCCEEDED)
    assert ExecutionLog(store, "old").verify().anchored == 3


def test_a_head_naming_a_missing_event_stops_writers(store: Store) -> None:
    log = ExecutionLog(store, "cut")
    log.commit_plan(PLAN)
    for _ in range(3):
        log.append(EventType.NODE_SUCCEEDED)
    _delete(store, event_key("cut", 3))  # the tail is removed behind the log's back
    writer = ExecutionLog(_fresh(store), "cut")
    with pytest.raises(IntegrityError, match="names event 3, which is missing"):
        writer.append(EventType.NODE_SUCCEEDED)
    assert not _fresh(store).exists(key=event_key("cut", 3))  # nothing written on top of the hole


def test_events_without_a_key_are_stored_as_before() -> None:
    """The optional seal changes no byte of an unsealed event: old readers and old hashes still agree."""
    event = Event.model_validate({"seq": 0, "timestamp": "2024-01-01T00:00:00.000000Z", "run_id": "r",
                                  "type": "run.started", "prev_hash": "x", "hash": "y"})
    assert b"mac" not in event.to_bytes() and "mac" not in event.body()


def test_reading_every_event_first_does_not_launder_a_truncation(store: Store) -> None:
    log = ExecutionLog(store, "launder")
    log.commit_plan(PLAN)
    log.append(EventType.NODE_SUCCEEDED)
    _delete(store, event_key("launder", 1))
    reader = ExecutionLog(_fresh(store), "launder")
    with pytest.raises(IntegrityError, match="names event 1"):
        reader.events()  # what `alas log show` and the compensate step do before anything else
    assert [p.code for p in ExecutionLog(store, "launder").verify().problems] == ["truncated"]


def test_the_seal_key_comes_from_the_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAS_STORE__LOG_KEY", "k" * 16)
    store = open_store(load_settings(store={"kind": "fs", "root": str(tmp_path)}))
    assert store.seal_key == b"k" * 16
    log = ExecutionLog(store, "keyed")
    event = log.append(EventType.RUN_STARTED)
    assert event.mac is not None and event.seal_ok(b"k" * 16)
    assert log.verify().keyed and log.verify().ok
    monkeypatch.setenv("ALAS_STORE__LOG_KEY", "short")
    with pytest.raises(InputError, match=r"store\.log_key: .*at least 16"):
        load_settings()


def _commit(seq: int, payload: dict[str, object]) -> Event:
    from alas_argo.log.event import GENESIS_HASH, seal_event

    return seal_event(seq=seq, timestamp="2026-01-01T00:00:00.000000Z", run_id="r", prev_hash=GENESIS_HASH,
                      type=EventType.PLAN_COMMITTED, payload=payload, node_id=None, attempt=None,
                      correlation_id="r", redact=[])


def test_hand_written_commit_events_without_a_usable_number_fold_as_no_version() -> None:
    # No number, a string, a boolean: none is a version (verify reports them); folding them does not crash.
    payloads: list[dict[str, object]] = [{}, {"version": "2"}, {"version": True}]
    bad = [_commit(i, p) for i, p in enumerate(payloads)]
    head = LogHead.fold("r", bad)
    assert head.events == 3 and head.versions == [] and head.current is None


def test_a_duplicate_commit_number_folds_once_at_its_first_event() -> None:
    events = [_commit(0, {"version": 1, "key": "a", "plan_hash": "h1"}),
              _commit(1, {"version": 1, "key": "b", "plan_hash": "h2"})]
    head = LogHead.fold("r", events)
    assert [(r.version, r.seq, r.key) for r in head.versions] == [(1, 0, "a")] and head.current == 1


def test_bytes_that_are_not_a_head_are_an_integrity_error_naming_where() -> None:
    for data in (b"not json", b'{"run_id": 3}'):
        with pytest.raises(IntegrityError, match="unreadable head: ") as err:
            LogHead.from_bytes(data, where="runs/r/head.json")
        assert err.value.where == "runs/r/head.json"


def test_only_a_retraction_event_retracts() -> None:
    from alas_argo.log.event import GENESIS_HASH, seal_event

    other = seal_event(seq=2, timestamp="2026-01-01T00:00:00.000000Z", run_id="r", prev_hash=GENESIS_HASH,
                       type=EventType.RUN_STARTED, payload={"version": 2}, node_id=None, attempt=None,
                       correlation_id="r", redact=[])
    head = LogHead.fold("r", [_commit(0, {"version": 1}), _commit(1, {"version": 2}), other])
    assert head.current == 2 and head.retracted == {}


class _HeadRefused(FsStore):
    """A filesystem store whose head writes fail with ``error`` (every other write goes through)."""

    def __init__(self, root: Path, error: Exception) -> None:
        super().__init__(root)
        self.error = error

    def put(self, *, key: str, data: bytes) -> None:
        if key.endswith("/head.json"):
            raise self.error
        super().put(key=key, data=data)


@pytest.mark.parametrize("error", [StoreError("refused"), StoreUnavailable("the disk is full")],
                         ids=["refused", "unavailable"])
def test_an_append_whose_head_cannot_be_written_has_still_appended(tmp_path: Path, error: Exception,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Guards against appending twice: the event is in, and raising would have the caller try the append again.
    A store that is away or full for now (StoreUnavailable: an S3 outage, a full disk) raised out of the append."""
    log = ExecutionLog(_HeadRefused(tmp_path, error), "r")
    first = log.append(EventType.RUN_STARTED)
    second = log.append(EventType.RUN_SUCCEEDED)
    assert [e.seq for e in ExecutionLog(FsStore(tmp_path), "r").events()] == [first.seq, second.seq] == [0, 1]
    assert sum("head of run r not updated" in r.getMessage() for r in caplog.records) == 2
    assert not (tmp_path / head_key("r")).exists()  # readers fold from the first event instead
