"""The edges of the repair result's documents (alas_argo.jssp.repair.result, docs/contracts.md "Repair
result"): the metrics are every field but the schedule, already in their JSON form (what the execution log reads
back equals them), and R.json is the schedule's fields side by side with the metrics, not nested."""

from __future__ import annotations

import json

from alas_argo.jssp.repair.result import RepairResult
from alas_argo.jssp.schedule import Operation, Schedule

PLAN = Schedule.from_operations("two", [Operation(job=0, step=0, machine=0, start=0, end=3),
                                        Operation(job=1, step=0, machine=0, start=3, end=5)])
#: Every metric, as the fields of RepairResult name them.
METRICS = {"method", "makespan", "baseline_makespan", "moved_operations", "total_start_shift", "edit_radius",
           "edit_machines", "neighbourhood_growths", "wip_moved", "touched_machines", "resequenced_machines",
           "global_reason", "fallback", "seconds", "valid", "notes", "limits"}


def _result() -> RepairResult:
    # A limit given as a tuple (a stage's window, say) is the one value whose JSON form differs from Python's.
    return RepairResult(schedule=PLAN, method="lcrp", makespan=5, baseline_makespan=4, moved_operations=1,
                        total_start_shift=1, edit_radius=2, edit_machines=[0], wip_moved=0, touched_machines=[0],
                        seconds=0.25, valid=True, notes=["kept"], limits={"deterministic": True, "window": (3, 9)})


def test_the_metrics_are_every_field_but_the_schedule_in_their_json_form() -> None:
    metrics = _result().metrics()
    assert set(metrics) == METRICS
    assert metrics["limits"] == {"deterministic": True, "window": [3, 9]}
    assert json.loads(json.dumps(metrics)) == metrics  # what the execution log reads back is the same
    # The documented defaults of the fields a method may leave out (docs/contracts.md, "required: no").
    assert (metrics["neighbourhood_growths"], metrics["fallback"], metrics["global_reason"]) == (0, False, None)
    assert metrics["resequenced_machines"] == []


def test_r_json_is_the_schedule_side_by_side_with_the_metrics_not_nested() -> None:
    doc = _result().to_json()
    assert set(doc) == METRICS | {"instance", "operations"}
    assert doc["instance"] == "two" and doc["operations"] == PLAN.to_json()["operations"]
    assert doc["makespan"] == 5 and doc["method"] == "lcrp" and doc["edit_machines"] == [0]
    back = RepairResult.model_validate({**doc, "schedule": PLAN.to_json()})  # how R.json is read back
    assert back.schedule == PLAN and back.metrics() == _result().metrics()
