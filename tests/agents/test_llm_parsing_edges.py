"""Parsing edges the first tests left open: exact notes and errors a re-ask quotes, records after a dropped one,
lists that are not operations, the scan limit, and review notes at boundaries.

Found by mutation testing ``alas_argo/agents/llm_parsing.py``: each test here failed on at least one mutant that
the other parsing tests let pass.
"""

from __future__ import annotations

import json
import sys

import pytest

from alas_argo.agents.contracts import BusyWindow, JobContext, ProposedOperation
from alas_argo.agents.llm_parsing import ParseError, parse_answer, review_operations

OPS = [{"job": 1, "step": 0, "machine": 0, "start": 3, "end": 5},
       {"job": 1, "step": 1, "machine": 2, "start": 7, "end": 8},
       {"job": 1, "step": 2, "machine": 1, "start": 8, "end": 12}]
DOC = json.dumps({"operations": OPS})
CTX = JobContext(instance="tiny", job=1, operations=[(0, 2), (2, 1), (1, 4)], horizon=40)
PROSE = "prose around the JSON ignored"
NONE_USABLE = "no usable operation in the answer"
LISTED = [PROSE, "top-level list accepted as the operations"]


def proposed(*ops: dict[str, int]) -> list[ProposedOperation]:
    return [ProposedOperation(**o) for o in ops]


