"""Keyed seals (HMAC-SHA256) over the log's records, for runs whose store is configured with a key.

A plain SHA-256 hash chain proves only that the records agree with each other: whoever can write to the
store can edit a record and recompute every hash after it. A seal is an HMAC under a secret key
(``ALAS_STORE__LOG_KEY``, from a Kubernetes Secret in the chart): without the key nobody can produce a seal
that verifies, so re-sealing after an edit is detected. Each kind of record is sealed under its own label
(domain separation), so a seal lifted from one kind of record never verifies on another.
"""

from __future__ import annotations

import hashlib
import hmac
from enum import StrEnum

__all__ = ["SealKind", "seal", "seal_matches"]

_PREFIX = "hmac-sha256:"


class SealKind(StrEnum):
    """What a seal is over: the label mixed into the HMAC."""

    EVENT = "alas-event"
    HEAD = "alas-head"
    RECORD = "alas-record"


def seal(key: bytes, kind: SealKind, message: bytes) -> str:
    """The seal of ``message`` (an event's hash, a head's canonical bytes, a record's hash) under ``key``."""
    digest = hmac.new(key, kind.value.encode() + b"\0" + message, hashlib.sha256).hexdigest()
    return _PREFIX + digest


def seal_matches(key: bytes, kind: SealKind, message: bytes, given: str | None) -> bool:
    """Whether ``given`` is the seal of ``message`` under ``key`` (constant-time comparison)."""
    return given is not None and hmac.compare_digest(seal(key, kind, message), given)
