"""The head of a run: the log's state folded up to one event, stored next to the events as ``head.json``.

One object serves two purposes (docs/execution-log.md):

- **Opening a run costs a bounded number of requests.** A reader fetches the head (the state after event
  ``events - 1``: current plan version, every committed version and where its plan lives, the idempotency
  keys of commits, the first and latest event of each type), checks that the event it names is there with
  that hash, and reads forward from there until the first missing sequence number. The state is the pure
  fold of the events (:meth:`LogHead.advance`), so a head and the chain can always be compared.
- **Anchoring the chain.** The head names the last event's sequence number and hash, so events removed from
  the tail of the chain are detected (the head names an event that is gone), and, when the store has a key,
  the head carries a keyed seal, so a re-sealed chain or a rewritten head is detected too.

The writer that created event ``n`` (its create-only-if-absent put won, so it knew every earlier event)
writes the head for ``n`` right after. Heads are overwritten with a plain atomic put: two writers finishing
at once may leave the older of their two heads in place, so the head can trail the chain by the appends in
flight, never lead it. A trailing head costs a reader a few more reads and leaves those few trailing events
unanchored until the next append; it never makes a reader wrong, because the events after it are read too.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from alas_argo.errors import IntegrityError, first_error
from alas_argo.log.event import GENESIS_HASH, Event, canonical_json
from alas_argo.log.events import EventType
from alas_argo.log.sealing import SealKind, seal, seal_matches

__all__ = ["HEAD_FORMAT", "LogHead", "VersionRef"]

HEAD_FORMAT = "alas-head/1"


class VersionRef(BaseModel):
    """Where one committed plan version is recorded and stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(ge=1, description="The plan version number.")
    seq: int = Field(ge=0, description="Sequence number of its `plan.committed` event.")
    key: str = Field(description="Store key of the plan object.")
    plan_hash: str = Field(description="sha256 of the plan document, as the commit recorded it.")
    observed: int | None = Field(None, description="Sequence number of the latest `disruption.observed` event "
                                                   "before the commit (the disruption it was made under).")


class LogHead(BaseModel):
    """The state of a run's log after its first ``events`` events (mutable: a log folds events into it)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    format: Literal["alas-head/1"] = Field("alas-head/1", description="Format tag of the stored head.")
    run_id: str = Field(description="The run.")
    events: int = Field(0, ge=0, description="Events folded in: the head describes events 0..events-1.")
    hash: str = Field(GENESIS_HASH, description="Hash of event events-1 (GENESIS_HASH for an empty run).")
    last_timestamp: str | None = Field(None, description="Timestamp of event events-1.")
    current: int | None = Field(None, description="The plan version in force (None: none, or all retracted).")
    versions: list[VersionRef] = Field(default_factory=list, description="Committed versions, in chain order.")
    retracted: dict[int, int] = Field(default_factory=dict,
                                      description="Retracted version -> sequence number of its retraction.")
    commit_keys: dict[str, int] = Field(default_factory=dict,
                                        description="Idempotency key of a commit -> the version it committed.")
    first: dict[str, int] = Field(default_factory=dict, description="Event type -> sequence number of its first.")
    last: dict[str, int] = Field(default_factory=dict, description="Event type -> sequence number of its latest.")
    mac: str | None = Field(None, description="Keyed seal of every other field, when the store has a key.")

    # -- the fold -----------------------------------------------------------------------------------------

    def advance(self, event: Event) -> None:
        """Fold ``event`` (which must be event number ``events``) into the state."""
        self.events, self.hash, self.last_timestamp = event.seq + 1, event.hash, event.timestamp
        etype = event.type.value
        self.first.setdefault(etype, event.seq)
        self.last[etype] = event.seq
        p = event.payload
        if event.type is EventType.PLAN_COMMITTED:
            # A hand-written commit event may name no number: it folds as no version (verify reports it).
            raw = p.get("version", 0)
            version = raw if isinstance(raw, int) and not isinstance(raw, bool) else 0
            if version >= 1 and self.ref(version) is None:  # a duplicate number is verify's to report
                self.versions.append(VersionRef(
                    version=version, seq=event.seq, key=str(p.get("key", "")), plan_hash=str(p.get("plan_hash", "")),
                    observed=self.last.get(EventType.DISRUPTION_OBSERVED.value)))
            if isinstance(p.get("idempotency_key"), str):
                self.commit_keys.setdefault(p["idempotency_key"], version)
        elif event.type is EventType.PLAN_RETRACTED and isinstance(p.get("version"), int):
            # Only a version committed earlier in the chain can be withdrawn: a retraction of any other number
            # (appended raw or written by hand; ExecutionLog.retract refuses it) folds as nothing, so
            # retracted() never lists a version that does not exist, and verify reports it (bad_retraction).
            if self.ref(int(p["version"])) is not None:
                self.retracted.setdefault(int(p["version"]), event.seq)
        else:
            return
        # The version in force: the latest committed (in chain order) that is not retracted.
        live = [r.version for r in self.versions if r.version not in self.retracted]
        self.current = live[-1] if live else None

    def ref(self, version: int) -> VersionRef | None:
        """Where ``version`` is recorded, or None when it was never committed."""
        for r in self.versions:
            if r.version == version:
                return r
        return None

    @property
    def max_version(self) -> int:
        """The highest version number committed (0 before the first commit)."""
        return max((r.version for r in self.versions), default=0)

    @classmethod
    def empty(cls, run_id: str) -> LogHead:
        """The state of a run with no events."""
        return cls(run_id=run_id)

    @classmethod
    def fold(cls, run_id: str, events: list[Event]) -> LogHead:
        """The state after ``events`` (a complete prefix of the chain, in order)."""
        head = cls.empty(run_id)
        for event in events:
            head.advance(event)
        return head

    # -- the stored form ----------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Every field but ``mac``, as JSON: what the seal covers and what verify compares."""
        return self.model_dump(mode="json", exclude={"mac"})

    def to_bytes(self, key: bytes | None) -> bytes:
        """The stored form, sealed under ``key`` when one is given."""
        doc = self.state()
        if key is not None:
            doc["mac"] = seal(key, SealKind.HEAD, canonical_json(doc))
        return canonical_json(doc)

    def seal_ok(self, key: bytes) -> bool:
        """Whether ``mac`` is this head's seal under ``key``."""
        return seal_matches(key, SealKind.HEAD, canonical_json(self.state()), self.mac)

    @classmethod
    def from_bytes(cls, data: bytes, *, where: str) -> LogHead:
        """Parse a stored head.

        Raises:
            IntegrityError: The bytes are not a head (naming ``where``).
        """
        try:
            return cls.model_validate_json(data)
        except ValidationError as e:
            loc, msg = first_error(e, "head")
            raise IntegrityError(f"unreadable head: {loc}: {msg}", where=where) from None
