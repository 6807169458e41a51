"""Idempotency records of a run: the first writer of a key wins, every later writer reads the winner.

A record is created with the store's create-only-if-absent put, so two processes finishing the same
idempotent node at once agree on one result without a lock; the record keeps the key in clear next to the
result, so an operator can see what it was for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from alas_argo.errors import IntegrityError
from alas_argo.log.event import canonical_json
from alas_argo.log.layout import idempotency_key
from alas_argo.log.store import RecordNotFound, Store

__all__ = ["IdempotencyRecords"]


class IdempotencyRecords:
    """The idempotency records of one run.

    Args:
        store: Backend holding the log.
        run_id: The run (already checked).
        clock: Source of the records' creation time.
    """

    def __init__(self, store: Store, run_id: str, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.run_id = run_id
        self._clock = clock

    def get(self, key: str) -> dict[str, Any] | None:
        """The result recorded under ``key``, or None.

        Raises:
            IntegrityError: The record exists but is not readable.
        """
        where = idempotency_key(self.run_id, key)
        try:
            record = json.loads(self.store.get(key=where))
            result: dict[str, Any] = record["result"]
        except RecordNotFound:
            return None
        except (ValueError, KeyError, TypeError) as e:
            raise IntegrityError(f"unreadable idempotency record for {key!r}: {e}",
                                 where=f"{self.store.location}/{where}") from None
        return result

    def put(self, key: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """Record ``result`` under ``key`` unless a result is there already; return the winning result."""
        doc = json.loads(canonical_json(dict(result)))
        record = {"key": key, "run_id": self.run_id, "result": doc,
                  "created": self._clock().astimezone(UTC).isoformat()}
        if self.store.put_if_absent(key=idempotency_key(self.run_id, key), data=canonical_json(record)):
            winner: dict[str, Any] = doc
            return winner
        existing = self.get(key)
        return existing if existing is not None else doc
