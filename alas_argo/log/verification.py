"""Verification of a run's log: the hash chain, the head that anchors it, the keyed seals, every plan an
event refers to, retractions, and the idempotency records.

What it detects (README "The execution log" has the full table, one line per tampering):

- without a key: any edit of a stored event that was not re-hashed; an event removed or inserted in the
  middle (a gap, or a ``prev_hash`` that no longer matches); an event moved between runs; events removed
  from the tail (the head names an event that is gone); a re-hashed suffix or a replaced last event (the
  head anchors another hash) unless the head was rewritten to match; a head whose state disagrees with the
  chain; a missing or altered plan object; a retraction of a version never committed; an idempotency record
  that was edited without re-hashing, moved, deleted or replaced while an event names it;
- with the key (``ALAS_STORE__LOG_KEY``): also every re-sealed event, head or record, since nobody without the
  key can seal; and an event, head or record without a seal.

What it cannot detect: a log rolled back to an earlier state together with that state's genuine head (the
store keeps no history to compare with), events appended after the head by a writer that stopped before
updating it (reported as a warning), and, without a key, any consistent forgery of chain and head.

The report's models are in :mod:`alas_argo.log.verify_report`, re-exported here.
"""

from __future__ import annotations

import re

from alas_argo import json_limits
from alas_argo.errors import InputError, IntegrityError, StoreError
from alas_argo.log.event import GENESIS_HASH, Event, event_hash
from alas_argo.log.events import EventType
from alas_argo.log.head import LogHead
from alas_argo.log.idempotency import record_hash, record_seal_ok
from alas_argo.log.layout import head_key, idempotency_key
from alas_argo.log.plans import decode_plan, plan_hash
from alas_argo.log.store import RecordNotFound, Store, check_key
from alas_argo.log.verify_report import Problem, VerifyReport

__all__ = ["Problem", "VerifyReport", "verify_log"]

_EVENT_NAME = re.compile(r"^(\d{8})\.json\Z")
_PLAN_NAME = re.compile(r"^v(\d{4,})\.json\Z")


class _Check:
    """The state of one verification: what was found so far."""

    def __init__(self, store: Store, run_id: str, key: bytes | None) -> None:
        self.store, self.run_id, self.key = store, run_id, key
        self.problems: list[Problem] = []
        self.warnings: list[str] = []

    def bad(self, code: str, seq: int | None, key: str, message: str) -> None:
        self.problems.append(Problem(code=code, seq=seq, key=key, message=message))


def _get(c: _Check, key: str) -> bytes:
    """The bytes of record ``key``; a record the store holds but cannot hand out (a directory in its place, one
    past the store's size limit) is an IntegrityError, which the caller reports as an unreadable record: verify
    judges the run instead of stopping at it. A missing record (RecordNotFound) and an unreachable store
    (StoreUnavailable, a transient error) pass as they are."""
    try:
        return c.store.get(key=key)
    except RecordNotFound:
        raise
    except StoreError as e:
        raise IntegrityError(e.message, where=key) from e


def _read_head(c: _Check) -> LogHead | None:
    key = head_key(c.run_id)
    try:
        head = LogHead.from_bytes(_get(c, key), where=key)
    except RecordNotFound:
        if c.key is not None:
            c.bad("head_missing", None, key, "the run has no head, so nothing anchors the chain under the key")
        else:
            c.warnings.append("no head object (a run written before heads existed, or the head was deleted): "
                              "events removed from the tail cannot be detected")
        return None
    except IntegrityError as e:
        c.bad("head_unreadable", None, key, e.message)
        return None
    if head.run_id != c.run_id:
        c.bad("head_mismatch", None, key, f"the head belongs to run {head.run_id!r}")
    if c.key is not None and head.mac is None:
        c.bad("head_unsealed", None, key, "the head has no seal (written without the key, or the seal was removed)")
    elif c.key is not None and not head.seal_ok(c.key):
        c.bad("head_bad_seal", None, key, "the head's seal does not verify (rewritten, or sealed under another key)")
    return head


def _plan_ref(event: Event) -> tuple[int, str] | None:
    """The version and the plan key a commit event names; None when they are not a number and a store key
    (a commit event written or altered by hand: reported, so that the verifier never stops on it)."""
    try:
        return int(event.payload["version"]), check_key(str(event.payload["key"]))
    except (KeyError, TypeError, ValueError, InputError):
        return None


