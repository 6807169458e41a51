"""A node's policy as Argo says it on the node's container templates: ``retryStrategy`` (attempts, backoff,
the exit codes it retries) and the deadline (``activeDeadlineSeconds``, or ``timeout`` for fractions)."""

from __future__ import annotations

from typing import Any

from alas_argo.engines import argo_names as nm
from alas_argo.ir import BackoffKind, Policy

__all__ = ["deadline", "retry_strategy"]


def retry_strategy(policy: Policy) -> dict[str, Any] | None:
    """The ``retryStrategy`` of ``policy.retry``, or None for a single attempt."""
    r = policy.retry
    if r.max_attempts <= 1:
        return None
    factor = 1.0 if r.backoff.kind is not BackoffKind.EXPONENTIAL else r.backoff.factor
    backoff: dict[str, Any] = {"duration": nm.format_duration(r.backoff.initial),
                               "factor": int(factor) if float(factor).is_integer() else str(factor)}
    # No cap: Argo v3.6.5's Backoff has duration, factor and maxDuration only (`cap` arrived in v3.7; the
    # v3.6.5 controller drops it and its CLI refuses it). A cap no delay reaches changes nothing; one a delay
    # would reach is refused before rendering (conformance row `backoff_max_binding`).
    retry_policy, expression = nm.retry_expression(r.retry_on)
    out: dict[str, Any] = {"limit": str(r.max_attempts - 1), "retryPolicy": retry_policy, "backoff": backoff}
    if expression is not None:
        out["expression"] = expression
    return out


def deadline(policy: Policy) -> dict[str, Any]:
    """The template fields of ``policy.timeout``: whole seconds as ``activeDeadlineSeconds``, else ``timeout``."""
    if policy.timeout is None:
        return {}
    if float(policy.timeout).is_integer():
        return {"activeDeadlineSeconds": int(policy.timeout)}
    return {"timeout": nm.format_duration(policy.timeout)}
