"""The simulated LLM's stated error model, mistake by mistake, and the prompts it reads: exact answers.

Found by mutation testing (scripts/mutation.py on alas_argo/agents/simulated.py): test_simulated.py checks the
overall rate and that each kind of mistake shows as its violation somewhere, so the size of each mistake (how far
a precedence or overlap mistake moves an entry, a duplicate's place, a wrong duration's step, the machine a
one-machine job is moved to), the default weights and caption, a prompt without busy windows or a release, a
re-ask after the message gate, a planner turn after a critique (which jobs are kept, and that the re-placed ones
go around them), and the critic's reading of a disrupted schedule were free to change.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from alas_argo.agents.llm_client import ExchangeKey, Message, estimate_tokens
from alas_argo.agents.simulated import ErrorKind, ErrorModel, SimulatedTransport, context_of_messages

Entry = tuple[int, int, int, int, int]  # job, step, machine, start, end


def _messages(doc: dict[str, Any], *extra: Message) -> list[Message]:
    return [{"role": "system", "content": "You plan."}, *extra,
            {"role": "user", "content": "CONTEXT:" + json.dumps(doc)}]


def _answer(doc: dict[str, Any], model: ErrorModel | None = None, seed: int = 0, *extra: Message,
            key: ExchangeKey | None = None) -> Any:
    result = SimulatedTransport(model, seed=seed).complete(_messages(doc, *extra), key=key or ExchangeKey(role="job"))
    return json.loads(result.text)


def _entries(doc: dict[str, Any], model: ErrorModel | None = None, seed: int = 0, *extra: Message) -> list[Entry]:
    ops = _answer(doc, model, seed, *extra)["operations"]
    for o in ops:
        assert all(type(o[k]) is int for k in ("job", "step", "machine", "start", "end")), o
    return [(o["job"], o["step"], o["machine"], o["start"], o["end"]) for o in ops]


def only(kind: ErrorKind) -> ErrorModel:
    return ErrorModel(entry_error_rate=1.0, kind_weights={kind: 1.0})


#: One job over three machines: the exact answer is (0, 6), (6, 10), (10, 19).
JOB = {"instance": "t", "job": 0, "operations": [{"machine": 0, "duration": 6}, {"machine": 1, "duration": 4},
                                                 {"machine": 2, "duration": 9}]}


def test_the_default_weights_and_the_caption_are_as_stated() -> None:
    model = ErrorModel()
    assert model.kind_weights == {ErrorKind.OVERLAP: 0.35, ErrorKind.PRECEDENCE: 0.25,
                                  ErrorKind.WRONG_DURATION: 0.15, ErrorKind.MISSING: 0.10,
                                  ErrorKind.WRONG_MACHINE: 0.10, ErrorKind.DUPLICATE: 0.05}
    assert model.describe() == (
        "simulated LLM: 36% of entries wrong on a first answer (machine_overlap 0.35, precedence 0.25, "
        "wrong_duration 0.15, missing_operation 0.1, wrong_machine 0.1, duplicate_operation 0.05), 50% of "
        "mistakes corrected per feedback round, critic detects 50%")


def test_the_transport_defaults_to_the_stated_model_seed_0_and_no_stream() -> None:
    sim = SimulatedTransport()
    assert (sim.model, sim.seed, sim.stream) == (ErrorModel(), 0, "")


def test_a_prompt_without_busy_windows_fixed_steps_or_release_is_answered_from_0() -> None:
    assert _entries(JOB, ErrorModel(entry_error_rate=0)) == [(0, 0, 0, 0, 6), (0, 1, 1, 6, 10), (0, 2, 2, 10, 19)]
    late = {**JOB, "release": 5, "busy": [{"machine": 1, "start": 11, "end": 13}],
            "fixed": [{"step": 0, "start": 2, "end": 8}]}
    # Step 0 started at 2 and stays; step 1 starts at the release or later (8), around the busy window.
    assert _entries(late, ErrorModel(entry_error_rate=0)) == [(0, 0, 0, 2, 8), (0, 1, 1, 13, 17),
                                                              (0, 2, 2, 17, 26)]


def test_a_duplicate_follows_its_entry_at_once() -> None:
    assert _entries(JOB, only(ErrorKind.DUPLICATE)) == [
        (0, 0, 0, 0, 6), (0, 0, 0, 6, 12), (0, 1, 1, 6, 10), (0, 1, 1, 10, 14), (0, 2, 2, 10, 19),
        (0, 2, 2, 19, 28)]


def test_a_precedence_mistake_starts_half_its_length_before_the_predecessor_ends() -> None:
    ops = _entries(JOB, only(ErrorKind.PRECEDENCE))
    # The first step cannot show one: it gets a wrong duration instead (6 -/+ 2).
    assert ops[0][:4] == (0, 0, 0, 0) and ops[0][4] in (4, 8)
    assert ops[1:] == [(0, 1, 1, 4, 8), (0, 2, 2, 6, 15)]
    short = {"instance": "t", "job": 1, "operations": [{"machine": 0, "duration": 5}, {"machine": 1, "duration": 2},
                                                       {"machine": 2, "duration": 1}]}
    # At least one unit before, never before 0 (a predecessor of length 1 ends at 1; 1 - 1 = 0).
    assert _entries(short, only(ErrorKind.PRECEDENCE))[1:] == [(1, 1, 1, 4, 6), (1, 2, 2, 6, 7)]
    tiny = {"instance": "t", "job": 1, "operations": [{"machine": 0, "duration": 1}, {"machine": 1, "duration": 3}]}
    assert _entries(tiny, only(ErrorKind.PRECEDENCE))[1] == (1, 1, 1, 0, 3)


def test_a_wrong_duration_is_a_third_longer_or_shorter_and_never_below_one() -> None:
    doc = {"instance": "t", "job": 0, "operations": [{"machine": m, "duration": d}
                                                     for m, d in enumerate((9, 3, 1))]}
    lengths: list[set[int]] = [set(), set(), set()]
    for seed in range(40):
        for i, (_, _, _, start, end) in enumerate(_entries(doc, only(ErrorKind.WRONG_DURATION), seed)):
            lengths[i].add(end - start)
    assert lengths == [{6, 12}, {2, 4}, {1, 2}]


def test_a_wrong_machine_is_another_of_the_jobs_machines_or_the_next_one() -> None:
    seen = set()
    for seed in range(20):
        for _, step, machine, _, _ in _entries(JOB, only(ErrorKind.WRONG_MACHINE), seed):
            assert machine in {0, 1, 2} - {step}
            seen.add((step, machine))
    assert seen == {(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)}
    one = {"instance": "t", "job": 0, "operations": [{"machine": 2, "duration": 3}, {"machine": 2, "duration": 4}]}
    assert _entries(one, only(ErrorKind.WRONG_MACHINE)) == [(0, 0, 3, 0, 3), (0, 1, 3, 3, 7)]


def test_an_overlap_mistake_lands_inside_a_busy_window() -> None:
    doc = {"instance": "t", "job": 0, "operations": [{"machine": 1, "duration": 4}],
           "busy": [{"machine": 1, "start": 20, "end": 30}]}
    starts = set()
    for seed in range(200):
        ((_, _, machine, start, end),) = _entries(doc, only(ErrorKind.OVERLAP), seed)
        assert machine == 1 and end - start == 4
        starts.add(start)
    # Anywhere in the window, shifted back by half the length.
    assert starts == set(range(18, 28))
    edge = {"instance": "t", "job": 0, "operations": [{"machine": 1, "duration": 6}],
            "busy": [{"machine": 1, "start": 0, "end": 1}]}
    for seed in range(10):
        assert _entries(edge, only(ErrorKind.OVERLAP), seed) == [(0, 0, 1, 0, 6)]


def test_the_kind_is_drawn_by_weight() -> None:
    model = ErrorModel(entry_error_rate=1.0, kind_weights={ErrorKind.DUPLICATE: 1.0, ErrorKind.MISSING: 0.0})
    for seed in range(10):
        assert len(_entries(JOB, model, seed)) == 6


def test_a_reask_after_the_gate_is_one_more_feedback_round() -> None:
    model = ErrorModel(entry_error_rate=1.0, correction_rate=1.0, kind_weights={ErrorKind.MISSING: 1.0})
    assert _entries(JOB, model) == []
    rejected: Message = {"role": "user", "content": "Your message rejected by the gate: fix it."}
    assert len(_entries(JOB, model, 0, rejected)) == 3
    # Only the user's words count: an assistant quoting the phrase is no re-ask.
    quoted: Message = {"role": "assistant", "content": "message rejected"}
    assert _entries(JOB, model, 0, quoted) == []


def test_context_is_read_from_the_last_user_message_only() -> None:
    doc = {"instance": "a", "job": 0}
    assert context_of_messages([]) == {}
    assert context_of_messages([{"role": "user", "content": "no context here"}]) == {}
    assert context_of_messages([{"role": "user", "content": "CONTEXT:[1, 2]"}]) == {}
    assert context_of_messages([{"role": "user", "content": "intro\nCONTEXT:" + json.dumps(doc) + "\nthanks"}]) == doc
    assert context_of_messages([{"role": "user", "content": "CONTEXT:" + json.dumps(doc)},
                                {"role": "assistant", "content": 'CONTEXT:{"instance": "b"}'}]) == doc
    assert context_of_messages([{"role": "user", "content": 'CONTEXT:{"instance": "old"}'},
                                {"role": "user", "content": "CONTEXT:" + json.dumps(doc)}]) == doc
    assert context_of_messages([{"role": "user"}]) == {}


def test_an_unknown_prompt_gets_an_empty_answer_and_every_answer_is_accounted() -> None:
    result = SimulatedTransport().complete(_messages({"instance": "t"}), key=ExchangeKey())
    assert result.text == '{"operations":[]}'
    assert (result.model, result.estimated, result.latency_s, result.calls, result.finish_reason, result.extra) == (
        "simulated", True, 0.0, 1, "stop", {"simulated": True})
    assert result.prompt_tokens > 0 and result.completion_tokens > 0


#: Two jobs on machine 0 (3 and 6 long).
JOBS = [[{"machine": 0, "duration": 3}], [{"machine": 0, "duration": 6}]]


def test_a_planner_turn_after_a_critique_replaces_only_the_named_jobs_around_the_rest() -> None:
    previous = [{"job": 0, "step": 0, "machine": 0, "start": 5, "end": 8},
                {"job": 1, "step": 0, "machine": 0, "start": 0, "end": 6}]
    doc = {"instance": "t", "jobs": JOBS, "previous": previous,
           "critique": [{"job": 1, "problem": "overlaps job 0"}, {"problem": "no job named"}]}
    exact = ErrorModel(entry_error_rate=0)
    assert _entries(doc, exact) == [(0, 0, 0, 5, 8), (1, 0, 0, 8, 14)]
    # Without a critique naming a job, nothing is re-placed.
    assert _entries({**doc, "critique": []}, exact) == [(0, 0, 0, 5, 8), (1, 0, 0, 0, 6)]
    assert _entries({**doc, "previous": None}, exact) == [(0, 0, 0, 0, 3), (1, 0, 0, 3, 9)]


def test_a_whole_replan_starts_at_the_release_around_downtime_and_started_work() -> None:
    doc = {"instance": "t", "jobs": [[{"machine": 0, "duration": 3}, {"machine": 1, "duration": 2}],
                                     [{"machine": 1, "duration": 4}, {"machine": 0, "duration": 1}]],
           "release": 4, "fixed": [{"job": 0, "step": 0, "start": 2, "end": 5}],
           "downtime": [{"machine": 1, "start": 5, "end": 7}]}
    assert _entries(doc, ErrorModel(entry_error_rate=0)) == [
        (0, 0, 0, 2, 5), (0, 1, 1, 7, 9), (1, 0, 1, 9, 13), (1, 1, 0, 13, 14)]
    static = {"instance": "t", "jobs": JOBS}
    assert _entries(static, ErrorModel(entry_error_rate=0)) == [(0, 0, 0, 0, 3), (1, 0, 0, 3, 9)]


def _review(doc: dict[str, Any], rate: float) -> Any:
    return _answer({"task": "review", "instance": "t", **doc}, ErrorModel(critic_detection_rate=rate),
                   key=ExchangeKey(role="critic"))


def test_the_critic_reads_the_disruption_and_ignores_entries_of_no_job() -> None:
    jobs = [[{"machine": 0, "duration": 3}], [{"machine": 1, "duration": 2}]]
    good = [{"job": 0, "step": 0, "machine": 0, "start": 4, "end": 7},
            {"job": 1, "step": 0, "machine": 1, "start": 8, "end": 10}]
    strays = [{"step": 0, "machine": 0, "start": 0, "end": 1}, {"job": 2, "step": 0, "machine": 0, "start": 0,
                                                                 "end": 1}]
    assert _review({"jobs": jobs, "schedule": good + strays}, 1.0) == {"approved": True, "problems": []}
    # Job 1 on machine 1 over [8, 10) meets the downtime [9, 12); job 0 at 4 < the release 5.
    disrupted = {"jobs": jobs, "schedule": good, "release": 5, "downtime": [{"machine": 1, "start": 9, "end": 12}]}
    review = _review(disrupted, 1.0)
    assert review["approved"] is False
    assert sorted(p["job"] for p in review["problems"]) == [0, 1]
    assert _review(disrupted, 0.0) == {"approved": True, "problems": []}
    assert _review({"jobs": jobs}, 1.0)["approved"] is False  # no schedule: every operation missing


@pytest.mark.parametrize("seed", [0, 1])
def test_answers_differ_with_instance_role_job_and_attempt(seed: int) -> None:
    big = {"instance": "t", "job": 0, "operations": [{"machine": m % 3, "duration": 5} for m in range(12)]}
    base = _answer(big, None, seed)
    assert _answer(big, None, seed) == base
    assert _answer({**big, "instance": "u"}, None, seed) != base
    assert _answer(big, None, seed, key=ExchangeKey(role="single")) != base


def test_the_recorded_answers_stay_the_same() -> None:
    """Benchmarks record and compare these answers: for the same seed, prompt and key, the same draws, mistakes
    and sizes as when they were recorded (the default stream, "", draws as before streams existed)."""
    big = {"instance": "t", "job": 0, "operations": [{"machine": m % 3, "duration": 5} for m in range(8)]}
    assert [e[2:] for e in _entries(big)] == [(0, 0, 6), (1, 5, 10), (2, 10, 15), (0, 15, 20), (1, 20, 25),
                                               (2, 25, 30), (0, 28, 33), (1, 35, 40)]
    assert _entries(JOB, only(ErrorKind.WRONG_DURATION)) == [(0, 0, 0, 0, 8), (0, 1, 1, 6, 9), (0, 2, 2, 10, 22)]


def test_a_job_prompt_starts_at_its_release() -> None:
    assert _entries({**JOB, "release": 5}, ErrorModel(entry_error_rate=0)) == [
        (0, 0, 0, 5, 11), (0, 1, 1, 11, 15), (0, 2, 2, 15, 24)]


def test_an_overlap_mistake_in_a_one_unit_window_lands_on_it() -> None:
    doc = {"instance": "t", "job": 0, "operations": [{"machine": 1, "duration": 1}],
           "busy": [{"machine": 1, "start": 5, "end": 6}]}
    for seed in range(10):
        assert _entries(doc, only(ErrorKind.OVERLAP), seed) == [(0, 0, 1, 5, 6)]


def test_a_message_without_content_and_a_half_job_prompt_are_answered() -> None:
    no_content: Message = {"role": "user"}  # a message may lack its text
    result = SimulatedTransport().complete([no_content, *_messages({"instance": "t", "job": 0})], key=ExchangeKey())
    assert result.text == '{"operations":[]}'
    # A missing text counts as no text in the prompt's token estimate.
    assert result.prompt_tokens == estimate_tokens('You plan.CONTEXT:{"instance": "t", "job": 0}')
    assert _answer({"instance": "t", "operations": JOB["operations"]}) == {"operations": []}
    messages = _messages(JOB)
    assert SimulatedTransport().complete(messages, key=ExchangeKey()).prompt_tokens == estimate_tokens(
        "You plan.CONTEXT:" + json.dumps(JOB))


def test_a_previous_entry_without_a_job_is_kept_beside_the_replaced_ones() -> None:
    previous = [{"step": 0, "machine": 0, "start": 20, "end": 21},
                {"job": 1, "step": 0, "machine": 0, "start": 0, "end": 6}]
    doc = {"instance": "t", "jobs": JOBS, "previous": previous, "critique": [{"job": 1, "problem": "x"}]}
    answer = _answer(doc, ErrorModel(entry_error_rate=0))["operations"]
    assert answer == [previous[0], {"job": 1, "step": 0, "machine": 0, "start": 0, "end": 6}]


def test_the_critic_of_a_replan_without_downtime_or_started_work() -> None:
    jobs = [[{"machine": 0, "duration": 3}]]
    early = [{"job": 0, "step": 0, "machine": 0, "start": 1, "end": 4}]
    review = _review({"jobs": jobs, "schedule": early, "release": 2}, 1.0)
    assert review["approved"] is False and [p["job"] for p in review["problems"]] == [0]
    assert _review({"jobs": jobs, "schedule": early, "release": 1}, 1.0)["approved"] is True