def _check_plan(c: _Check, event: Event, key: str) -> None:
    version, where = event.payload.get("version"), c.store.where(key)
    try:
        doc = decode_plan(_get(c, key), where=where)
    except RecordNotFound:
        c.bad("plan_missing", event.seq, key, f"plan v{version} referenced by event {event.seq} is missing")
        return
    except IntegrityError as e:
        c.bad("plan_unreadable", event.seq, key, e.message)
        return
    if plan_hash(doc) != event.payload.get("plan_hash"):
        c.bad("plan_hash_mismatch", event.seq, key, f"plan v{version} differs from the hash event {event.seq} recorded")


def _check_event(c: _Check, event: Event, seq: int, key: str, versions: dict[int, str]) -> None:
    if event.seq != seq:
        c.bad("seq_mismatch", seq, key, f"record says seq {event.seq}")
    if event.run_id != c.run_id:
        c.bad("run_mismatch", seq, key, f"record belongs to run {event.run_id!r}")
    if event_hash(event.body()) != event.hash:
        c.bad("bad_hash", seq, key, "content does not match its hash (edited)")
    if c.key is not None and event.mac is None:
        c.bad("unsealed", seq, key, "the event has no seal (written without the key, or the seal was removed)")
    elif c.key is not None and not event.seal_ok(c.key):
        c.bad("bad_seal", seq, key, "the seal does not verify (edited and re-hashed, or sealed under another key)")
    if event.type is EventType.PLAN_COMMITTED:
        ref = _plan_ref(event)
        if ref is None:
            c.bad("bad_plan_ref", seq, key, "commit event names no valid plan version and key")
            return
        version, plan_key = ref
        digest = str(event.payload.get("plan_hash"))
        if versions.get(version, digest) != digest:
            c.bad("duplicate_version", seq, key, f"plan v{version} was already committed with other content")
        versions[version] = digest
        _check_plan(c, event, plan_key)
    elif event.type is EventType.PLAN_RETRACTED and event.payload.get("version") not in versions:
        c.bad("bad_retraction", seq, key, f"retracts v{event.payload.get('version')}, which was not committed before")


def _check_chain(c: _Check, head: LogHead | None) -> tuple[dict[int, Event], LogHead | None, int]:
    """Walk every event record; return the readable events by position, the fold at the head's length (None
    when the chain does not reach it intact) and the number of event records."""
    prefix = f"runs/{c.run_id}/events/"
    by_seq: dict[int, str] = {}
    for key in c.store.list(prefix=prefix):
        m = _EVENT_NAME.match(key[len(prefix):])
        if m:
            by_seq[int(m.group(1))] = key
        else:
            c.bad("stray_key", None, key, "not an event record name")
    prev: str | None = GENESIS_HASH
    expected = 0
    versions: dict[int, str] = {}
    events: dict[int, Event] = {}
    fold: LogHead | None = LogHead.empty(c.run_id)
    at_head = LogHead.empty(c.run_id) if head is not None and head.events == 0 else None
    for seq in sorted(by_seq):
        key = by_seq[seq]
        read: Event | IntegrityError
        try:
            read = Event.from_bytes(_get(c, key), where=key)
        except RecordNotFound:
            # Listed, then gone before it was read (deleted in between, or a listing that still shows a deleted
            # object, as S3-compatible services may): judged as a record that was never listed, so the next one
            # read names the gap, or the head the truncated tail. It stopped verify with "no such record".
            del by_seq[seq]
            continue
        except IntegrityError as e:
            read = e
        if seq != expected:
            c.bad("gap", expected, f"{prefix}{expected:08d}.json", f"events {expected}..{seq - 1} are missing")
            prev, fold = None, None  # the chain cannot be checked across the hole
        expected = seq + 1
        if isinstance(read, IntegrityError):
            c.bad("unreadable", seq, key, read.message)
            prev, fold = None, None
            continue
        event = read
        _check_event(c, event, seq, key, versions)
        if prev is not None and event.prev_hash != prev:
            c.bad("broken_chain", seq, key, "prev_hash does not match the previous event")
        prev = event.hash
        events[seq] = event
        if fold is not None:
            fold.advance(event)
            if head is not None and fold.events == head.events:
                at_head = fold.model_copy(deep=True)
    if c.key is None and any(e.mac is not None for e in events.values()):
        c.warnings.append("events carry keyed seals; set ALAS_STORE__LOG_KEY to check them (re-sealing is only "
                          "detected with the key)")
    return events, at_head, len(by_seq)


