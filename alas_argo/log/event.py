"""One record of the execution log, its canonical bytes and its place in the hash chain.

An event's ``hash`` is the SHA-256 of the canonical JSON (sorted keys, no whitespace, UTF-8) of every other
field but ``mac``, ``prev_hash`` included; so editing any stored byte of any event, or removing one, breaks
the chain at a place :func:`alas_argo.log.verification.verify_log` can name. When the store has a key, the
event also carries ``mac``, a keyed seal of its hash (:mod:`alas_argo.log.sealing`), so that an edited and
re-hashed event is detected too. Events without a key are stored without the field, byte for byte as before
the field existed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from alas_argo.errors import ContractError, IntegrityError, first_error
from alas_argo.log.events import EventType
from alas_argo.log.sealing import SealKind, seal, seal_matches
from alas_argo.scrubbing import scrub

__all__ = ["GENESIS_HASH", "Event", "canonical_json", "event_hash", "seal_event"]

#: ``prev_hash`` of the first event of a run.
GENESIS_HASH = "sha256:" + "0" * 64


def canonical_json(doc: Any) -> bytes:
    """The one byte form hashes are computed over: sorted keys, no whitespace, UTF-8, no NaN.

    Raises:
        ContractError: ``doc`` holds something JSON cannot represent exactly (NaN, a set, an object).
    """
    try:
        return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise ContractError(f"not representable as canonical JSON: {e}", where="log payload") from None


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Event(BaseModel):
    """A sealed log record (docs/execution-log.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seq: int = Field(ge=0, description="Position in the run's log, from 0, without gaps.")
    timestamp: str = Field(description="UTC time of the append, ISO 8601 with microseconds.")
    run_id: str = Field(description="The run this event belongs to.")
    correlation_id: str | None = Field(None, description="Ties events of one request or saga together.")
    node_id: str | None = Field(None, description="IR node that produced the event, if any.")
    attempt: int | None = Field(None, ge=0, description="Attempt number of that node, from 1.")
    type: EventType = Field(description="Event type, from the closed taxonomy.")
    payload: dict[str, Any] = Field(default_factory=dict, description="Type-specific data (redacted).")
    redact: list[str] = Field(default_factory=list, description="Dotted payload paths that were redacted.")
    prev_hash: str = Field(description="`hash` of the previous event, or GENESIS_HASH for seq 0.")
    hash: str = Field(description="sha256 over the canonical JSON of all other fields but `mac`.")
    mac: str | None = Field(None, description="Keyed seal of `hash` (HMAC-SHA256), when the store has a key.")

    def body(self) -> dict[str, Any]:
        """Every field but ``hash`` and ``mac``, as JSON: what the hash covers."""
        return self.model_dump(mode="json", exclude={"hash", "mac"})

    def to_json(self) -> dict[str, Any]:
        """The event as JSON (``mac`` only when there is one, as in the stored form)."""
        return self.model_dump(mode="json", exclude={"mac"} if self.mac is None else None)

    def to_bytes(self) -> bytes:
        """The stored form (canonical JSON, so the stored bytes re-hash to the same value)."""
        return canonical_json(self.to_json())

    def sealed_with(self, key: bytes | None) -> Event:
        """This event with its keyed seal (unchanged without a key)."""
        if key is None:
            return self
        return self.model_copy(update={"mac": seal(key, SealKind.EVENT, self.hash.encode())})

    def seal_ok(self, key: bytes) -> bool:
        """Whether ``mac`` is this event's seal under ``key``."""
        return seal_matches(key, SealKind.EVENT, self.hash.encode(), self.mac)

    @classmethod
    def from_bytes(cls, data: bytes, *, where: str) -> Event:
        """Parse a stored event.

        Raises:
            IntegrityError: The bytes are not a well-formed event (naming ``where``).
        """
        try:
            return cls.model_validate_json(data)
        except ValidationError as e:
            loc, msg = first_error(e, "event")
            raise IntegrityError(f"unreadable event: {loc}: {msg}", where=where) from None


def event_hash(body: dict[str, Any]) -> str:
    """The hash of an event body (all fields but ``hash``)."""
    return _sha256(canonical_json(body))


def seal_event(**fields: Any) -> Event:
    """Build an event from its fields (all but ``hash``) and compute its hash.

    The payload is normalised through JSON first (tuples become lists, keys become strings), so that the
    hash computed now equals the hash recomputed from the stored bytes later.
    """
    # Configured secrets are scrubbed before the hash is taken: the stored event never holds one, and the
    # chain still verifies (alas_argo.scrubbing).
    fields["payload"] = scrub(json.loads(canonical_json(fields.get("payload") or {})))
    draft = Event.model_validate({**fields, "hash": "", "mac": None})
    return draft.model_copy(update={"hash": event_hash(draft.body())})
