"""Backoff delays: fixed, linear and exponential growth, a cap, and seeded jitter."""

from __future__ import annotations

import random

from alas_argo.ir.policy import Backoff, BackoffKind

__all__ = ["base_delay", "delay"]


def base_delay(backoff: Backoff, failures: int) -> float:
    """The delay after ``failures`` failed attempts (>= 1), before jitter, capped at ``backoff.max``."""
    if failures < 1:
        raise ValueError("failures must be >= 1")
    if backoff.kind is BackoffKind.FIXED:
        d = backoff.initial
    elif backoff.kind is BackoffKind.LINEAR:
        d = backoff.initial * failures
    else:
        d = backoff.initial * backoff.factor ** (failures - 1)
    return min(d, backoff.max) if backoff.max is not None else d


def delay(backoff: Backoff, failures: int, rng: random.Random | None = None) -> float:
    """The delay to wait: the base delay, minus up to ``jitter`` of it drawn from ``rng``.

    Jitter only ever shortens a delay, so the cap holds with and without it (ASL's FULL jitter draws
    from ``[0, d]`` as j = 1 does here).
    """
    d = base_delay(backoff, failures)
    if backoff.jitter > 0:
        rng = rng or random.Random()
        d *= 1.0 - backoff.jitter * rng.random()
    return d
