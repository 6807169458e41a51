"""A policy as Argo v3.6.5 reads it: the exact ``retryStrategy`` and deadline fields. The round trip restores
what a field loses from the policy annotation, so only these literal shapes see a misspelt or dropped field
that Argo would ignore (e.g. ``retryPolicy`` lost: Argo's default retries on every failure kind it knows,
``expression`` lost: exit 75 and deadlines are no longer what decides a retry)."""

from __future__ import annotations

import pytest

from alas_argo.engines.argo_policy import deadline, retry_strategy
from alas_argo.ir import Backoff, Policy, Retry

TRANSIENT = "asInt(lastRetry.exitCode) == 75 || lastRetry.status == 'Error' || lastRetry.message contains 'deadline'"


@pytest.mark.parametrize(("retry", "expected"), [
    # The shipped steps' policy (plan.py `_exp(3, 2, 30)`): the cap no delay reaches is not rendered.
    (Retry(max_attempts=3, backoff=Backoff(initial=2, factor=2, max=30)),
     {"limit": "2", "retryPolicy": "Always", "backoff": {"duration": "2s", "factor": 2}, "expression": TRANSIENT}),
    # A fractional factor is a string (Argo's IntOrString); '*' retries everything: no expression.
    (Retry(max_attempts=4, backoff=Backoff(initial=1.5, factor=1.5), retry_on=["*"]),
     {"limit": "3", "retryPolicy": "Always", "backoff": {"duration": "1.5s", "factor": "1.5"}}),
    # Fixed backoff is factor 1; a contract violation exits 2.
    (Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=3), retry_on=["ContractError"]),
     {"limit": "1", "retryPolicy": "Always", "backoff": {"duration": "3s", "factor": 1},
      "expression": "asInt(lastRetry.exitCode) == 2"}),
])
def test_retry_strategy_is_argos_own_fields(retry: Retry, expected: dict[str, object]) -> None:
    assert retry_strategy(Policy(retry=retry)) == expected


def test_one_attempt_renders_no_retry_strategy() -> None:
    assert retry_strategy(Policy(retry=Retry(max_attempts=1))) is None


def test_a_deadline_is_whole_seconds_or_a_duration() -> None:
    assert deadline(Policy(timeout=90)) == {"activeDeadlineSeconds": 90}
    assert deadline(Policy(timeout=0.5)) == {"timeout": "0.5s"}
    assert deadline(Policy()) == {}
