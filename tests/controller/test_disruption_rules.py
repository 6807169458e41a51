"""The controller applies the CLI's disruption rules: an empty event list and a breakdown over before the reveal
time are 422s naming the place, like `alas repair` exits 2 naming the file."""

from __future__ import annotations

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
