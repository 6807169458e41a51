"""A reader's position in one run's chain: the head it opened, the state folded since, the events it read.

Opening reads the stored head (:mod:`alas_argo.log.head`), checks it against the event it names, and then
reads forward to the first missing sequence number; so the state of the complete chain costs a bounded
number of requests whatever the length of the log. A run without a head (written before heads existed, or a
new one) is folded from its first event. Events never change once written, so every event read is cached.

Every event read must be the one its record's name says (its own sequence number and run), hold the content
its hash was taken over, and follow the event before it (its ``prev_hash``): a reader never folds, resumes
from or shows a record that was edited in place, copied over another or moved. ``alas log verify`` reports
every problem of a log; a reader stops at the first, naming it.

The cursor is not thread-safe on its own: :class:`~alas_argo.log.execution_log.ExecutionLog` calls it under
its lock.
"""

from __future__ import annotations

from alas_argo.errors import IntegrityError
from alas_argo.log.event import GENESIS_HASH, Event, event_hash
from alas_argo.log.head import LogHead
from alas_argo.log.layout import event_key, head_key
from alas_argo.log.store import RecordNotFound, Store

__all__ = ["ChainCursor"]

_VERIFY = "run `alas log verify`"


def _check_record(event: Event, seq: int, run_id: str, where: str) -> None:
    """Raise IntegrityError unless ``event`` is event ``seq`` of ``run_id`` with the content its hash covers."""
    if event.seq != seq:
        raise IntegrityError(f"the record of event {seq} holds event {event.seq} (copied or moved); {_VERIFY}",
                             where=where)
    if event.run_id != run_id:
        raise IntegrityError(f"event {seq} belongs to run {event.run_id!r}; {_VERIFY}", where=where)
    if event_hash(event.body()) != event.hash:
        raise IntegrityError(f"event {seq}'s content does not match its hash (edited); {_VERIFY}", where=where)


def _check_link(event: Event, prev_hash: str, where: str) -> None:
    """Raise IntegrityError unless ``event`` names ``prev_hash`` (the hash of the event before it) as its own."""
    if event.prev_hash != prev_hash:
        raise IntegrityError(f"event {event.seq} does not follow event {event.seq - 1} (its prev_hash names "
                             f"another event): the chain is broken; {_VERIFY}", where=where)


class ChainCursor:
    """The chain of one run as one reader knows it.

    Args:
        store: Backend holding the log.
        run_id: The run (already checked).
        seal_key: Key the head's seal must verify under (None: seals are not checked).
    """

    def __init__(self, store: Store, run_id: str, seal_key: bytes | None) -> None:
        self.store, self.run_id, self.seal_key = store, run_id, seal_key
        self._head: LogHead | None = None  # the state of the chain prefix this reader knows
        self._events: list[Event] = []  # events 0..n-1, read only when someone asks for all of them
        self._seen: dict[int, Event] = {}  # events read or written one by one

    def read(self, seq: int) -> Event | None:
        """Event ``seq`` from the store, or None when there is none (not cached: a probe)."""
        key = event_key(self.run_id, seq)
        try:
            data = self.store.get(key=key)
        except RecordNotFound:
            return None
        where = self.store.where(key)
        event = Event.from_bytes(data, where=where)
        _check_record(event, seq, self.run_id, where)
        return event

    def event_at(self, seq: int) -> Event:
        """Event ``seq``, which the state says exists; IntegrityError when it is gone."""
        event = self._events[seq] if seq < len(self._events) else self._seen.get(seq) or self.read(seq)
        if event is None:
            where = self.store.where(event_key(self.run_id, seq))
            raise IntegrityError(f"event {seq} is missing", where=where)
        self._seen[seq] = event
        return event

    def _open(self) -> LogHead:
        """The stored head, checked against the event it names; an empty state when there is none."""
        where = self.store.where(head_key(self.run_id))
        try:
            head = LogHead.from_bytes(self.store.get(key=head_key(self.run_id)), where=where)
        except RecordNotFound:
            return LogHead.empty(self.run_id)
        if head.run_id != self.run_id:
            raise IntegrityError(f"the head belongs to run {head.run_id!r}", where=where)
        if self.seal_key is not None and not head.seal_ok(self.seal_key):
            # Never seal a new head over one that does not verify: that would vouch for whatever is there.
            why = "has no seal (written without the key, or rewritten)" if head.mac is None else \
                "has a seal that does not verify under the configured key (rewritten, or another key)"
            raise IntegrityError(f"the head {why}; run `alas log verify`", where=where)
        if head.events:
            last = self.read(head.events - 1)
            if last is None or last.hash != head.hash:
                # Never append on top of a chain that lost its tail: the next head would erase the evidence.
                found = "is missing" if last is None else "has another hash"
                raise IntegrityError(f"the head names event {head.events - 1}, which {found}: the chain was "
                                     "truncated or rewritten; run `alas log verify`", where=where)
        return head

    def state(self) -> LogHead:
        """The state of the complete chain as of now: the head (opened once), then every later event."""
        if self._head is None:
            self._head = self._open()
        head = self._head
        while (event := self.read(head.events)) is not None:
            _check_link(event, head.hash, self.store.where(event_key(self.run_id, event.seq)))
            head.advance(event)
            self._keep(event)
        return head

    def known(self) -> LogHead:
        """The state as this reader knows it (opened once, not read forward): enough for facts that never
        change once true, such as where a version or the first event of a type is."""
        return self._head if self._head is not None else self.state()

    def events(self) -> list[Event]:
        """Every event of the run, in sequence order (a full read, cached)."""
        # The head is opened (and checked) first: a state folded from a chain that lost its tail must never
        # become the next head.
        head = self.state()
        while (event := self.read(len(self._events))) is not None:
            self._events.append(event)
        if len(self._events) < head.events:
            # A hole below the head: the events read so far are a prefix, not the run. Handing it out would
            # let a replay, a resume or `log show` judge the run by its first events without a word.
            seq = len(self._events)
            where = self.store.where(event_key(self.run_id, seq))
            raise IntegrityError(f"event {seq} is missing, but the head counts {head.events} events: the chain "
                                 "has a hole; run `alas log verify`", where=where)
        # Linked, each to the one before it (state() checked only the events after the head it opened).
        prev = GENESIS_HASH
        for event in self._events:
            _check_link(event, prev, self.store.where(event_key(self.run_id, event.seq)))
            prev = event.hash
        for event in self._events[head.events:]:
            head.advance(event)
        return list(self._events)

    def appended(self, event: Event) -> None:
        """Record an event this reader's own conditional create just placed after the state."""
        self.known().advance(event)
        self._keep(event)

    def _keep(self, event: Event) -> None:
        if len(self._events) == event.seq:
            self._events.append(event)
        self._seen[event.seq] = event
