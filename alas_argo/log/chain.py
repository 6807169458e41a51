"""The hash-chained events of one run: opening through the head, reading, and appending without a lock.

Opening a run reads its head (:mod:`alas_argo.log.head`, through :mod:`alas_argo.log.cursor`): the state
folded up to some event, checked against that event, then the few events after it; so it costs a bounded
number of requests however long the log is. Runs written before heads existed have none and are folded from
their first event. After each append the writer stores the new head.

Concurrency without a lock service: a writer appends at the sequence number after the last event it
knows, with a create-only-if-absent put; if another writer took that number it reads the new events and
tries the next one (bounded). Within one process a re-entrant lock serialises writers sharing one chain
(the runtime's thread pool does). Plan versions, retractions and idempotency records are built on this in
:mod:`alas_argo.log.execution_log`.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from alas_argo import metrics
from alas_argo.errors import ContractError, InputError, StoreError, StoreUnavailable
from alas_argo.log.cursor import ChainCursor
from alas_argo.log.event import Event, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.head import LogHead
from alas_argo.log.layout import check_run_id, event_key, head_key
from alas_argo.log.redaction import PROCESS_REDACTION_KEY, redact_payload
from alas_argo.log.store import Store

__all__ = ["EventChain"]

_log = logging.getLogger(__name__)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class EventChain:
    """Read and append the hash-chained events of one run (the base of :class:`ExecutionLog`).

    Args:
        store: Backend holding the log.
        run_id: The run; a new id starts an empty log, an existing one continues it.
        correlation_id: Default correlation id of appended events (defaults to the run id).
        clock: Source of event timestamps (injected by tests).
        redaction_key: HMAC key of redaction markers (default: random per process).
        max_append_attempts: Lost races tolerated per append before giving up with StoreUnavailable.
        seal_key: Key of the keyed seals on events, head and records (default: the store's ``seal_key``).
    """

    def __init__(self, store: Store, run_id: str, *, correlation_id: str | None = None,
                 clock: Callable[[], datetime] = _utc_now, redaction_key: bytes = PROCESS_REDACTION_KEY,
                 max_append_attempts: int = 200, seal_key: bytes | None = None) -> None:
        self.store = store
        self.run_id = check_run_id(run_id)
        self.correlation_id = correlation_id or run_id
        self._clock = clock
        self._redaction_key = redaction_key
        self.max_append_attempts = max_append_attempts
        self.seal_key = seal_key if seal_key is not None else store.seal_key
        self._cursor = ChainCursor(store, self.run_id, self.seal_key)
        self._lock = threading.RLock()
        #: Appends this instance lost to another writer and retried (a contention measure).
        self.lost_races = 0

    # -- reading -----------------------------------------------------------------------------------------

    def _state(self) -> LogHead:
        """The state of the complete chain as of now (see :class:`ChainCursor`)."""
        with self._lock:
            return self._cursor.state()

    def _known(self) -> LogHead:
        with self._lock:
            return self._cursor.known()

    def _event_at(self, seq: int) -> Event:
        with self._lock:
            return self._cursor.event_at(seq)

    def head(self) -> LogHead:
        """A copy of the state of the complete chain as of now (current version, versions, ...)."""
        with self._lock:
            return self._state().model_copy(deep=True)

    def events(self) -> list[Event]:
        """Every event of the run, in sequence order (re-read from the store: a full read)."""
        with self._lock:
            return self._cursor.events()

    def event(self, seq: int) -> Event:
        """Event ``seq``; InputError when the run has no such event."""
        event = self._cursor.read(seq) if seq >= 0 else None
        if event is None:
            raise InputError(f"run {self.run_id} has no event {seq}", where=self.store.location)
        return event

    def first(self, type: EventType) -> Event | None:
        """The run's first event of ``type``, or None (one read, whatever the log's length)."""
        seq = self._known().first.get(type.value)
        if seq is None:
            seq = self._state().first.get(type.value)
        return None if seq is None else self._event_at(seq)

    def latest(self, type: EventType) -> Event | None:
        """The run's latest event of ``type``, or None (one read, whatever the log's length)."""
        seq = self._state().last.get(type.value)
        return None if seq is None else self._event_at(seq)

    def exists(self) -> bool:
        """Whether the run has a head or at least one event."""
        return self.store.exists(key=head_key(self.run_id)) or self.store.exists(key=event_key(self.run_id, 0))

    # -- appending ---------------------------------------------------------------------------------------

    def _write_head(self, head: LogHead) -> None:
        try:
            self.store.put(key=head_key(self.run_id), data=head.to_bytes(self.seal_key))
        except (StoreError, StoreUnavailable) as e:
            # The event is in; a missing head update only costs the next reader a few more reads. Raising
            # would make the caller retry an append that succeeded (a store refusing the write, or one that
            # is away or full for now).
            _log.warning("head of run %s not updated: %s", self.run_id, e)

    def _append(self, fields: dict[str, Any],
                guard: Callable[[LogHead], Event | None] | None = None) -> Event:
        with self._lock:
            head = self._known()
            for attempt in range(self.max_append_attempts):
                # The guard sees the state of the complete prefix whenever the put below succeeds: the put
                # can only win if no event exists at this seq, i.e. the state folded every earlier event.
                if guard is not None and (existing := guard(head)) is not None:
                    return existing
                seq = head.events
                stamp = self._clock().astimezone(UTC).isoformat(timespec="microseconds")
                event = seal_event(seq=seq, timestamp=stamp.replace("+00:00", "Z"), run_id=self.run_id,
                                   prev_hash=head.hash, **fields).sealed_with(self.seal_key)
                put_started = time.perf_counter()
                created = self.store.put_if_absent(key=event_key(self.run_id, seq), data=event.to_bytes())
                metrics.observe_log_append(self.store.kind, time.perf_counter() - put_started)
                if created:
                    self._cursor.appended(event)
                    self._write_head(head)
                    return event
                self.lost_races += 1
                head = self._state()
                # Jitter breaks the lockstep of writers that keep colliding on the same number.
                time.sleep(random.uniform(0, 0.001 * min(attempt + 1, 20)))
        raise StoreUnavailable(f"gave up appending after {self.max_append_attempts} lost races",
                               where=self.store.where(f"runs/{self.run_id}"))

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
