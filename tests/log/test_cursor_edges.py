"""Edges of a reader's position (alas_argo.log.cursor) that the mutation run of the sixteenth session found
unchecked: a fresh reader asked for event 0 of a run whose head it opened (its list of events read in full is
still empty), and an event another writer appends between the reader's read forward and its full read."""

from __future__ import annotations

from pathlib import Path

from alas_argo.log.cursor import ChainCursor
from alas_argo.log.event import Event, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.layout import event_key
from alas_argo.log.store import RecordNotFound


class _LateStore(FsStore):
    """A filesystem store that answers "no such record" for ``late`` the first time it is asked: the record
    another writer creates just after this reader looked."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.late: str | None = None

    def get(self, *, key: str) -> bytes:
        if key == self.late:
            self.late = None
            raise RecordNotFound("no such record", where=self.where(key))
        return super().get(key=key)


def _build(store: FsStore) -> None:
    log = ExecutionLog(store, "c")
    log.append(EventType.RUN_STARTED)  # 0
    log.append(EventType.RUN_SUCCEEDED)  # 1; the head now counts 2 events


def test_a_fresh_reader_finds_the_first_event_of_a_run_it_opened_at_its_head(fs_store: FsStore) -> None:
    # The reader opens the head (2 events) and reads none of them: its full-read list is empty, so event 0
    # must come from the store, not from that list (an index at the list's end is past it).
    _build(fs_store)
    reader = ExecutionLog(fs_store, "c")
    first = reader.first(EventType.RUN_STARTED)
    assert first is not None and (first.seq, first.type) == (0, EventType.RUN_STARTED)


def test_an_event_appended_between_the_read_forward_and_the_full_read_is_folded_in(tmp_path: Path) -> None:
    # Another process appends event 2 after this reader's read forward stopped at it (the store said no such
    # record) and before its full read reached it: the full read hands it out, so the state must count it too.
    store = _LateStore(tmp_path / "store")
    _build(store)
    last = Event.from_bytes(store.get(key=event_key("c", 1)), where="test")
    late = seal_event(**{**last.body(), "seq": 2, "prev_hash": last.hash, "type": EventType.NODE_STARTED,
                         "payload": {"node": "n"}})
    store.put(key=event_key("c", 2), data=late.to_bytes())
    store.late = event_key("c", 2)
    cursor = ChainCursor(store, "c", None)
    events = cursor.events()
    assert [e.seq for e in events] == [0, 1, 2]
    state = cursor.known()
    assert (state.events, state.hash) == (3, late.hash)
    assert state.last[EventType.NODE_STARTED.value] == 2
    assert store.late is None  # the read forward was the one told "no such record"
