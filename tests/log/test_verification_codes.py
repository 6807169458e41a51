"""What ``verify_log`` reports beyond the codes tests/log/test_tampering.py checks: the problems no tampering
there produces (an unreadable head, a head of another run, a retraction of a version never committed,
unreadable or unhashed idempotency records), and where each problem is (its ``seq``) and what it says.

The codes and locations are the contract (README "The execution log"; the CLI's ``--json``), so each is
asserted exactly. Verification reads every backend through the same Store API, so the filesystem is enough.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from alas_argo.log.event import Event, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.head import LogHead
from alas_argo.log.idempotency import record_hash
from alas_argo.log.layout import event_key, head_key, idempotency_key
from alas_argo.log.verification import verify_log
from alas_argo.steps import StepInput, StepOutput, output_key, run_step

PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}


KEY = b"a-test-key-of-32-bytes-0123456789"
RUN = "codes"
LAST = 4  # the last event _build writes
STEP_RECORD = output_key("wf", "n")  # the record event 3 names
LOOSE_RECORD = "controller-answer"  # a record no event names


def _build(store: FsStore, run: str = RUN) -> None:
    log = ExecutionLog(store, run)
    log.append(EventType.RUN_STARTED)  # 0
    log.commit_plan(PLAN)  # 1
    run_step(StepInput(kind="noop", node="n", run_id=run, scope="wf"), store,  # 2, 3 (names its record)
             {"noop": lambda ctx: StepOutput({"x": 1})})
    log = ExecutionLog(store, run)
    log.idempotency_put(LOOSE_RECORD, {"answer": 1})
    log.append(EventType.RUN_SUCCEEDED)  # 4


def _replace_last(store: FsStore) -> None:
    """Event LAST edited and re-hashed, linked to its predecessor: only the head can tell."""
    doc = Event.model_validate_json(store.get(key=event_key(RUN, LAST))).model_dump(mode="json")
    doc.pop("hash")
    doc.pop("mac", None)
    doc["payload"] = {"forged": True}
    store.put(key=event_key(RUN, LAST), data=seal_event(**doc).to_bytes())


def _delete_tail(store: FsStore, count: int) -> None:
    for seq in range(LAST, LAST - count, -1):
        store.root.joinpath(*event_key(RUN, seq).split("/")).unlink()


def _edit_record(store: FsStore, name: str, *, rehash: bool) -> None:
    key = idempotency_key(RUN, name)
    record = json.loads(store.get(key=key))
    record["result"] = {"forged": True}
    if rehash:
        record["hash"] = record_hash(record)
    store.put(key=key, data=json.dumps(record).encode())


def test_an_unreadable_head_is_named(fs_store: FsStore) -> None:
    log = ExecutionLog(fs_store, "h")
    log.commit_plan(PLAN)
    log.append(EventType.RUN_SUCCEEDED)
    assert verify_log(fs_store, "h").ok
    fs_store.put(key=head_key("h"), data=b"not json")
    report = verify_log(fs_store, "h")
    assert [(p.code, p.seq, p.key) for p in report.problems] == [("head_unreadable", None, head_key("h"))]
    assert "unreadable head" in report.problems[0].message
    assert not report.ok and report.anchored is None
    assert report.events == 2 and report.current_version == 1  # the chain itself is still checked and folded


def test_a_retraction_of_a_version_never_committed_is_named(fs_store: FsStore) -> None:
    log = ExecutionLog(fs_store, "r")
    log.commit_plan(PLAN)
    log.retract(1)  # a genuine retraction: no problem
    assert verify_log(fs_store, "r").ok
    # ExecutionLog.retract refuses an unknown version; a raw append (or a hand-written event) does not.
    forged = log.append(EventType.PLAN_RETRACTED, payload={"version": 9})
    report = verify_log(fs_store, "r")
    assert [(p.code, p.seq) for p in report.problems] == [("bad_retraction", forged.seq)]
    assert report.problems[0].message == "retracts v9, which was not committed before"
    # It withdraws nothing: the log lists only the genuine retraction, and a fresh reader folds the same.
    assert log.retracted() == ExecutionLog(fs_store, "r").retracted() == [1]
    assert report.current_version is None


def test_a_retraction_before_its_version_is_committed_withdraws_nothing(fs_store: FsStore) -> None:
    log = ExecutionLog(fs_store, "early")
    log.append(EventType.PLAN_RETRACTED, payload={"version": 1})  # a retraction of a version still to come
    log.commit_plan(PLAN)
    assert log.retracted() == [] and log.current_version() == 1
    assert [p.code for p in verify_log(fs_store, "early").problems] == ["bad_retraction"]


def test_a_head_of_another_run_is_named(fs_store: FsStore) -> None:
    _build(fs_store)
    _build(fs_store, "other")
    fs_store.put(key=head_key(RUN), data=fs_store.get(key=head_key("other")))
    report = verify_log(fs_store, RUN)
    assert [(p.code, p.seq, p.message) for p in report.problems] == [
        ("head_mismatch", None, "the head belongs to run 'other'")]


def test_a_replaced_last_event_is_named_at_its_place(fs_store: FsStore) -> None:
    _build(fs_store)
    _replace_last(fs_store)
    report = verify_log(fs_store, RUN)
    assert [(p.code, p.seq) for p in report.problems] == [("head_mismatch", LAST)]


@pytest.mark.parametrize("removed", [2, LAST + 1])
def test_a_removed_tail_says_what_the_head_anchors_and_what_is_left(fs_store: FsStore, removed: int) -> None:
    _build(fs_store)
    _delete_tail(fs_store, removed)
    report = verify_log(fs_store, RUN)
    assert [(p.code, p.seq) for p in report.problems] == [("truncated", LAST)]
    assert report.problems[0].message == (f"the head anchors {LAST + 1} events but event {LAST} is gone (the store "
                                          f"holds {LAST + 1 - removed}): the tail was removed")


def test_a_replaced_record_is_named_at_the_event_that_relies_on_it(fs_store: FsStore) -> None:
    _build(fs_store)
    _edit_record(fs_store, STEP_RECORD, rehash=True)
    report = verify_log(fs_store, RUN)
    assert [(p.code, p.seq) for p in report.problems] == [("record_mismatch", 3)]  # event 3 names the record


def test_every_unreadable_record_is_named_and_the_rest_still_checked(fs_store: FsStore) -> None:
    _build(fs_store)
    bad = {"a": b"not json", "b": json.dumps({"result": 1}).encode(), "c": b"[1, 2]"}  # b: no key
    for name, data in bad.items():
        fs_store.put(key=idempotency_key(RUN, name), data=data)
    _edit_record(fs_store, LOOSE_RECORD, rehash=False)
    report = verify_log(fs_store, RUN)
    unreadable = sorted(p.key for p in report.problems if p.code == "record_unreadable")
    assert unreadable == sorted(idempotency_key(RUN, name) for name in bad)
    assert all(p.message.startswith("unreadable idempotency record: ") for p in report.problems
               if p.code == "record_unreadable")
    assert [p.key for p in report.problems if p.code == "record_bad_hash"] == [idempotency_key(RUN, LOOSE_RECORD)]


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "key"])
def test_a_record_without_a_hash_is_a_problem_only_under_the_key(fs_store: FsStore, keyed: bool) -> None:
    fs_store.seal_key = KEY if keyed else None
    _build(fs_store)
    key = idempotency_key(RUN, LOOSE_RECORD)
    record = json.loads(fs_store.get(key=key))
    record.pop("hash")
    record.pop("mac", None)
    fs_store.put(key=key, data=json.dumps(record).encode())
    report = verify_log(fs_store, RUN, key=KEY if keyed else None)
    if keyed:
        assert [(p.code, p.key, p.message) for p in report.problems] == [
            ("record_unsealed", key, "the record has no hash or seal")]
    else:
        assert report.ok
        assert f"idempotency record {key} has no hash (written before records were hashed)" in report.warnings


# ---- what each problem and warning says, and where (printed by ``alas log verify``, its --json) -------------

def _rewrite(store: FsStore, key: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """Rewrite one stored JSON document in place (no re-hash, no re-seal: a hand edit)."""
    doc = json.loads(store.get(key=key))
    edit(doc)
    store.put(key=key, data=json.dumps(doc).encode())


def _problems(store: FsStore, *, key: bytes | None = None) -> list[tuple[str, int | None, str, str]]:
    return [(p.code, p.seq, p.key, p.message) for p in verify_log(store, RUN, key=key).problems]


def test_an_edited_event_and_a_hand_written_commit_are_named_in_words(fs_store: FsStore) -> None:
    _build(fs_store)
    _rewrite(fs_store, event_key(RUN, 0), lambda doc: doc["payload"].update(forged=True))
    ExecutionLog(fs_store, RUN).append(EventType.PLAN_COMMITTED, payload={"version": "v2"})  # event 5
    assert _problems(fs_store) == [
        ("bad_hash", 0, event_key(RUN, 0), "content does not match its hash (edited)"),
        ("bad_plan_ref", LAST + 1, event_key(RUN, LAST + 1), "commit event names no valid plan version and key")]


def test_unsealed_and_badly_sealed_records_are_named_in_words_under_the_key(fs_store: FsStore) -> None:
    fs_store.seal_key = KEY
    _build(fs_store)
    _rewrite(fs_store, event_key(RUN, 1), lambda doc: doc.pop("mac"))
    _rewrite(fs_store, event_key(RUN, 2), lambda doc: doc.update(mac="0" * 64))
    _rewrite(fs_store, head_key(RUN), lambda doc: doc.pop("mac"))
    assert _problems(fs_store, key=KEY) == [
        ("unsealed", 1, event_key(RUN, 1), "the event has no seal (written without the key, or the seal was removed)"),
        ("bad_seal", 2, event_key(RUN, 2),
         "the seal does not verify (edited and re-hashed, or sealed under another key)"),
        ("head_unsealed", None, head_key(RUN),
         "the head has no seal (written without the key, or the seal was removed)")]


@pytest.mark.parametrize("keyed", [False, True], ids=["no-key", "key"])
def test_a_missing_head_is_a_problem_under_the_key_and_a_warning_without(fs_store: FsStore, keyed: bool) -> None:
    fs_store.seal_key = KEY if keyed else None
    _build(fs_store)
    fs_store.root.joinpath(*head_key(RUN).split("/")).unlink()
    report = verify_log(fs_store, RUN, key=KEY if keyed else None)
    if keyed:
        assert [(p.code, p.seq, p.key, p.message) for p in report.problems] == [
            ("head_missing", None, head_key(RUN), "the run has no head, so nothing anchors the chain under the key")]
    else:
        assert report.ok and report.anchored is None
        assert report.warnings == ["no head object (a run written before heads existed, or the head was deleted): "
                                   "events removed from the tail cannot be detected"]


def test_a_replaced_last_event_is_named_in_words_under_the_head(fs_store: FsStore) -> None:
    _build(fs_store)
    _replace_last(fs_store)
    assert _problems(fs_store) == [("head_mismatch", LAST, head_key(RUN), f"event {LAST} is not the one the head "
                                    "anchored (replaced, or the chain was re-hashed)")]


def test_an_edited_head_names_the_field_that_disagrees(fs_store: FsStore) -> None:
    _build(fs_store)
    _rewrite(fs_store, head_key(RUN), lambda doc: doc.update(current=9))
    assert _problems(fs_store) == [("head_mismatch", None, head_key(RUN),
                                    "the head's current disagrees with the chain (the head was edited)")]


def test_an_event_after_the_head_is_a_warning_from_the_first_one(fs_store: FsStore) -> None:
    """A writer that stopped between its append and the head update leaves one event past the head."""
    _build(fs_store)
    stale = fs_store.get(key=head_key(RUN))
    ExecutionLog(fs_store, RUN).append(EventType.RUN_SUCCEEDED)  # event LAST + 1
    fs_store.put(key=head_key(RUN), data=stale)
    report = verify_log(fs_store, RUN)
    assert report.ok and report.anchored == LAST + 1
    assert report.warnings == [f"events {LAST + 1}..{LAST + 1} come after the head (a writer stopped between its "
                               "append and the head update, or two writers finished at once): their removal would "
                               "not be detected"]


def test_a_head_of_an_empty_run_over_no_events_is_consistent(fs_store: FsStore) -> None:
    # Nothing to compare it with (a log rolled back with its genuine head is undetectable, module docstring):
    # verify must neither crash nor warn of events after it.
    fs_store.put(key=head_key(RUN), data=LogHead.empty(RUN).to_bytes(None))
    report = verify_log(fs_store, RUN)
    assert (report.ok, report.events, report.anchored, report.warnings) == (True, 0, 0, [])
    # Its state is still compared with the (empty) chain's.
    _rewrite(fs_store, head_key(RUN), lambda doc: doc.update(current=9))
    assert _problems(fs_store) == [("head_mismatch", None, head_key(RUN),
                                    "the head's current disagrees with the chain (the head was edited)")]


def test_a_stray_object_and_a_broken_link_are_named_in_words(fs_store: FsStore) -> None:
    _build(fs_store)
    fs_store.put(key=f"runs/{RUN}/events/notes.json", data=b"{}")
    doc = Event.model_validate_json(fs_store.get(key=event_key(RUN, 2))).model_dump(mode="json")
    doc.pop("hash")
    doc["prev_hash"] = "sha256:" + "0" * 64  # re-hashed, so only the link to event 1 is wrong
    fs_store.put(key=event_key(RUN, 2), data=seal_event(**doc).to_bytes())
    problems = _problems(fs_store)
    assert problems[0] == ("broken_chain", 2, event_key(RUN, 2), "prev_hash does not match the previous event")
    assert ("stray_key", None, f"runs/{RUN}/events/notes.json", "not an event record name") in problems


def test_seals_checked_by_nobody_are_a_warning_naming_the_variable(fs_store: FsStore) -> None:
    fs_store.seal_key = KEY
    _build(fs_store)
    _rewrite(fs_store, head_key(RUN), lambda doc: doc.update(mac="0" * 64))
    assert _problems(fs_store, key=KEY) == [
        ("head_bad_seal", None, head_key(RUN),
         "the head's seal does not verify (rewritten, or sealed under another key)")]
    report = verify_log(fs_store, RUN)  # environment variables are case-sensitive: the name must be exact
    assert "events carry keyed seals; set ALAS_STORE__LOG_KEY to check them (re-sealing is only detected with " \
           "the key)" in report.warnings


def test_the_report_says_what_was_checked(fs_store: FsStore) -> None:
    fs_store.seal_key = KEY
    _build(fs_store)
    ExecutionLog(fs_store, RUN).retract(1)  # event LAST + 1
    report = verify_log(fs_store, RUN, key=KEY)
    assert report.ok, report
    assert (report.keyed, report.events, report.anchored, report.versions, report.current_version,
            report.retracted, report.records) == (True, LAST + 2, LAST + 2, 1, None, [1], 2)
    unkeyed = verify_log(fs_store, RUN)
    assert (unkeyed.keyed, unkeyed.records) == (False, 2)


def test_record_problems_are_named_in_words_at_their_place(fs_store: FsStore) -> None:
    fs_store.seal_key = KEY
    _build(fs_store)
    step, loose = idempotency_key(RUN, STEP_RECORD), idempotency_key(RUN, LOOSE_RECORD)
    # The loose record moved under another run's name; the step's record deleted; a record that is no record.
    moved = json.loads(fs_store.get(key=loose))
    fs_store.put(key=idempotency_key("other", LOOSE_RECORD), data=fs_store.get(key=loose))
    fs_store.root.joinpath(*step.split("/")).unlink()
    fs_store.put(key=idempotency_key(RUN, "c"), data=b"[1, 2]")
    _rewrite(fs_store, loose, lambda doc: doc.pop("mac"))  # hashed, but no longer sealed
    problems = _problems(fs_store, key=KEY)
    assert ("record_missing", 3, step, f"the idempotency record for {STEP_RECORD!r} that event 3 relies on is "
            "missing") in problems
    assert ("record_unreadable", None, idempotency_key(RUN, "c"),
            "unreadable idempotency record: not an idempotency record") in problems
    assert ("record_unsealed", None, loose,
            f"the record for {LOOSE_RECORD!r} has no valid seal (re-hashed or unsealed)") in problems
    assert [p.code for p in verify_log(fs_store, "other", key=KEY).problems
            if p.key == idempotency_key("other", LOOSE_RECORD)] == ["record_misplaced"]
    other = next(p for p in verify_log(fs_store, "other", key=KEY).problems if p.code == "record_misplaced")
    assert other.message == (f"the record for {LOOSE_RECORD!r} of run {moved['run_id']!r} does not belong under "
                             "this name (moved or edited)")


def test_event_problems_come_first_in_sequence_order(fs_store: FsStore) -> None:
    """The root cause first: a problem found later (the records, after the chain and the head) but about an
    earlier event is reported before one about a later event."""
    _build(fs_store)
    _replace_last(fs_store)  # head_mismatch at LAST, found with the head
    _edit_record(fs_store, STEP_RECORD, rehash=True)  # record_mismatch at 3, found with the records
    report = verify_log(fs_store, RUN)
    assert [(p.code, p.seq) for p in report.problems] == [("record_mismatch", 3), ("head_mismatch", LAST)]