# The ParseError's message is what the planner puts in the re-ask ("unusable answer: ..."): each, whole.
@pytest.mark.parametrize(("text", "message"), [
    ("  \n", "the model's answer is empty"),
    ("Job 1 first.", "the model answered in prose without any JSON"),
    ('{"operations": [{"job": 1, "st', "the model's answer holds no complete JSON (truncated or malformed)"),
    ('{"result": "I cannot do that"}', "the JSON in the answer has no list of operations"),
    # A list in prose that is not a list of operation objects is not an answer.
    ("Run the steps in the order [0, 2, 1].", "the model's answer holds no complete JSON (truncated or malformed)"),
    # A truncated answer whose only complete objects are not operation records.
    ('{"reasoning": {"bottleneck": 2}, "operations": [{"job": 1, "st',
     "the model's answer holds no complete JSON (truncated or malformed)"),
    # Fields that hold no list of operation objects.
    ('{"order": [0, 2, 1]}', "the JSON in the answer has no list of operations"),
    ('{"status": "done", "count": 3}', "the JSON in the answer has no list of operations"),
    ('{"operations": "none", "result": []}', "the JSON in the answer has no list of operations"),
])
def test_unusable_answers_raise_their_whole_message(text: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_answer(text, job=1)
    assert caught.value.message == message


def test_the_scan_limit_is_two_hundred_thousand_characters() -> None:
    at_limit = "x" * (200_000 - len(DOC) - 1) + " " + DOC
    parsed = parse_answer(f"\n{at_limit}\n", job=1)  # the blanks around do not count
    assert parsed.operations == proposed(*OPS) and parsed.notes == [PROSE]
    with pytest.raises(ParseError) as caught:
        parse_answer("x" + at_limit, job=1)
    assert caught.value.message == "the model's answer is 200001 characters long: not a schedule"


@pytest.mark.parametrize(("text", "notes"), [
    (json.dumps(OPS), ["top-level list accepted as the operations"]),
    (json.dumps(OPS[0]), ["a single operation object accepted"]),
    (f"Sure: {json.dumps({'schedule': OPS})}", [PROSE, "operations read from the 'schedule' field"]),
    # The second fence holds the answer; the first was an example that is not JSON.
    ("Format:\n```\n{job, step, machine, start, end}\n```\nAnswer:\n```json\n" + DOC + "\n```",
     ["answer wrapped in a code fence"]),
])
def test_tolerated_wrapping_is_noted_exactly(text: str, notes: list[str]) -> None:
    parsed = parse_answer(text, job=1)
    assert parsed.notes == notes
    assert parsed.operations == proposed(*(OPS[:1] if text == json.dumps(OPS[0]) else OPS))


def test_an_empty_operations_list_in_prose_is_an_empty_answer_not_malformed_json() -> None:
    parsed = parse_answer('I could not find a schedule: {"operations": []}', job=1)
    assert parsed.operations == [] and parsed.notes == [PROSE, NONE_USABLE]


def test_a_truncated_answer_is_noted_once_with_its_count() -> None:
    text = DOC[: DOC.index('"start": 8') + 5]
    parsed = parse_answer(text, job=1)
    assert parsed.operations == proposed(*OPS[:2])
    assert parsed.notes == ["answer is not one complete JSON document (truncated?): kept the 2 operation "
                            "record(s) that arrived whole"]


def test_a_record_right_after_a_stray_opener_is_read() -> None:
    parsed = parse_answer("[" + json.dumps(OPS), job=1)  # an unclosed "[" then the list
    assert parsed.operations == proposed(*OPS) and parsed.notes == LISTED
    record = parse_answer("{" + json.dumps(OPS[0]), job=1)
    assert record.operations == proposed(OPS[0])


@pytest.mark.parametrize("run", [5_000, 5_001])
def test_a_list_right_after_a_runaway_run_is_read(run: int) -> None:
    # Both parities: the skip over the run must stop at its first other character, not one past it.
    parsed = parse_answer("[" * run + "x" + json.dumps(OPS), job=1)
    assert parsed.operations == proposed(*OPS) and parsed.notes == LISTED


def test_after_a_runaway_run_the_largest_list_still_wins() -> None:
    text = "[" * 5_000 + " here: " + json.dumps(OPS) + ' (each like [{"step": 0}])'
    parsed = parse_answer(text, job=1)
    assert parsed.operations == proposed(*OPS) and parsed.notes == LISTED


def test_every_problem_of_a_dropped_record_is_named() -> None:
    parsed = parse_answer(json.dumps([{"job": 1, "step": 0}, OPS[1]]), job=1)
    assert parsed.operations == proposed(OPS[1])
    assert parsed.notes == ["top-level list accepted as the operations",
                            "operation #0 dropped: no machine, no start, no end"]


def test_records_after_another_jobs_record_are_still_read() -> None:
    other = {"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}
    parsed = parse_answer(json.dumps({"operations": [other, *OPS]}), job=1)
    assert parsed.operations == proposed(*OPS)
    assert parsed.notes == ["operation #0 is for job 0, not this agent's job 1: dropped"]


def test_every_record_without_a_job_field_is_counted() -> None:
    without = [{k: v for k, v in o.items() if k != "job"} for o in OPS]
    parsed = parse_answer(json.dumps({"operations": without}), job=1)
    assert parsed.operations == proposed(*OPS)
    assert parsed.notes == ["3 operation(s) had no job field: read as job 1"]


def test_booleans_are_not_integers() -> None:
    parsed = parse_answer(json.dumps([{**OPS[0], "start": True}]), job=1)
    assert parsed.operations == []
    assert parsed.notes == ["top-level list accepted as the operations",
                            "operation #0 dropped: start True is not an integer", NONE_USABLE]


def test_the_step_one_past_the_last_does_not_exist_and_later_steps_are_still_reviewed() -> None:
    ops = proposed({"job": 1, "step": 3, "machine": 1, "start": 12, "end": 16}, *OPS)
    assert review_operations(CTX, ops) == ["step 3 does not exist (job 1 has 3 steps)"]
    late = proposed({"job": 1, "step": 3, "machine": 1, "start": 12, "end": 16}, OPS[0])
    assert review_operations(CTX, late) == ["step 3 does not exist (job 1 has 3 steps)", "missing step(s) [1, 2]"]


def test_busy_windows_elsewhere_or_touching_are_not_overlaps() -> None:
    busy = [BusyWindow(machine=1, start=0, end=2, reason="downtime"),  # same machine, long before
            BusyWindow(machine=2, start=8, end=12, reason="downtime"),  # step 2's time, another machine
            BusyWindow(machine=1, start=4, end=8, reason="reserved"),  # ends where step 2 starts
            BusyWindow(machine=1, start=12, end=20, reason="reserved")]  # starts where step 2 ends
    ctx = CTX.model_copy(update={"busy": busy})
    assert review_operations(ctx, proposed(*OPS)) == []


@pytest.mark.parametrize("shape", ['{"operations": %s}',
                                   '[{"job": 1, "step": 0, "note": %s, "machine": 0, "start": 3, "end": 5}]'])
def test_nesting_just_under_the_recursion_limit_is_read_or_refused_never_a_crash(shape: str) -> None:
    # Decoded in prose, such a value is a candidate; ranking candidates must not need to encode it again (json's
    # encoder hits the recursion limit a few levels sooner than its decoder).
    limit = sys.getrecursionlimit()
    for depth in range(limit - 150, limit + 10):
        text = "Here it is: " + shape % ("[" * depth + "]" * depth)
        try:
            parsed = parse_answer(text, job=1)
        except ParseError:
            continue
        if shape.startswith("["):
            assert parsed.operations == proposed(OPS[0]), depth
        else:
            assert parsed.operations == [] and "operation #0 is not an object: dropped" in parsed.notes, depth


@pytest.mark.parametrize(("text", "message"), [
    ("1" * 5000, "the model answered in prose without any JSON"),
    ('{"operations": [{"job": 1, "step": 0, "machine": 0, "start": ' + "3" * 5000 + ', "end": 5}]}',
     "the model's answer holds no complete JSON (truncated or malformed)"),
])
def test_an_integer_too_long_for_int_is_malformed_json_not_a_crash(text: str, message: str) -> None:
    """int() refuses more than 4,300 digits with a bare ValueError: it escaped the parser as a traceback."""
    with pytest.raises(ParseError) as caught:
        parse_answer(text, job=1)
    assert caught.value.message == message
