"""A reader's position in a run's chain (alas_argo.log.cursor): what it refuses to open on and why, an event
the state names but the store lost, and the events it has read, which it keeps.

The log's other tests read through readers that wrote the events themselves (so everything is cached) or
check only that opening fails; here fresh readers read from the store, and each refusal names the record.
"""

from __future__ import annotations

import pytest

from alas_argo.errors import IntegrityError
from alas_argo.log.cursor import ChainCursor
from alas_argo.log.event import Event, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.head import LogHead
from alas_argo.log.layout import event_key, head_key

KEY = b"a-test-key-of-32-bytes-0123456789"
PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}


def _build(store: FsStore, run: str = "c") -> None:
    log = ExecutionLog(store, run)
    log.append(EventType.RUN_STARTED)  # 0
    log.commit_plan(PLAN)  # 1
    log.append(EventType.RUN_SUCCEEDED)  # 2


def _lose(store: FsStore, key: str) -> None:
    store.root.joinpath(*key.split("/")).unlink()


def test_a_fresh_reader_reads_a_committed_event_from_the_store_and_keeps_it(fs_store: FsStore) -> None:
    _build(fs_store)
    reader = ExecutionLog(fs_store, "c")
    event = reader.plan_event(1)
    assert (event.seq, event.type) == (1, EventType.PLAN_COMMITTED)
    _lose(fs_store, event_key("c", 1))
    assert reader.plan_event(1) == event  # events never change once written: read once, kept


def test_an_event_the_state_names_but_the_store_lost_is_an_integrity_error(fs_store: FsStore) -> None:
    _build(fs_store)
    _lose(fs_store, event_key("c", 1))
    with pytest.raises(IntegrityError) as caught:
        ExecutionLog(fs_store, "c").plan_event(1)
    assert caught.value.message == "event 1 is missing"
    assert caught.value.where == fs_store.where(event_key('c', 1))


def test_an_unreadable_event_names_its_record(fs_store: FsStore) -> None:
    _build(fs_store)
    fs_store.put(key=event_key("c", 1), data=b"not json")
    with pytest.raises(IntegrityError) as caught:
        ChainCursor(fs_store, "c", None).read(1)
    assert caught.value.where == fs_store.where(event_key('c', 1))


def test_a_head_of_another_run_is_refused(fs_store: FsStore) -> None:
    _build(fs_store)
    _build(fs_store, "other")
    fs_store.put(key=head_key("c"), data=fs_store.get(key=head_key("other")))
    with pytest.raises(IntegrityError) as caught:
        ChainCursor(fs_store, "c", None).state()
    assert caught.value.message == "the head belongs to run 'other'"
    assert caught.value.where == fs_store.where(head_key('c'))


def test_an_unreadable_head_names_its_record(fs_store: FsStore) -> None:
    _build(fs_store)
    fs_store.put(key=head_key("c"), data=b"not json")
    with pytest.raises(IntegrityError) as caught:
        ChainCursor(fs_store, "c", None).state()
    assert caught.value.where == fs_store.where(head_key('c'))


@pytest.mark.parametrize("seal", ["none", "another key"])
def test_a_keyed_reader_refuses_a_head_whose_seal_does_not_verify_and_says_which_way(fs_store: FsStore,
                                                                                     seal: str) -> None:
    fs_store.seal_key = KEY
    _build(fs_store)
    head = LogHead.from_bytes(fs_store.get(key=head_key("c")), where="head")
    fs_store.put(key=head_key("c"), data=head.to_bytes(None if seal == "none" else b"another-key-of-32-bytes-98765432"))
    with pytest.raises(IntegrityError) as caught:
        ChainCursor(fs_store, "c", KEY).state()
    why = "has no seal (written without the key, or rewritten)" if seal == "none" else \
        "has a seal that does not verify under the configured key (rewritten, or another key)"
    assert caught.value.message == f"the head {why}; run `alas log verify`"
    assert caught.value.where == fs_store.where(head_key('c'))


