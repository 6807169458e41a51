"""Idempotency records of a run: the first writer of a key wins, every later writer reads the winner.

A record is created with the store's create-only-if-absent put, so two processes finishing the same
idempotent node at once agree on one result without a lock; the record keeps the key in clear next to the
result, so an operator can see what it was for. Each record carries its own ``hash`` (SHA-256 of its
canonical JSON without ``hash`` and ``mac``) and, when the store has a key, a keyed seal ``mac`` of that
hash, so that verify detects an edited record; an event that relies on a record (a step's
``node.succeeded``) names the record's hash, which ties the record into the hash chain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from alas_argo import json_limits
from alas_argo.errors import IntegrityError
from alas_argo.log.event import canonical_json
from alas_argo.log.layout import idempotency_key
from alas_argo.log.sealing import SealKind, seal, seal_matches
from alas_argo.log.store import RecordNotFound, Store
from alas_argo.scrubbing import scrub

__all__ = ["IdempotencyRecords", "record_hash", "record_seal_ok"]


def record_hash(record: Mapping[str, Any]) -> str:
    """The hash of a record: SHA-256 over its canonical JSON without ``hash`` and ``mac``."""
    body = {k: v for k, v in record.items() if k not in ("hash", "mac")}
    return "sha256:" + hashlib.sha256(canonical_json(body)).hexdigest()


def record_seal_ok(record: Mapping[str, Any], key: bytes) -> bool:
    """Whether the record's ``mac`` is the seal of its ``hash`` under ``key``."""
    return seal_matches(key, SealKind.RECORD, str(record.get("hash", "")).encode(), record.get("mac"))


class IdempotencyRecords:
    """The idempotency records of one run.

    Args:
        store: Backend holding the log.
        run_id: The run (already checked).
        clock: Source of the records' creation time.
        seal_key: Key of the records' seals (None: hash only).
    """

    def __init__(self, store: Store, run_id: str, clock: Callable[[], datetime],
                 seal_key: bytes | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self._clock = clock
        self._seal_key = seal_key

    def record(self, key: str) -> dict[str, Any] | None:
        """The whole record stored under ``key`` (result, hash, creation time), or None.

        Raises:
            IntegrityError: The record exists but is not readable.
        """
        where = idempotency_key(self.run_id, key)
        try:
            record = json_limits.loads(self.store.get(key=where))
            if not isinstance(record, dict) or not isinstance(record["result"], dict):
                raise TypeError("not a record")
        except RecordNotFound:
            return None
        except (ValueError, KeyError, TypeError) as e:
            raise IntegrityError(f"unreadable idempotency record for {key!r}: {e}",
                                 where=self.store.where(where)) from None
        # A record edited in place, or copied from another key or run, would hand a resumed step a result that
        # step never had (`alas log verify` reports every such record; a reader refuses the first it meets). A
        # record without a hash was written before records were hashed: read as it is, as verify reads it.
        if record.get("key") != key or record.get("run_id") != self.run_id or (
                "hash" in record and record_hash(record) != record["hash"]):
            raise IntegrityError(f"the idempotency record for {key!r} is not the one written for it (edited, or "
                                 "copied from another key or run); run `alas log verify`",
                                 where=self.store.where(where))
        return record

    def get(self, key: str) -> dict[str, Any] | None:
        """The result recorded under ``key``, or None.

        Raises:
            IntegrityError: The record exists but is not readable.
        """
        record = self.record(key)
        return None if record is None else dict(record["result"])

    def claim(self, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """Record ``result`` under ``key`` unless a record is there already; return the winning record."""
        doc = scrub(json.loads(canonical_json(dict(result))))  # no configured secret reaches the store
        record: dict[str, Any] = {"key": key, "run_id": self.run_id, "result": doc,
                                  "created": self._clock().astimezone(UTC).isoformat()}
        record["hash"] = record_hash(record)
        if self._seal_key is not None:
            record["mac"] = seal(self._seal_key, SealKind.RECORD, record["hash"].encode())
        if self.store.put_if_absent(key=idempotency_key(self.run_id, key), data=canonical_json(record)):
            return record
        existing = self.record(key)
        return existing if existing is not None else record

    def put(self, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """Record ``result`` under ``key`` unless a result is there already; return the winning result."""
        return dict(self.claim(key, result)["result"])
