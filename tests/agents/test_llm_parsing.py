"""Strict parsing of model answers: tolerated wrapping, dropped records, and what is never invented."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alas_argo.agents.contracts import BusyWindow, JobContext, ProposedOperation
from alas_argo.agents.llm_parsing import ParseError, extract_json, parse_answer, review_operations

OPS = [{"job": 1, "step": 0, "machine": 0, "start": 3, "end": 5},
       {"job": 1, "step": 1, "machine": 2, "start": 7, "end": 8},
       {"job": 1, "step": 2, "machine": 1, "start": 8, "end": 12}]
DOC = json.dumps({"operations": OPS})
CTX = JobContext(instance="tiny", job=1, operations=[(0, 2), (2, 1), (1, 4)], horizon=40)


def starts(text: str, job: int = 1) -> list[tuple[int, int, int, int]]:
    return [(o.step, o.machine, o.start, o.end) for o in parse_answer(text, job=job).operations]


EXPECTED = [(0, 0, 3, 5), (1, 2, 7, 8), (2, 1, 8, 12)]


@pytest.mark.parametrize(("text", "note"), [
    (DOC, None),
    (f"```json\n{DOC}\n```", "code fence"),
    (f"```\n{DOC}\n```", "code fence"),
    (f"Sure! Here is the schedule:\n{DOC}\nLet me know if you need anything else.", "prose around"),
    (json.dumps(OPS), "top-level list"),
    (json.dumps({"schedule": OPS}), "'schedule' field"),
    (f"Here you go: {json.dumps(OPS)} - done", "prose around"),
])
def test_tolerated_wrapping(text: str, note: str | None) -> None:
    parsed = parse_answer(text, job=1)
    assert [(o.step, o.machine, o.start, o.end) for o in parsed.operations] == EXPECTED
    if note is None:
        assert parsed.notes == []
    else:
        assert any(note in n for n in parsed.notes), parsed.notes


def test_largest_json_wins_over_a_quoted_example() -> None:
    text = 'The format is {"operations": []}. Answer:\n' + DOC
    assert starts(text) == EXPECTED


def test_truncated_answer_keeps_only_complete_records() -> None:
    text = DOC[: DOC.index('"start": 8') + 5]  # cut inside the third operation
    parsed = parse_answer(text, job=1)
    assert [o.step for o in parsed.operations] == [0, 1]
    assert any("truncated" in n and "2 operation record(s)" in n for n in parsed.notes)


def test_truncated_inside_a_code_fence() -> None:
    text = "```json\n" + DOC[: DOC.index('"step": 1') + 3]
    assert [o.step for o in parse_answer(text, job=1).operations] == [0]


@pytest.mark.parametrize(("text", "message"), [
    ("", "empty"),
    ("   \n ", "empty"),
    ("Job 1 should run first on machine 0, then machine 2, then machine 1.", "prose without any JSON"),
    ('{"operations": [{"job": 1, "st', "no complete JSON"),
    ('{"result": "I cannot do that"}', "no list of operations"),
    ("42", "no list of operations"),
])
def test_unusable_answers_raise(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_answer(text, job=1)


def test_records_are_dropped_not_completed() -> None:
    ops = [dict(OPS[0]), {"job": 1, "step": 1, "start": 7, "end": 8},
           {"job": 1, "step": 2, "machine": 1, "start": "soon", "end": 12}, "step 3 at 20",
           {"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]
    parsed = parse_answer(json.dumps({"operations": ops}), job=1)
    assert [o.step for o in parsed.operations] == [0]
    joined = "\n".join(parsed.notes)
    assert "#1 dropped: no machine" in joined
    assert "#2 dropped: start 'soon' is not an integer" in joined
    assert "#3 is not an object" in joined
    assert "#4 is for job 0, not this agent's job 1" in joined


def test_integral_floats_and_missing_job_field() -> None:
    text = json.dumps([{"step": 0, "machine": 0, "start": 3.0, "end": 5}])
    parsed = parse_answer(text, job=1)
    assert parsed.operations == [ProposedOperation(job=1, step=0, machine=0, start=3, end=5)]
    assert any("no job field: read as job 1" in n for n in parsed.notes)
    with pytest.raises(ParseError):
        extract_json("nothing here")
    fractional = parse_answer(json.dumps([{"job": 1, "step": 0, "machine": 0, "start": 3.5, "end": 5}]), job=1)
    assert fractional.operations == [] and any("not an integer" in n for n in fractional.notes)


def test_supervisor_parse_requires_the_job_field() -> None:
    text = json.dumps([{"step": 0, "machine": 0, "start": 3, "end": 5}, OPS[1]])
    parsed = parse_answer(text, job=None)
    assert [(o.job, o.step) for o in parsed.operations] == [(1, 1)]


def test_review_notes_name_what_is_off() -> None:
    ctx = JobContext(instance="tiny", job=1, operations=[(0, 2), (2, 1), (1, 4)], horizon=40, release=4,
                     fixed={0: (3, 5)}, busy=[BusyWindow(machine=1, start=9, end=11, reason="downtime")])
    ops = [ProposedOperation(job=1, step=0, machine=0, start=2, end=4),
           ProposedOperation(job=1, step=1, machine=1, start=3, end=5),
           ProposedOperation(job=1, step=1, machine=2, start=6, end=7),
           ProposedOperation(job=1, step=5, machine=0, start=0, end=1)]
    notes = review_operations(ctx, ops)
    assert "step 0 has started at 3 and must not move" in notes
    assert "step 1 on machine 1, but it must run on machine 2" in notes
    assert "step 1 lasts 2, but its duration is 1" in notes
    assert "step 1 starts at 3, before the release time 4" in notes
    assert "step 1 proposed more than once" in notes
    assert "step 5 does not exist (job 1 has 3 steps)" in notes
    assert "missing step(s) [2]" in notes
    assert "step 1 starts at 3, before step 0 ends at 4" in notes
    assert review_operations(CTX, parse_answer(DOC, job=1).operations) == []


def test_busy_window_overlap_is_noted() -> None:
    ctx = CTX.model_copy(update={"busy": [BusyWindow(machine=1, start=9, end=11, reason="downtime")]})
    notes = review_operations(ctx, parse_answer(DOC, job=1).operations)
    assert notes == ["step 2 overlaps machine 1's downtime window [9, 11)"]


@given(st.text(max_size=300))
def test_parser_never_raises_anything_but_parse_error(text: str) -> None:
    try:
        parsed = parse_answer(text, job=1)
    except ParseError:
        return
    assert all(o.job == 1 for o in parsed.operations)


@pytest.mark.parametrize("text", ["[" * 100_000, "{\"operations\": " * 5_000, "```json\n" + "[" * 50_000 + "\n```"])
def test_nesting_deeper_than_python_can_decode_is_a_parse_error(text: str) -> None:
    # json raises RecursionError (not JSONDecodeError) on such nesting; a runaway model must get a re-ask, not
    # crash the planner.
    with pytest.raises(ParseError, match="no complete JSON"):
        parse_answer(text, job=1)


@pytest.mark.parametrize("doc", [DOC, json.dumps(OPS)])
def test_operations_after_undecodable_nesting_are_still_read(doc: str) -> None:
    parsed = parse_answer("[" * 5_000 + " sorry, here it is: " + doc, job=1)
    assert [o.model_dump() for o in parsed.operations] == OPS
    assert parsed.notes[0] == "prose around the JSON ignored"


@given(st.lists(st.fixed_dictionaries({"step": st.integers(0, 5), "machine": st.integers(0, 3),
                                       "start": st.integers(-5, 100), "end": st.integers(-5, 100)}),
                min_size=1, max_size=6), st.sampled_from(["{}", "```json\n{}\n```", "Answer: {} ok"]))
def test_round_trip_never_alters_values(ops: list[dict[str, int]], wrapper: str) -> None:
    for o in ops:
        o["job"] = 1
    text = wrapper.replace("{}", json.dumps({"operations": ops}))
    parsed = parse_answer(text, job=1)
    assert [o.model_dump() for o in parsed.operations] == [
        {k: o[k] for k in ("job", "step", "machine", "start", "end")} for o in ops]