def _check_anchor(c: _Check, head: LogHead, events: dict[int, Event], at_head: LogHead | None) -> None:
    key = head_key(c.run_id)
    last = events.get(head.events - 1) if head.events else None
    if head.events and last is None:
        have = max(events, default=-1) + 1
        c.bad("truncated", head.events - 1, key, f"the head anchors {head.events} events but event "
              f"{head.events - 1} is gone (the store holds {have}): the tail was removed")
        return
    if last is not None and last.hash != head.hash:
        c.bad("head_mismatch", head.events - 1, key, f"event {last.seq} is not the one the head anchored (replaced, or "
              "the chain was re-hashed)")
        return
    if at_head is not None and at_head.state() != head.state():
        diff = next(k for k, v in head.state().items() if at_head.state().get(k) != v)
        c.bad("head_mismatch", None, key, f"the head's {diff} disagrees with the chain (the head was edited)")
    newest = max(events, default=-1)
    if newest >= head.events:
        c.warnings.append(f"events {head.events}..{newest} come after the head (a writer stopped between its "
                          "append and the head update, or two writers finished at once): their removal would "
                          "not be detected")


def _check_records(c: _Check, events: dict[int, Event]) -> int:
    prefix = f"runs/{c.run_id}/idempotency/"
    hashes: dict[str, str] = {}
    keys = c.store.list(prefix=prefix)
    gone = 0
    for key in keys:
        try:
            data = _get(c, key)
        except RecordNotFound:
            # Listed, then gone before it was read: as if never listed (like a gone event record), so an event
            # that relies on it names it missing; it was reported as an unreadable record besides.
            gone += 1
            continue
        try:
            record = json_limits.loads(data)  # a record nested past Python's limit is refused
            if not isinstance(record, dict) or not isinstance(record.get("key"), str) or "result" not in record:
                raise ValueError("not an idempotency record")
        except ValueError as e:
            c.bad("record_unreadable", None, key, f"unreadable idempotency record: {e}")
            continue
        except IntegrityError as e:
            c.bad("record_unreadable", None, key, f"unreadable idempotency record: {e.message}")
            continue
        if idempotency_key(c.run_id, record["key"]) != key or record.get("run_id") != c.run_id:
            c.bad("record_misplaced", None, key, f"the record for {record['key']!r} of run {record.get('run_id')!r} "
                  "does not belong under this name (moved or edited)")
        if "hash" not in record:
            if c.key is not None:
                c.bad("record_unsealed", None, key, "the record has no hash or seal")
            else:
                c.warnings.append(f"idempotency record {key} has no hash (written before records were hashed)")
        elif record_hash(record) != record["hash"]:
            c.bad("record_bad_hash", None, key, f"the record for {record['key']!r} does not match its hash (edited)")
        elif c.key is not None and not record_seal_ok(record, c.key):
            code = "record_unsealed" if record.get("mac") is None else "record_bad_seal"
            c.bad(code, None, key, f"the record for {record['key']!r} has no valid seal (re-hashed or unsealed)")
        hashes[key] = str(record.get("hash"))
    for event in events.values():
        p = event.payload
        if not (isinstance(p.get("record_hash"), str) and isinstance(p.get("key"), str)):
            continue
        key = idempotency_key(c.run_id, p["key"])
        if key not in hashes:
            c.bad("record_missing", event.seq, key, f"the idempotency record for {p['key']!r} that event "
                  f"{event.seq} relies on is missing")
        elif hashes[key] != p["record_hash"]:
            c.bad("record_mismatch", event.seq, key, f"the idempotency record for {p['key']!r} is not the one "
                  f"event {event.seq} recorded (replaced or edited)")
    return len(keys) - gone


def verify_log(store: Store, run_id: str, *, key: bytes | None = None) -> VerifyReport:
    """Verify every record of ``run_id`` in ``store`` (a fresh read: nothing cached is trusted).

    Args:
        store: The store.
        run_id: The run.
        key: The seal key; None checks no seals (and says so in the report).
    """
    c = _Check(store, run_id, key)
    head = _read_head(c)  # before listing events: whatever the head anchors was written before it
    events, at_head, count = _check_chain(c, head)
    if head is not None and head.run_id == run_id:
        _check_anchor(c, head, events, at_head)
    records = _check_records(c, events)
    fold = LogHead.fold(run_id, [events[s] for s in sorted(events)])
    referenced = {r.key for r in fold.versions}
    c.warnings += [f"plan object {k} is not referenced by any event (an interrupted commit, or one that lost a "
                   "compare-and-swap race after writing it)"
                   for k in store.list(prefix=f"runs/{run_id}/plans/")
                   if _PLAN_NAME.match(k.rsplit("/", 1)[-1]) and k not in referenced]
    # Event problems first, in sequence order (the root cause); then those about the head and the records.
    problems = sorted(c.problems, key=lambda p: (p.seq is None, p.seq or 0))
    return VerifyReport(run_id=run_id, ok=not problems, events=count, versions=len(fold.versions),
                        problems=problems, warnings=c.warnings, keyed=key is not None,
                        anchored=head.events if head is not None else None, current_version=fold.current,
                        retracted=sorted(fold.retracted), records=records)
