"""A policy as Step Functions reads it: the exact ``Retry`` rule of a Task state. The round trip restores what a
field loses from the state's Comment, so only these literal shapes see a misspelt or dropped field that ASL would
refuse or read otherwise (``MaxAttempts`` lost: 3 retries by ASL's default; ``States.ALL`` misspelt: an error name
nothing raises; a jitter strategy not in ASL's two)."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.engines.asl import to_asl
from alas_argo.ir import Backoff, Node, Policy, Retry
from tests.engines.samples import with_node


def _rules(retry: Retry) -> Any:
    return to_asl(with_node(Node(id="work", role="solver"), policy=Policy(retry=retry)))["States"]["work"].get("Retry")


@pytest.mark.parametrize(("retry", "expected"), [
    # The shipped steps' policy (plan.py `_exp(3, 2, 30)`).
    (Retry(max_attempts=3, backoff=Backoff(initial=2, factor=2, max=30)),
     [{"ErrorEquals": ["TransientError", "States.Timeout"], "IntervalSeconds": 2, "MaxAttempts": 2,
       "BackoffRate": 2.0, "MaxDelaySeconds": 30, "JitterStrategy": "NONE"}]),
    # '*' is States.ALL; ASL's whole seconds, at least 1, for sub-second delays and caps; full jitter.
    (Retry(max_attempts=4, backoff=Backoff(initial=0.4, factor=1.5, max=0.3, jitter=1.0), retry_on=["*"]),
     [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 1, "MaxAttempts": 3, "BackoffRate": 1.5,
       "MaxDelaySeconds": 1, "JitterStrategy": "FULL"}]),
    # States.ALL must stand alone in ErrorEquals: '*' among other names is States.ALL only.
    (Retry(max_attempts=2, backoff=Backoff(initial=1), retry_on=["ContractError", "*"]),
     [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 1, "MaxAttempts": 1, "BackoffRate": 2.0,
       "JitterStrategy": "NONE"}]),
    # Fixed backoff is rate 1.0; no cap, no MaxDelaySeconds.
    (Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=3), retry_on=["ContractError"]),
     [{"ErrorEquals": ["ContractError"], "IntervalSeconds": 3, "MaxAttempts": 1, "BackoffRate": 1.0,
       "JitterStrategy": "NONE"}]),
])
def test_retry_rule_is_asls_own_fields(retry: Retry, expected: list[dict[str, Any]]) -> None:
    assert _rules(retry) == expected


def test_one_attempt_has_no_retry_rule() -> None:
    assert _rules(Retry(max_attempts=1)) is None
