"""The controller applies the CLI's disruption rules: an empty event list and a breakdown over before the reveal
time are 422s naming the place, like `alas repair` exits 2 naming the file."""

from __future__ import annotations

from alas_argo.log import ExecutionLog
from alas_argo.log.s3_store import S3Store
from tests.controller.test_http import post


def test_empty_events_and_a_breakdown_over_before_the_reveal_are_422(controller: str, run_id: str) -> None:
    status, doc, _ = post(controller, {"time": 2, "events": []})
    assert status == 422 and doc["where"] == "events"
    over = {"time": 6, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 1, "duration": 3}],
            "method": "right-shift", "budget": 1}
    status, doc, _ = post(controller, over, key="k-over")
    assert status == 422, doc
    assert doc == {"error": "machine 0's downtime [1, 4) is over by the reveal time 6: a breakdown must end after "
                            "the reveal time", "where": "disruption.events[0]"}


def test_a_history_no_plan_can_honour_is_422_naming_the_operation(controller: str, run_id: str,
                                                                  s3_store: S3Store) -> None:
    """The run's plan (tiny, greedy): job 2's first operation ran [0, 4) and its second started at 6. Revealed at
    7, a duration of 7 for the first would have it running when the second started: refused with the cause and
    the operation, nothing committed (it used to be a 500: every method's plan failed the validator)."""
    body = {"time": 7, "events": [{"kind": "duration_change", "job": 2, "step": 0, "duration": 7}], "budget": 1}
    status, doc, _ = post(controller, body, key="k-history")
    assert status == 422, doc
    assert doc == {"error": "a duration change to 7 makes a started operation end at 7, after its job successor "
                            "(job 2, step 1) had started at 6", "where": {"job": 2, "step": 0}}
    assert ExecutionLog(s3_store, run_id).versions() == [1]
