"""`list_runs` (alas_argo.log.runs): each run's status as `alas log ls` shows it, broken runs included."""

from __future__ import annotations

from pathlib import Path

from alas_argo.log import EventType, ExecutionLog, FsStore, list_runs
from alas_argo.log.layout import event_key


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


def test_a_run_with_a_hole_below_its_last_event_is_broken_not_succeeded(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.root.joinpath(*event_key("done", 1).split("/")).unlink()
    assert _status(store)["done"] == ("broken", 3)


def test_a_run_whose_last_event_is_unreadable_is_broken_not_empty(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.put(key=event_key("done", 3), data=b"{not json")
    assert _status(store)["done"] == ("broken", 4)
    assert _status(store)["going"] == ("running", 1)
