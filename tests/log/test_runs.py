"""`list_runs` (alas_argo.log.runs): each run's status as `alas log ls` shows it, broken runs included."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.log import EventType, ExecutionLog, FsStore, Store, backend, list_runs
from alas_argo.log.layout import event_key
from alas_argo.log.s3_store import S3Store
from tests.s3server import LoopbackS3


def _store(tmp_path: Path) -> FsStore:
    store = FsStore(tmp_path / "s")
    done = ExecutionLog(store, "done")
    for kind in (EventType.RUN_STARTED, EventType.NODE_STARTED, EventType.NODE_SUCCEEDED, EventType.RUN_SUCCEEDED):
        done.append(kind)
    ExecutionLog(store, "going").append(EventType.RUN_STARTED)
    return store


def _status(store: FsStore) -> dict[str, tuple[str, int]]:
    return {r.run_id: (r.status, r.events) for r in list_runs(store)}


def test_statuses_of_whole_runs(tmp_path: Path) -> None:
    store = _store(tmp_path)
    (tmp_path / "s" / "runs" / "blank" / "events").mkdir(parents=True)
    assert _status(store) == {"blank": ("empty", 0), "done": ("succeeded", 4), "going": ("running", 1)}


def test_a_name_no_run_can_have_is_not_listed(tmp_path: Path) -> None:
    """`_x` is a store key segment but no run id: every other command refuses it (`alas log show _x`: invalid run
    id), so listing it offered a run nothing could open."""
    store = _store(tmp_path)
    (tmp_path / "s" / "runs" / "_x" / "events").mkdir(parents=True)
    store.put(key="runs/_x/events/00000000.json", data=b"{}")
    assert sorted(_status(store)) == ["done", "going"]


def test_a_run_with_a_hole_below_its_last_event_is_broken_not_succeeded(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.root.joinpath(*event_key("done", 1).split("/")).unlink()
    assert _status(store)["done"] == ("broken", 3)


def test_a_run_whose_last_event_is_unreadable_is_broken_not_empty(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(key=event_key("done", 3), data=b"{not json")
    assert _status(store)["done"] == ("broken", 4)
    assert _status(store)["going"] == ("running", 1)


def _runs(store: Store) -> dict[str, tuple[str, int]]:
    ExecutionLog(store, "done").append(EventType.RUN_SUCCEEDED)
    ExecutionLog(store, "next").append(EventType.RUN_STARTED)
    return {r.run_id: (r.status, r.events) for r in list_runs(store)}


# Found by the S3 damage sweep (h-s3dmg): `alas log ls` stopped at the first run whose last event the store would
# not hand out (exit 2, naming that record), and listed no run at all.
def test_a_last_event_past_the_store_limit_is_a_broken_run_not_a_failed_listing(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    log = ExecutionLog(store, "big")
    log.append(EventType.RUN_STARTED)
    event = log.append(EventType.RUN_SUCCEEDED, payload={"pad": "x" * 4096})
    monkeypatch.setattr(backend, "MAX_RECORD_BYTES", len(event.to_bytes()) - 1)
    assert _runs(store) == {"big": ("broken", 2), "done": ("succeeded", 1), "next": ("running", 1)}


def test_a_last_event_listed_then_gone_is_a_broken_run_not_a_failed_listing(
        s3_server: LoopbackS3, s3_store: S3Store, monkeypatch: pytest.MonkeyPatch) -> None:
    log = ExecutionLog(s3_store, "gone")
    log.append(EventType.RUN_STARTED)
    log.append(EventType.RUN_SUCCEEDED)
    listed = s3_store.list

    def stale_list(*, prefix: str, start_after: str | None = None) -> list[str]:
        keys = listed(prefix=prefix, start_after=start_after)
        if prefix == "runs/gone/events/":  # deleted behind the listing's back, as a lagging S3 listing shows it
            s3_server.client().delete_object(Bucket=s3_store.bucket, Key=event_key("gone", 1))
        return keys

    monkeypatch.setattr(s3_store, "list", stale_list)
    assert _runs(s3_store) == {"done": ("succeeded", 1), "gone": ("broken", 2), "next": ("running", 1)}
