"""Execution policies (alas_argo.ir.policy) at the edges hand mutation testing found unpinned: every bound of a
policy value, taken at its limit and refused one step past it with a schema problem naming the field, and an
error name caught twice wherever the second catch stands."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.bounds import MAX_WAIT_SECONDS
from alas_argo.ir import Policy, parse_workflow


def _problems(policy: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    doc = {"name": "w", "nodes": [{"id": "a", "role": "r", "policyRef": "p"}, {"id": "h", "role": "r"}],
           "policies": {"p": policy}}
    return [(p.code, p.node, p.message) for p in parse_workflow(doc)[1]]


def _backoff(**fields: float) -> dict[str, Any]:
    return {"retry": {"backoff": fields}}


# (the policy at a bound, the policy one step past it, the problem that names the field).
BOUNDS: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    "maxAttempts": ({"retry": {"maxAttempts": 1}}, {"retry": {"maxAttempts": 0}},
                    "retry.maxAttempts: Input should be greater than or equal to 1"),
    "initial": (_backoff(initial=0), _backoff(initial=-0.001),
                "retry.backoff.initial: Input should be greater than or equal to 0"),
    "max": (_backoff(max=0), _backoff(max=-0.001), "retry.backoff.max: Input should be greater than or equal to 0"),
    "factor": (_backoff(factor=1), _backoff(factor=0.999),
               "retry.backoff.factor: Input should be greater than or equal to 1"),
    "jitter, low": (_backoff(jitter=0), _backoff(jitter=-0.001),
                    "retry.backoff.jitter: Input should be greater than or equal to 0"),
    "jitter, high": (_backoff(jitter=1), _backoff(jitter=1.001),
                     "retry.backoff.jitter: Input should be less than or equal to 1"),
    "timeout": ({"timeout": 0.001}, {"timeout": 0}, "timeout: Input should be greater than 0"),
    "maxIters": ({"loopGuard": {"maxIters": 1}}, {"loopGuard": {"maxIters": 0}},
                 "loopGuard.maxIters: Input should be greater than or equal to 1"),
    "deadline": ({"loopGuard": {"maxIters": 1, "deadline": 0.001}}, {"loopGuard": {"maxIters": 1, "deadline": 0}},
                 "loopGuard.deadline: Input should be greater than 0"),
    "a year's wait": ({"timeout": MAX_WAIT_SECONDS}, {"timeout": MAX_WAIT_SECONDS + 0.001},
                      "timeout: Input should be less than or equal to 31536000"),
    "catch errors": ({"catch": [{"errors": ["*"], "next": "h"}]}, {"catch": [{"errors": [], "next": "h"}]},
                     "catch.0.errors: List should have at least 1 item after validation, not 0"),
    "catch next": ({"catch": [{"errors": ["*"], "next": "h"}]}, {"catch": [{"errors": ["*"], "next": ""}]},
                   "catch.0.next: String should have at least 1 character"),
    "idempotency key": ({"idempotency": {"key": "k"}}, {"idempotency": {"key": ""}},
                        "idempotency.key: String should have at least 1 character"),
}


@pytest.mark.parametrize(("at", "past", "message"), BOUNDS.values(), ids=BOUNDS.keys())
def test_a_policy_value_is_taken_at_its_bound_and_refused_past_it_naming_the_field(
        at: dict[str, Any], past: dict[str, Any], message: str) -> None:
    assert _problems(at) == []
    assert _problems(past) == [("schema", None, f"policies.p.{message}")]


@pytest.mark.parametrize("catch", [
    [{"errors": ["X", "X"], "next": "h"}],  # twice in one route
    [{"errors": ["Y"], "next": "h"}, {"errors": ["Z"], "next": "h"}, {"errors": ["W", "X"], "next": "h"},
     {"errors": ["X"], "next": "h"}],  # past the first route, behind another name
], ids=["one route", "a later route"])
def test_an_error_caught_twice_is_refused_wherever_the_second_catch_stands(catch: list[dict[str, Any]]) -> None:
    assert _problems({"catch": catch}) == [("schema", None, "policies.p: error 'X' is caught twice")]


def test_distinct_error_names_over_several_routes_are_taken_in_order() -> None:
    policy = Policy.model_validate({"catch": [{"errors": ["A", "B"], "next": "h"}, {"errors": ["C", "*"],
                                                                                    "next": "a"}]})
    assert [(c.errors, c.next) for c in policy.catch] == [(["A", "B"], "h"), (["C", "*"], "a")]
