"""Engine parity: what a run did, as the sequence of its domain events, comparable across engines.

A run's domain events (plans proposed, validations, commits, disruptions, repairs, retractions, compensations)
are the same on every engine for the same inputs; what may differ is plumbing and time: node and run events
(a pod per node on Argo, a thread locally), wall-clock seconds and the notes quoting them, and the
idempotency key of a commit (per run locally, per workflow object on a cluster), the workflow object
(``scope``) a cluster step names, and the idempotency record a local compensation names (``key``,
``record_hash``: locally a record keeps a compensation from running twice, on a cluster its events do).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["DOMAIN", "trace"]

DOMAIN = frozenset({"plan.proposed", "validation.passed", "validation.failed", "plan.committed", "plan.retracted",
                    "disruption.observed", "repair.started", "repair.finished", "compensation.started",
                    "compensation.finished", "recovery.escalated"})
_PLUMBING = frozenset({"seconds", "notes", "idempotency_key", "scope"})
_RECORD = frozenset({"key", "record_hash"})  # an event's own fields only, not a result's


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _scrub(v) for k, v in value.items() if k not in _PLUMBING}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def trace(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The domain events of a run in log order: type, node and payload without timings and engine plumbing."""
    return [{"type": e["type"], "node_id": e.get("node_id"),
             "payload": _scrub({k: v for k, v in (e.get("payload") or {}).items() if k not in _RECORD})}
            for e in events if e["type"] in DOMAIN]
