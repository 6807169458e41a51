"""The versioned execution log of one run: append-only events in a hash chain, immutable plan versions,
idempotency records (DESIGN.md section 6).

Layout under the store: see :mod:`alas_argo.log.layout`.

Concurrency without a lock service: a writer appends at the sequence number after the last event it
knows, with a create-only-if-absent put; if another writer took that number it re-reads the new events
and tries the next one (bounded). Plan version numbers come from the chain too: a committer writes the
plan object at the next free number, then appends a ``plan.committed`` event whose guard re-checks,
against the complete chain prefix, that no other event already claimed that number. Within one process a
re-entrant lock serialises writers sharing one ExecutionLog (the runtime's thread pool does).

The current plan is the one named by the latest ``plan.committed`` event; concurrent committers may make
chain order and version order differ, and chain order wins.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from alas_argo.errors import ConflictError, ContractError, InputError, IntegrityError, StoreUnavailable
from alas_argo.log.event import GENESIS_HASH, Event, canonical_json, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.idempotency import IdempotencyRecords
from alas_argo.log.layout import check_run_id, event_key, plan_key
from alas_argo.log.plans import PlanDiff, decode_plan, diff_plans, encode_plan, plan_hash
from alas_argo.log.redaction import PROCESS_REDACTION_KEY, redact_payload
from alas_argo.log.store import RecordNotFound, Store
from alas_argo.log.verification import VerifyReport, verify_log

# check_run_id, event_key and plan_key live in layout; re-exported here because callers import them from here.
__all__ = ["ExecutionLog", "check_run_id", "event_key", "plan_key"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _by_key(events: list[Event], key: str) -> Event | None:
    """The ``plan.committed`` event carrying idempotency key ``key``, if any."""
    for e in events:
        if e.type is EventType.PLAN_COMMITTED and e.payload.get("idempotency_key") == key:
            return e
    return None


class _VersionTaken(Exception):
    """Internal: the plan version chosen was claimed by another committer first."""


class ExecutionLog:
    """Read and append the log of one run.

    Args:
        store: Backend holding the log.
        run_id: The run; a new id starts an empty log, an existing one continues it.
        correlation_id: Default correlation id of appended events (defaults to the run id).
        clock: Source of event timestamps (injected by tests).
        redaction_key: HMAC key of redaction markers (default: random per process).
        max_append_attempts: Lost races tolerated per append before giving up with StoreUnavailable.
    """

    def __init__(self, store: Store, run_id: str, *, correlation_id: str | None = None,
                 clock: Callable[[], datetime] = _utc_now, redaction_key: bytes = PROCESS_REDACTION_KEY,
                 max_append_attempts: int = 200) -> None:
        self.store = store
        self.run_id = check_run_id(run_id)
        self.correlation_id = correlation_id or run_id
        self._clock = clock
        self._redaction_key = redaction_key
        self.max_append_attempts = max_append_attempts
        self._events: list[Event] = []
        self._loaded = False
        self._lock = threading.RLock()
        self._idempotency = IdempotencyRecords(store, self.run_id, clock)
        #: Appends this instance lost to another writer and retried (a contention measure).
        self.lost_races = 0

    # -- events ------------------------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Read the events appended (by anyone) since the last read."""
        while True:
            key = event_key(self.run_id, len(self._events))
            try:
                data = self.store.get(key=key)
            except RecordNotFound:
                break
            self._events.append(Event.from_bytes(data, where=f"{self.store.location}/{key}"))
        self._loaded = True

    def events(self) -> list[Event]:
        """Every event of the run, in sequence order (re-read from the store)."""
        with self._lock:
            self._refresh()
            return list(self._events)

    def exists(self) -> bool:
        """Whether the run has at least one event."""
        return bool(self.store.list(prefix=f"runs/{self.run_id}/"))

    def _append(self, fields: dict[str, Any],
                guard: Callable[[list[Event]], Event | None] | None = None) -> Event:
        with self._lock:
            if not self._loaded:
                self._refresh()
            for attempt in range(self.max_append_attempts):
                # The guard sees the complete prefix whenever the put below succeeds: the put can only
                # win if no event exists at this seq, i.e. the cache held every earlier event.
                if guard is not None and (existing := guard(self._events)) is not None:
                    return existing
                seq = len(self._events)
                prev = self._events[-1].hash if self._events else GENESIS_HASH
                stamp = self._clock().astimezone(UTC).isoformat(timespec="microseconds")
                event = seal_event(seq=seq, timestamp=stamp.replace("+00:00", "Z"), run_id=self.run_id,
                                   prev_hash=prev, **fields)
                if self.store.put_if_absent(key=event_key(self.run_id, seq), data=event.to_bytes()):
                    self._events.append(event)
                    return event
                self.lost_races += 1
                self._refresh()
                # Jitter breaks the lockstep of writers that keep colliding on the same number.
                time.sleep(random.uniform(0, 0.001 * min(attempt + 1, 20)))
        raise StoreUnavailable(f"gave up appending after {self.max_append_attempts} lost races",
                               where=f"{self.store.location}/runs/{self.run_id}")

    def append(self, type: EventType | str, *, payload: Mapping[str, Any] | None = None,
               node_id: str | None = None, attempt: int | None = None, correlation_id: str | None = None,
               redact: Iterable[str] = ()) -> Event:
        """Append one event and return it sealed.

        Args:
            type: An EventType (or its string value); anything outside the taxonomy is rejected.
            payload: Type-specific JSON data.
            node_id: IR node that produced it.
            attempt: Attempt number of that node.
            correlation_id: Overrides the log's default correlation id.
            redact: Dotted payload paths written only as keyed-hash markers.

        Raises:
            ContractError: Unknown event type or a payload JSON cannot represent.
            StoreUnavailable: The store is unreachable, or too many lost races.
        """
        try:
            etype = EventType(type)
        except ValueError:
            raise ContractError(f"unknown event type {type!r}", where=f"run {self.run_id}") from None
        paths = list(redact)
        clean = redact_payload(dict(payload or {}), paths, key=self._redaction_key)
        return self._append({"type": etype, "payload": clean, "node_id": node_id, "attempt": attempt,
                             "correlation_id": correlation_id or self.correlation_id, "redact": paths})

    # -- plan versions -----------------------------------------------------------------------------------

    def _committed(self) -> list[Event]:
        return [e for e in self._events if e.type is EventType.PLAN_COMMITTED]

    def commit_plan(self, schedule_doc: Mapping[str, Any], *, node_id: str | None = None,
                    reason: str = "commit", parent_version: int | None = None,
                    meta: Mapping[str, Any] | None = None, attempt: int | None = None,
                    expect_current: int | None = None, idempotency_key: str | None = None) -> int:
        """Store ``schedule_doc`` as a new immutable version and record it; return the version number.

        The plan object is written first and the ``plan.committed`` event second, so an event never names
        a plan that is not there; a crash in between leaves an unreferenced object that the next commit
        skips (or re-uses when the bytes are identical) and that verify reports as a warning.

        Args:
            expect_current: Compare-and-swap: commit only if this is still the current version when the
                ``plan.committed`` event lands (checked against the complete chain prefix by the same
                create-only-if-absent put), else raise :class:`ConflictError`; ``0`` means "no plan yet".
                A writer that derived its plan from version v passes v, so no concurrent update is lost.
            idempotency_key: Exactly-once commit: when a ``plan.committed`` event with this key is already
                in the chain, its version is returned and nothing is written. Checked by the same guard,
                so it holds across a crash between the commit and any later bookkeeping (a resumed node
                re-committing with the same key gets the version it committed before the crash).
        """
        doc = json.loads(canonical_json(dict(schedule_doc)))
        data, digest = encode_plan(doc), plan_hash(doc)
        with self._lock:
            self._refresh()
            if idempotency_key is not None and (done := _by_key(self._events, idempotency_key)) is not None:
                return int(done.payload["version"])
            committed = self._committed()
            version = 1 + max((int(e.payload["version"]) for e in committed), default=0)
            current = int(committed[-1].payload["version"]) if committed else 0
            if expect_current is not None and current != expect_current:
                # Fail before writing the plan object: a writer that is already stale leaves no orphan.
                raise ConflictError(f"plan v{current} is current, not v{expect_current}", where=f"run {self.run_id}")
            for _ in range(self.max_append_attempts):
                key = plan_key(self.run_id, version)
                if not self.store.put_if_absent(key=key, data=data) and self.store.get(key=key) != data:
                    version += 1
                    continue

                def guard(events: list[Event], v: int = version) -> Event | None:
                    if idempotency_key is not None and (done := _by_key(events, idempotency_key)) is not None:
                        return done
                    for e in events:
                        if e.type is EventType.PLAN_COMMITTED and e.payload.get("version") == v:
                            if e.payload.get("plan_hash") == digest:
                                return e  # an identical commit of this very object already landed
                            raise _VersionTaken
                    if expect_current is not None:
                        commits = [e for e in events if e.type is EventType.PLAN_COMMITTED]
                        current = int(commits[-1].payload["version"]) if commits else 0
                        if current != expect_current:
                            raise ConflictError(f"plan v{current} is current, not v{expect_current}",
                                                where=f"run {self.run_id}")
                    return None

                payload = {"version": version, "key": key, "plan_hash": digest, "bytes": len(data),
                           "makespan": doc.get("makespan"), "reason": reason,
                           "parent_version": parent_version, "meta": dict(meta or {})}
                if idempotency_key is not None:
                    payload["idempotency_key"] = idempotency_key
                try:
                    event = self._append({"type": EventType.PLAN_COMMITTED, "payload": payload,
                                          "node_id": node_id, "attempt": attempt,
                                          "correlation_id": self.correlation_id, "redact": []}, guard=guard)
                except _VersionTaken:
                    version += 1
                    continue
                return int(event.payload["version"])
        raise StoreUnavailable("gave up committing a plan: every version number was taken",
                               where=f"{self.store.location}/runs/{self.run_id}")

    def versions(self) -> list[int]:
        """Committed version numbers, ascending."""
        with self._lock:
            self._refresh()
            return sorted({int(e.payload["version"]) for e in self._committed()})

    def plan_event(self, version: int) -> Event:
        """The ``plan.committed`` event of ``version``; InputError when there is none."""
        with self._lock:
            self._refresh()
            for e in self._committed():
                if e.payload.get("version") == version:
                    return e
        raise InputError(f"run {self.run_id} has no plan version {version}", where=self.store.location)

    def plan(self, version: int) -> dict[str, Any]:
        """The plan document of ``version``, checked against the hash its commit recorded.

        Raises:
            InputError: No such version. IntegrityError: the stored object is missing or altered.
        """
        event = self.plan_event(version)
        key = str(event.payload["key"])
        where = f"{self.store.location}/{key}"
        try:
            data = self.store.get(key=key)
        except RecordNotFound:
            raise IntegrityError(f"plan v{version} is referenced by event {event.seq} but missing",
                                 where=where) from None
        doc = decode_plan(data, where=where)
        if plan_hash(doc) != event.payload.get("plan_hash"):
            raise IntegrityError(f"plan v{version} does not match the hash recorded by event {event.seq}",
                                 where=where)
        return doc

    def current_plan(self) -> tuple[int, dict[str, Any]] | None:
        """(version, document) of the latest committed plan, or None before the first commit."""
        with self._lock:
            self._refresh()
            committed = self._committed()
        if not committed:
            return None
        version = int(committed[-1].payload["version"])
        return version, self.plan(version)

    def diff(self, a: int, b: int) -> PlanDiff:
        """Operations moved and makespan change from version ``a`` to version ``b``."""
        return diff_plans(self.plan(a), self.plan(b), version_a=a, version_b=b)

    def restore(self, version: int, *, node_id: str | None = None) -> int:
        """Make ``version`` current again by committing it as a new version (nothing is ever deleted)."""
        return self.commit_plan(self.plan(version), node_id=node_id, reason=f"restore of v{version}",
                                parent_version=version)

    # -- idempotency -------------------------------------------------------------------------------------

    def idempotency_get(self, key: str) -> dict[str, Any] | None:
        """The result recorded under ``key``, or None."""
        return self._idempotency.get(key)

    def idempotency_put(self, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """Record ``result`` under ``key`` unless a result is there already; return the winning result."""
        return self._idempotency.put(key, result)

    # -- the runtime's Journal protocol --------------------------------------------------------------------

    def record(self, type: EventType | str, *, node_id: str | None = None, attempt: int | None = None,
               payload: Mapping[str, Any] | None = None, redact: Iterable[str] = ()) -> None:
        """Journal protocol: append an event."""
        self.append(type, payload=payload, node_id=node_id, attempt=attempt, redact=redact)

    def get_idempotent(self, key: str) -> dict[str, Any] | None:
        """Journal protocol: the recorded result for ``key``."""
        return self.idempotency_get(key)

    def put_idempotent(self, key: str, result: dict[str, Any]) -> None:
        """Journal protocol: record ``result`` under ``key`` (first writer wins)."""
        self.idempotency_put(key, result)

    # -- integrity ---------------------------------------------------------------------------------------

    def verify(self) -> VerifyReport:
        """Check the hash chain, sequence gaps and every referenced plan (see verification.verify_log)."""
        return verify_log(self.store, self.run_id)
