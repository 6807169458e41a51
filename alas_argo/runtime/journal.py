"""Where the runtime writes what happens: the Journal protocol and its in-memory implementation.

The execution log (``alas_argo.log``) implements the same protocol durably; the runtime never knows which
one it has. Event types come from the closed taxonomy :class:`~alas_argo.log.events.EventType`.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from alas_argo.errors import ContractError
from alas_argo.log.events import EventType

__all__ = ["Journal", "MemoryJournal"]


@runtime_checkable
class Journal(Protocol):
    """Append-only record of a run plus the idempotency records."""

    def record(self, type: EventType | str, *, node_id: str | None = None, attempt: int | None = None,
               payload: dict[str, Any] | None = None, redact: Sequence[str] = ()) -> None:
        """Append one event."""
        ...

    def get_idempotent(self, key: str) -> dict[str, Any] | None:
        """The result recorded under ``key``, or None."""
        ...

    def find_idempotent(self, key: str) -> tuple[dict[str, Any], str | None] | None:
        """The result recorded under ``key`` with its record's hash (None where records have no hash), or None:
        one read for a node that finds its output recorded and names the record in its success event."""
        ...

    def put_idempotent(self, key: str, result: dict[str, Any]) -> str | None:
        """Record ``result`` under ``key`` (first writer wins); the winning record's hash, where records have one
        (the node's success event names it, so verify detects the record deleted or replaced)."""
        ...


class MemoryJournal:
    """A thread-safe in-memory journal: the default, and what tests inspect."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[dict[str, Any]] = []
        self.idempotency: dict[str, dict[str, Any]] = {}

    def record(self, type: EventType | str, *, node_id: str | None = None, attempt: int | None = None,
               payload: dict[str, Any] | None = None, redact: Sequence[str] = ()) -> None:
        """Append one event; a type outside the taxonomy is a ContractError."""
        try:
            etype = EventType(type)
        except ValueError:
            raise ContractError(f"unknown event type {type!r}", where="journal") from None
        with self._lock:
            self.events.append({"seq": len(self.events), "time": time.time(), "type": str(etype),
                                "node_id": node_id, "attempt": attempt, "payload": dict(payload or {}),
                                "redact": list(redact)})

    def get_idempotent(self, key: str) -> dict[str, Any] | None:
        """A copy of the result recorded under ``key``."""
        with self._lock:
            found = self.idempotency.get(key)
            return copy.deepcopy(found) if found is not None else None

    def find_idempotent(self, key: str) -> tuple[dict[str, Any], str | None] | None:
        """A copy of the result recorded under ``key``, and None for its hash (records here have none)."""
        found = self.get_idempotent(key)
        return None if found is None else (found, None)

    def put_idempotent(self, key: str, result: dict[str, Any]) -> str | None:
        """Record a copy of ``result`` unless ``key`` already has one; None (records here have no hash)."""
        with self._lock:
            self.idempotency.setdefault(key, copy.deepcopy(result))
        return None

    def types(self, node_id: str | None = None) -> list[str]:
        """Event types in order, optionally only those of one node (handy in tests)."""
        with self._lock:
            return [e["type"] for e in self.events if node_id is None or e["node_id"] == node_id]
