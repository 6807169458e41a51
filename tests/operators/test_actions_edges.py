"""The cases of ``operator/actions.py`` that hand mutants found unasserted (mutmut 3.8.1 makes no mutant of the
module: it holds only class-level ``Field`` arguments, dataclass decorators, a constant and two properties).

What is pinned: which controller answers count as a committed repair (``ok``: every 2xx, no other) and which
are worth another attempt (``transient``: no answer, 408, 409, 425, 429 and every 5xx, not another 4xx); the
operator's default patience with a failing controller, seen through ``status_after_post`` (5 s first, doubling,
capped at 300 s, eight attempts); the bounds of the settings, so a value the API server or the retry loop
cannot use is refused when the operator starts; the defaults matching ``alas operator``'s flags; and that the
config and the actions are the frozen values the module says they are.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.bounds import MAX_WAIT_SECONDS
from alas_argo.cli import build_parser
from alas_argo.operator import OperatorConfig, Resource, status_after_post
from alas_argo.operator.actions import MAX_TTL, CreateWorkflow, PatchStatus, PostDisruption, PostOutcome


@pytest.mark.parametrize(("code", "ok"), [(199, False), (200, True), (201, True), (299, True), (300, False),
                                          (0, False), (409, False)])
def test_every_2xx_and_only_a_2xx_is_a_committed_repair(code: int, ok: bool) -> None:
    """200 (a replayed repair) and 201 (a new one) are both success; a 3xx is not a commit."""
    assert PostOutcome(code).ok is ok


@pytest.mark.parametrize(("code", "transient"), [(0, True), (408, True), (409, True), (425, True), (429, True),
                                                 (500, True), (503, True), (599, True), (400, False),
                                                 (401, False), (404, False), (422, False), (499, False),
                                                 (200, False)])
def test_a_retry_is_worth_it_only_for_no_answer_a_timeout_conflict_throttle_or_5xx(code: int,
                                                                                   transient: bool) -> None:
    """408 (request timeout) and 425 (too early) will pass later; 499 is a client's problem, 500 the server's."""
    assert PostOutcome(code).transient is transient


def failing(attempts_before: int) -> Resource:
    return Resource(name="d1", namespace="alas", uid="uid-d", generation=1,
                    spec={"run": "alas.ta01-g1", "time": 1, "events": []},
                    status={"observedGeneration": 1, "attempts": attempts_before} if attempts_before else {})


def test_the_default_patience_is_5s_doubling_capped_at_300s_for_eight_attempts() -> None:
    config = OperatorConfig()
    first = status_after_post(failing(0), PostOutcome(503, message="busy"), 1000.0, config)
    assert (first["phase"], first["nextAttemptAt"]) == ("Pending", 1005.0)
    seventh = status_after_post(failing(6), PostOutcome(503, message="busy"), 1000.0, config)
    assert (seventh["phase"], seventh["nextAttemptAt"]) == ("Pending", 1300.0)  # 5 * 2**6 = 320, capped
    eighth = status_after_post(failing(7), PostOutcome(503, message="busy"), 1000.0, config)
    assert (eighth["phase"], eighth["attempts"]) == ("Failed", 8)


def test_an_outcome_without_a_body_or_message_has_empty_ones() -> None:
    assert PostOutcome(0) == PostOutcome(0, {}, "")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("ttl_after_success", -1, "greater than or equal to 0"),
    ("ttl_after_failure", -1, "greater than or equal to 0"),
    ("ttl_after_success", MAX_TTL + 1, "less than or equal to 2147483647"),
    ("ttl_after_failure", MAX_TTL + 1, "less than or equal to 2147483647"),
    ("retry_base_seconds", 0, "greater than 0"),
    ("retry_max_seconds", 0, "greater than 0"),
    ("retry_base_seconds", MAX_WAIT_SECONDS + 1, "less than or equal to 31536000"),
    ("retry_max_seconds", MAX_WAIT_SECONDS + 1, "less than or equal to 31536000"),
    ("max_attempts", 0, "greater than or equal to 1"),
])
def test_a_setting_outside_its_bounds_is_refused(field: str, value: float, message: str) -> None:
    """A negative or beyond-int32 ttlStrategy would be refused by the API server on every Workflow; a zero delay
    would retry a failing controller on every pass; zero attempts would never post a Disruption's repair twice."""
    with pytest.raises(ValidationError, match=message):
        OperatorConfig.model_validate({field: value})


@pytest.mark.parametrize(("field", "value"), [
    ("ttl_after_success", 0), ("ttl_after_failure", 0), ("ttl_after_success", MAX_TTL),
    ("ttl_after_failure", MAX_TTL), ("retry_base_seconds", MAX_WAIT_SECONDS),
    ("retry_max_seconds", MAX_WAIT_SECONDS), ("max_attempts", 1),
])
def test_a_setting_at_its_bound_is_taken(field: str, value: float) -> None:
    assert getattr(OperatorConfig.model_validate({field: value}), field) == value


def test_the_defaults_are_those_of_alas_operator_without_flags() -> None:
    """An Operator built without a config (as tests and embedders do) submits and posts where the CLI would."""
    args = build_parser(["operator"]).parse_args(["operator"])
    config = OperatorConfig()
    for field in ("controller_url", "plan_template", "bench_template", "service_account", "pod_gc",
                  "ttl_after_success", "ttl_after_failure"):
        assert getattr(config, field) == getattr(args, field), field
    assert config.controller_url == "http://alas-controller:8080"


@pytest.mark.parametrize("value", [
    CreateWorkflow("alas", {}), PatchStatus("planruns", "alas", "p", {}),
    PostDisruption("alas", "d", "r", {}, "k"), PostOutcome(200),
])
def test_actions_are_frozen_values(value: Any) -> None:
    """The reconcile functions return them and the tests compare them: nothing may change one afterwards."""
    name = dataclasses.fields(value)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, name, "changed")


def test_the_config_is_frozen() -> None:
    with pytest.raises(ValidationError, match="frozen"):
        OperatorConfig().max_attempts = 3  # type: ignore[misc]
