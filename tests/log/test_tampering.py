"""What `verify` detects, tampering by tampering, without and with the seal key, on both backends.

Each tampering is what someone with write access to the store (but not the key) can do. The expected
problem codes are exact: this table is the one README "The execution log" prints, so a change in what is
detected shows up here first. ``()`` means the tampering goes unnoticed (verify says intact).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from alas_argo.errors import IntegrityError
from alas_argo.log.event import Event, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, event_key, plan_key
from alas_argo.log.head import LogHead
from alas_argo.log.idempotency import record_hash
from alas_argo.log.layout import head_key, idempotency_key
from alas_argo.log.plans import encode_plan
from alas_argo.log.store import Store
from alas_argo.log.verification import verify_log
from alas_argo.steps import StepInput, StepOutput, output_key, run_step
from tests.log.test_verification import _delete

KEY = b"a-test-key-of-32-bytes-0123456789"
RUN = "tamper"
PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}
LAST = 7  # sequence number of the last event of the run _build writes
STEP_RECORD = output_key("wf", "n")  # the record event 3 names
LOOSE_RECORD = "controller-answer"  # a record no event names


def _build(store: Store, run: str = RUN) -> None:
    log = ExecutionLog(store, run)
    log.append(EventType.RUN_STARTED, payload={"instance": {"name": "t"}})  # 0
    log.commit_plan(PLAN, idempotency_key="base")  # 1
    run_step(StepInput(kind="noop", node="n", run_id=run, scope="wf"), store,  # 2, 3 (names its record)
             {"noop": lambda ctx: StepOutput({"x": 1})})
    log = ExecutionLog(store, run)
    log.idempotency_put(LOOSE_RECORD, {"answer": 1})
    log.append(EventType.DISRUPTION_OBSERVED, payload={"disruption": {"time": 1, "events": []}})  # 4
    log.commit_plan({**PLAN, "makespan": 4})  # 5
    log.append(EventType.NODE_SUCCEEDED, payload={"i": 1})  # 6
    log.append(EventType.NODE_SUCCEEDED, payload={"i": 2})  # 7


# -- a forger's tools (no key: whatever seal a record had is kept, which no longer matches) -----------------

def _doc(store: Store, seq: int, run: str = RUN) -> dict[str, Any]:
    return Event.model_validate_json(store.get(key=event_key(run, seq))).model_dump(mode="json")


def _rehash(doc: dict[str, Any]) -> Event:
    mac = doc.pop("mac", None)
    doc.pop("hash")
    return seal_event(**doc).model_copy(update={"mac": mac})


def _edit(store: Store, seq: int, *, rehash: bool) -> None:
    doc = _doc(store, seq)
    doc["payload"] = {**doc["payload"], "forged": True}
    event = _rehash(doc) if rehash else Event.model_validate(doc)
    store.put(key=event_key(RUN, seq), data=event.to_bytes())


def _reseal_from(store: Store, seq: int) -> None:
    """Edit event ``seq`` and re-hash it and every later event so that the chain links again."""
    _edit(store, seq, rehash=True)
    prev = _doc(store, seq)["hash"]
    for s in range(seq + 1, LAST + 1):
        doc = _doc(store, s)
        doc["prev_hash"] = prev
        event = _rehash(doc)
        store.put(key=event_key(RUN, s), data=event.to_bytes())
        prev = event.hash


def _forge_head(store: Store) -> None:
    """Write the head the tampered chain implies (a forger can fold, but cannot seal)."""
    events: list[Event] = []
    while store.exists(key=event_key(RUN, len(events))):
        events.append(Event.model_validate_json(store.get(key=event_key(RUN, len(events)))))
    store.put(key=head_key(RUN), data=LogHead.fold(RUN, events).to_bytes(None))


def _edit_record(store: Store, name: str, *, rehash: bool) -> None:
    import json

    key = idempotency_key(RUN, name)
    record = json.loads(store.get(key=key))
    record["result"] = {**record["result"], "forged": True}
    if rehash:
        record["hash"] = record_hash(record)
    store.put(key=key, data=json.dumps(record).encode())


def _swap(store: Store, a: int, b: int) -> None:
    da, db = store.get(key=event_key(RUN, a)), store.get(key=event_key(RUN, b))
    store.put(key=event_key(RUN, a), data=db)
    store.put(key=event_key(RUN, b), data=da)


def _append_forged(store: Store) -> None:
    last = _doc(store, LAST)
    event = seal_event(seq=LAST + 1, timestamp=last["timestamp"], run_id=RUN, type="node.succeeded",
                       payload={"forged": True}, prev_hash=last["hash"])
    store.put(key=event_key(RUN, LAST + 1), data=event.to_bytes())


def _edit_head_current(store: Store) -> None:
    doc = LogHead.from_bytes(store.get(key=head_key(RUN)), where="head")
    doc.current = 1
    store.put(key=head_key(RUN), data=doc.model_dump_json().encode())


def _copy_from_other_run(store: Store) -> None:
    _build(store, "other")
    store.put(key=event_key(RUN, 6), data=store.get(key=event_key("other", 6)))


def _delete_tail(store: Store, count: int) -> None:
    for seq in range(LAST, LAST - count, -1):
        _delete(store, event_key(RUN, seq))


def _copy_record(store: Store) -> None:
    store.put(key=idempotency_key(RUN, "elsewhere"), data=store.get(key=idempotency_key(RUN, LOOSE_RECORD)))


Tampering = Callable[[Store], None]


def _in_turn(*tamperings: Tampering) -> Tampering:
    def tamper(store: Store) -> None:
        for tampering in tamperings:
            tampering(store)

    return tamper


# name -> (tampering, problem codes without the key, problem codes with the key)
TAMPERINGS: dict[str, tuple[Tampering, set[str], set[str]]] = {
    "edit an event": (lambda s: _edit(s, 4, rehash=False), {"bad_hash"}, {"bad_hash"}),
    "edit and re-hash one event": (lambda s: _edit(s, 4, rehash=True), {"broken_chain"},
                                   {"bad_seal", "broken_chain"}),
    "re-seal a suffix": (lambda s: _reseal_from(s, 4), {"head_mismatch"}, {"bad_seal", "head_mismatch"}),
    "re-seal a suffix and rewrite the head": (_in_turn(lambda s: _reseal_from(s, 4), _forge_head), set(),
                                              {"bad_seal", "head_unsealed"}),
    "replace the last event": (lambda s: _reseal_from(s, LAST), {"head_mismatch"}, {"bad_seal", "head_mismatch"}),
    "delete the last event": (lambda s: _delete_tail(s, 1), {"truncated"}, {"truncated"}),
    "delete the last 3 events (a commit among them)": (lambda s: _delete_tail(s, 3), {"truncated"}, {"truncated"}),
    "delete the tail and rewrite the head": (_in_turn(lambda s: _delete_tail(s, 3), _forge_head), set(),
                                             {"head_unsealed"}),
    "delete an event in the middle": (lambda s: _delete(s, event_key(RUN, 4)), {"gap"}, {"gap"}),
    "swap two events": (lambda s: _swap(s, 6, 7), {"seq_mismatch", "broken_chain", "head_mismatch"},
                        {"seq_mismatch", "broken_chain", "head_mismatch"}),
    "copy an event from another run": (_copy_from_other_run, {"run_mismatch", "broken_chain"},
                                       {"run_mismatch", "broken_chain"}),
    "append a forged event after the head": (_append_forged, set(), {"unsealed"}),
    "add a stray file among the events": (lambda s: s.put(key=f"runs/{RUN}/events/notes.json", data=b"{}"),
                                          {"stray_key"}, {"stray_key"}),
    "delete the head": (lambda s: _delete(s, head_key(RUN)), set(), {"head_missing"}),
    "edit the head's current version": (_edit_head_current, {"head_mismatch"}, {"head_bad_seal", "head_mismatch"}),
    "delete a plan object": (lambda s: _delete(s, plan_key(RUN, 1)), {"plan_missing"}, {"plan_missing"}),
    "replace a plan object": (lambda s: s.put(key=plan_key(RUN, 2), data=encode_plan({**PLAN, "makespan": 9})),
                              {"plan_hash_mismatch"}, {"plan_hash_mismatch"}),
    "corrupt a plan object": (lambda s: s.put(key=plan_key(RUN, 2), data=b"not gzip"), {"plan_unreadable"},
                              {"plan_unreadable"}),
    "edit an idempotency record": (lambda s: _edit_record(s, LOOSE_RECORD, rehash=False), {"record_bad_hash"},
                                   {"record_bad_hash"}),
    "edit and re-hash a record an event names": (lambda s: _edit_record(s, STEP_RECORD, rehash=True),
                                                 {"record_mismatch"}, {"record_bad_seal", "record_mismatch"}),
    "edit and re-hash a record no event names": (lambda s: _edit_record(s, LOOSE_RECORD, rehash=True), set(),
                                                 {"record_bad_seal"}),
    "delete a record an event names": (lambda s: _delete(s, idempotency_key(RUN, STEP_RECORD)), {"record_missing"},
                                       {"record_missing"}),
    "copy a record under another key": (_copy_record, {"record_misplaced"}, {"record_misplaced"}),
}


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "key"])
@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_tampering(store: Store, name: str, keyed: bool) -> None:
    store.seal_key = KEY if keyed else None
    _build(store)
    key = KEY if keyed else None
    assert verify_log(store, RUN, key=key).ok
    tamper, without, with_key = TAMPERINGS[name]
    tamper(store)
    report = verify_log(store, RUN, key=key)
    assert {p.code for p in report.problems} == (with_key if keyed else without), report.problems
    assert report.ok is not bool(with_key if keyed else without)


def test_a_keyed_run_verified_without_the_key_says_what_it_could_not_check(store: Store) -> None:
    store.seal_key = KEY
    _build(store)
    report = verify_log(store, RUN, key=None)
    assert report.ok and not report.keyed and "no key: seals not checked" in report.summary()
    assert any("keyed seals" in w for w in report.warnings)
    assert verify_log(store, RUN, key=b"another-key-of-enough-length!!").problems[0].code == "bad_seal"


def test_a_keyed_log_refuses_to_open_on_a_rewritten_head(store: Store) -> None:
    store.seal_key = KEY
    _build(store)
    _reseal_from(store, 4)
    _forge_head(store)
    with pytest.raises(IntegrityError, match="the head has no seal"):
        ExecutionLog(store, RUN).append(EventType.NODE_SUCCEEDED)
    assert not store.exists(key=event_key(RUN, LAST + 1))