@pytest.mark.parametrize("damage", ["is missing", "has another hash"])
def test_a_head_naming_a_lost_or_replaced_last_event_is_refused(fs_store: FsStore, damage: str) -> None:
    _build(fs_store)
    if damage == "is missing":
        _lose(fs_store, event_key("c", 2))
    else:  # another well-formed event 2 in its place, linked to event 1 as the real one is
        real = Event.from_bytes(fs_store.get(key=event_key("c", 2)), where="test")
        other = seal_event(**{**real.body(), "type": EventType.RUN_FAILED.value})
        fs_store.put(key=event_key("c", 2), data=other.to_bytes())
    with pytest.raises(IntegrityError) as caught:
        ChainCursor(fs_store, "c", None).state()
    assert caught.value.message == (f"the head names event 2, which {damage}: the chain was truncated or rewritten; "
                                    "run `alas log verify`")
    assert caught.value.where == fs_store.where(head_key('c'))


def test_a_hole_below_the_head_is_refused_not_read_as_a_shorter_run(fs_store: FsStore) -> None:
    # Before: events() stopped at the hole and handed out events 0..0, so `alas replay` reported parity over
    # the prefix (exit 0) and a resume judged the run by it.
    _build(fs_store)
    _lose(fs_store, event_key("c", 1))
    log = ExecutionLog(fs_store, "c")
    assert log.head().events == 3  # the head and the event it names are intact: opening succeeds
    with pytest.raises(IntegrityError) as caught:
        log.events()
    assert caught.value.message == ("event 1 is missing, but the head counts 3 events: the chain has a hole; "
                                    "run `alas log verify`")
    assert caught.value.where == fs_store.where(event_key('c', 1))


def _damaged(store: FsStore, damage: str) -> str:
    """Damage event 1 of a built run as ``damage`` says; the message a reader must refuse it with."""
    key = event_key("c", 1)
    real = Event.from_bytes(store.get(key=key), where="test")
    if damage == "copied":  # another record of the run over it
        store.put(key=key, data=store.get(key=event_key("c", 0)))
        return "the record of event 1 holds event 0 (copied or moved)"
    if damage == "edited":  # its payload changed, its hash left as it was
        store.put(key=key, data=real.model_copy(update={"payload": {**real.payload, "version": 7}}).to_bytes())
        return "event 1's content does not match its hash (edited)"
    if damage == "another run's":
        store.put(key=key, data=seal_event(**{**real.body(), "run_id": "other"}).to_bytes())
        return "event 1 belongs to run 'other'"
    # re-hashed after the edit, so the record is whole but no longer the one event 2 follows
    store.put(key=key, data=seal_event(**{**real.body(), "payload": {**real.payload, "version": 7}}).to_bytes())
    return "event 2 does not follow event 1 (its prev_hash names another event): the chain is broken"


@pytest.mark.parametrize("damage", ["copied", "edited", "another run's", "re-hashed"])
def test_a_reader_refuses_an_event_that_is_not_the_one_the_chain_holds(fs_store: FsStore, damage: str) -> None:
    """Guards resumes and `log show`: a swapped, copied or edited event was read as if it belonged (a finished
    run's result came back from such a log, exit 0, while `log verify` said it was broken)."""
    _build(fs_store)
    said = _damaged(fs_store, damage)
    with pytest.raises(IntegrityError) as caught:
        ExecutionLog(fs_store, "c").events()
    assert caught.value.message == f"{said}; run `alas log verify`"
    seq = 2 if damage == "re-hashed" else 1
    assert caught.value.where == fs_store.where(event_key('c', seq))


def test_a_reader_reading_on_from_the_head_refuses_a_broken_link(fs_store: FsStore) -> None:
    # An event appended after the head with a prev_hash that is not the head's: folded, it would become the
    # next head, and the chain would read as whole from then on.
    _build(fs_store)
    last = Event.from_bytes(fs_store.get(key=event_key("c", 2)), where="test")
    stray = seal_event(**{**last.body(), "seq": 3, "prev_hash": last.prev_hash})
    fs_store.put(key=event_key("c", 3), data=stray.to_bytes())
    with pytest.raises(IntegrityError) as caught:
        ChainCursor(fs_store, "c", None).state()
    assert caught.value.message.startswith("event 3 does not follow event 2")
    assert caught.value.where == fs_store.where(event_key('c', 3))
