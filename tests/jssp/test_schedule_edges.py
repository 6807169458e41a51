"""The edges of the schedule model (alas_argo.jssp.schedule, docs/contracts.md "Schedule"): an empty schedule's
makespan, the document's exact shape, sorting and duplicates, and that a schedule cannot be changed in place
(plans are shared between the execution state, the repair methods and the log)."""

from __future__ import annotations

import pydantic
import pytest

from alas_argo.jssp.schedule import Operation, Schedule


def test_a_schedule_of_no_operations_ends_at_0() -> None:
    empty = Schedule.from_operations("none", [])
    assert empty.makespan == 0 and empty.operations == [] and empty.machine_sequences() == {}


def test_the_document_is_the_contracts_shape_sorted_by_start_then_job_then_step() -> None:
    ops = [Operation(job=1, step=0, machine=0, start=2, end=4), Operation(job=0, step=1, machine=1, start=2, end=3),
           Operation(job=0, step=0, machine=0, start=0, end=2)]
    doc = Schedule.from_operations("tiny", ops).to_json()
    assert doc == {"instance": "tiny", "makespan": 4, "operations": [
        {"job": 0, "step": 0, "machine": 0, "start": 0, "end": 2},
        {"job": 0, "step": 1, "machine": 1, "start": 2, "end": 3},
        {"job": 1, "step": 0, "machine": 0, "start": 2, "end": 4}]}
    assert Schedule.model_validate(doc) == Schedule.from_operations("tiny", ops)


def test_a_duplicate_is_kept_in_the_list_and_the_last_one_wins_by_key() -> None:
    # The model can hold broken schedules, for the validator and the fault injector to talk about.
    first, again = (Operation(job=0, step=0, machine=0, start=s, end=s + 2) for s in (0, 5))
    broken = Schedule(instance="dup", makespan=7, operations=[first, again])
    assert len(broken.operations) == 2 and broken.by_key() == {(0, 0): again} and broken.starts() == {(0, 0): 5}


def test_schedules_and_operations_cannot_be_changed_in_place() -> None:
    op = Operation(job=0, step=0, machine=0, start=0, end=2)
    plan = Schedule.from_operations("one", [op])
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        plan.makespan = 9  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        op.start = 1  # type: ignore[misc]
    assert op.key == (0, 0) and op.duration == 2
