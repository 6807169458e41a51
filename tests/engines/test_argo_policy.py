"""A policy as Argo v3.6.5 reads it: the exact ``retryStrategy`` and deadline fields. The round trip restores
what a field loses from the policy annotation, so only these literal shapes see a misspelt or dropped field
that Argo would ignore (e.g. ``retryPolicy`` lost: Argo's default retries on every failure kind it knows,
``expression`` lost: exit 75 and deadlines are no longer what decides a retry)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from alas_argo.engines.argo_policy import deadline, retry_strategy
from alas_argo.ir import Backoff, Policy, Retry
from tests.workflows.argo_walker import Walker

GOLDENS = Path(__file__).resolve().parents[2] / "workflows" / "argo"

TRANSIENT = ("asInt(lastRetry.exitCode) == 75 || asInt(lastRetry.exitCode) == 143 || lastRetry.status == 'Error' || "
             "lastRetry.message contains 'deadline'")


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


@pytest.mark.parametrize("name", ["alas-plan", "alas-bench", "alas-repair"])
def test_a_step_pod_stopped_at_any_moment_is_retried(name: str) -> None:
    """A pod deleted, evicted or drained: `alas step` exits 75 when SIGTERM comes while it works, 143 (SIGTERM's
    default action) when it comes while Python is starting or exiting. A job-agent pod deleted as its step ended
    failed a cluster run on 143 before. Every shipped template that retries a transient failure retries both;
    not 137 (also the OOM killer's) nor the step's permanent codes. A pod gone before it reported an exit code
    (Argo's Error phase) is retried too."""
    path = GOLDENS / f"{name}.yaml"
    templates = yaml.safe_load(path.read_text(encoding="utf-8"))["spec"]["templates"]
    retrying = [t for t in templates if Walker.retryable((t.get("retryStrategy") or {}).get("expression"), 75)
                and "retryStrategy" in t]
    assert retrying, f"{path.name}: no template retries exit 75"
    for t in retrying:
        expression = t["retryStrategy"].get("expression")
        assert Walker.retryable(expression, 143), t["name"]
        assert "lastRetry.status == 'Error'" in {term.strip() for term in expression.split("||")}, t["name"]
        assert not any(Walker.retryable(expression, code) for code in (137, 1, 2)), t["name"]
