"""The human fallback read from a run's log (alas_argo/pipeline/handoff.py), edge by edge: only a revalidation
node (`check_*`, `recheck_*`) hands over; the reason counts the violations of the last plan that node checked,
by code in code order; the best plan is the version in force when there is one, else the checked plan with the
fewest violations (the latest of equals, any node's, events without a plan ignored), else none.

Mutation testing (bench/README.md, fifteenth session) found these read by no test: the pipeline tests hand
over with one shape of log and compare with this function's own answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline.handoff import handoff


def _plan(makespan: int) -> dict[str, Any]:
    return {"instance": "x", "makespan": makespan, "operations": []}


def _check(log: ExecutionLog, node: str, codes: list[str], *, makespan: int, iteration: int | None = None,
           passed: bool = False) -> None:
    payload: dict[str, Any] = {"plan": _plan(makespan),
                               "report": {"violations": [{"code": c, "message": c} for c in codes]}}
    if iteration is not None:
        payload["iteration"] = iteration
    log.append(EventType.VALIDATION_PASSED if passed else EventType.VALIDATION_FAILED, node_id=node,
               payload=payload)


@pytest.fixture
def log(tmp_path: Path) -> ExecutionLog:
    return ExecutionLog(FsStore(tmp_path / "store"), "r")


@pytest.mark.parametrize("node", [None, "optimize", "validate_plan", "my_check_plan"])
def test_only_a_revalidation_node_hands_over(log: ExecutionLog, node: str | None) -> None:
    _check(log, "check_plan", ["precedence"], makespan=10)
    assert handoff(log, node) is None


def test_the_reason_counts_the_last_checked_plans_violations_by_code_in_code_order(log: ExecutionLog) -> None:
    _check(log, "check_plan", ["overlap"] * 5, makespan=9)  # an earlier check of the same node
    _check(log, "recheck_repair", ["overlap"], makespan=8)  # another node's
    _check(log, "check_plan", ["precedence", "overlap", "precedence"], makespan=10)
    doc = handoff(log, "check_plan")
    assert doc is not None and doc["node"] == "check_plan"
    assert doc["reason"] == ("check_plan gave up: the plan still had 3 violation(s) (overlap 1, precedence 2) "
                             "when its loop guard tripped")


def test_a_recheck_node_hands_over_and_a_node_with_no_check_had_no_violations(log: ExecutionLog) -> None:
    doc = handoff(log, "recheck_repair")
    assert doc == {"node": "recheck_repair",
                   "reason": "recheck_repair gave up: the plan still had 0 violation(s) () when its loop guard "
                             "tripped",
                   "best": {"source": "none", "violations": None, "plan": None}}


def test_the_best_plan_is_the_checked_one_with_fewest_violations_the_latest_of_equals(log: ExecutionLog) -> None:
    _check(log, "check_plan", ["a", "b"], makespan=10, iteration=0)
    _check(log, "check_plan", ["a"], makespan=11, iteration=1)
    _check(log, "check_feedback", ["b"], makespan=12, iteration=2)  # as few, later: this one
    _check(log, "check_plan", ["a", "b", "c"], makespan=13, iteration=3)
    doc = handoff(log, "check_plan")
    assert doc is not None
    assert doc["best"] == {"source": "the plan check_feedback checked (iteration 2)", "violations": 1,
                           "plan": _plan(12)}


def test_a_check_without_an_iteration_is_iteration_0_and_events_without_a_plan_do_not_count(
        log: ExecutionLog) -> None:
    _check(log, "check_plan", ["a", "b"], makespan=10)
    # A check that carries no plan document (nothing a person could edit) is neither best nor the last check.
    log.append(EventType.VALIDATION_FAILED, node_id="check_plan", payload={"plan": None, "report": {}})
    log.append(EventType.PLAN_PROPOSED, node_id="check_plan", payload={"plan": _plan(1)})
    doc = handoff(log, "check_plan")
    assert doc is not None
    assert doc["best"] == {"source": "the plan check_plan checked (iteration 0)", "violations": 2,
                           "plan": _plan(10)}
    assert "still had 2 violation(s) (a 1, b 1)" in doc["reason"]


def test_a_check_without_a_report_or_violations_has_none(log: ExecutionLog) -> None:
    log.append(EventType.VALIDATION_PASSED, node_id="check_plan", payload={"plan": _plan(7)})
    log.append(EventType.VALIDATION_FAILED, node_id="check_plan", payload={"plan": _plan(8), "report": {}})
    doc = handoff(log, "check_plan")
    assert doc is not None
    assert "still had 0 violation(s) ()" in doc["reason"]
    assert doc["best"]["violations"] == 0 and doc["best"]["plan"] == _plan(8)


def test_the_version_in_force_is_the_best_plan(log: ExecutionLog) -> None:
    _check(log, "check_plan", [], makespan=5, passed=True)
    log.commit_plan(_plan(20), node_id="commit")
    log.commit_plan(_plan(21), node_id="commit")
    _check(log, "recheck_repair", ["a"], makespan=22)
    doc = handoff(log, "recheck_repair")
    assert doc is not None
    assert doc["best"] == {"source": "committed version v2", "violations": None, "plan": _plan(21)}
