"""Where a run's records live in a store (docs/execution-log.md), and what a run id may be.

::

    runs/<run_id>/head.json                        the state after the latest event (LogHead), overwritten
    runs/<run_id>/events/<seq:08d>.json           one sealed Event each, created only if absent
    runs/<run_id>/plans/v<version:04d>.json        compressed plan documents, immutable
    runs/<run_id>/idempotency/<sha256(key)>.json   first writer wins
"""

from __future__ import annotations

import hashlib
import re

from alas_argo.errors import InputError

__all__ = ["check_run_id", "event_key", "head_key", "idempotency_key", "is_run_id", "plan_key"]

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


def is_run_id(name: str) -> bool:
    """Whether ``name`` is a run id (what :func:`check_run_id` takes)."""
    return bool(_RUN_ID.match(name or ""))


def check_run_id(run_id: str) -> str:
    """Return ``run_id`` if it is usable as a key segment, else raise InputError."""
    if not is_run_id(run_id):
        raise InputError(f"invalid run id {run_id!r} (letters, digits, '.', '_', '-'; at most 128)",
                         where="run id")
    return run_id


def event_key(run_id: str, seq: int) -> str:
    """Store key of event ``seq`` of a run."""
    return f"runs/{run_id}/events/{seq:08d}.json"


def head_key(run_id: str) -> str:
    """Store key of a run's head (see :mod:`alas_argo.log.head`)."""
    return f"runs/{run_id}/head.json"


def plan_key(run_id: str, version: int) -> str:
    """Store key of plan ``version`` of a run."""
    return f"runs/{run_id}/plans/v{version:04d}.json"


def idempotency_key(run_id: str, key: str) -> str:
    """Store key of the idempotency record of ``key`` (hashed: keys are arbitrary strings)."""
    return f"runs/{run_id}/idempotency/{hashlib.sha256(key.encode()).hexdigest()}.json"
