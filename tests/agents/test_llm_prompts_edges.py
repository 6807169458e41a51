"""The prompts' exact text: what a job agent and the supervisor are told, byte for byte.

The module promises stable wording across runs (a recorded run replayed is the same experiment) and a
machine-checkable context: the simulator and tests read it back from the ``CONTEXT:`` line. So the wording, the
order of the lines and the JSON's keys and order are the contract, not only the information they carry."""

from __future__ import annotations

from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, ProposedOperation
from alas_argo.agents.llm_prompts import (
    CONTEXT_MARKER,
    JOB_SYSTEM_PROMPT,
    SUPERVISOR_SYSTEM_PROMPT,
    context_document,
    job_messages,
    supervisor_messages,
)


def _ctx(**kw: object) -> JobContext:
    base: dict[str, object] = {
        "instance": "duo", "job": 1, "operations": [(2, 3), (0, 4)], "horizon": 40, "release": 5,
        "fixed": {1: (9, 13), 0: (5, 8)},
        "busy": [BusyWindow(machine=2, start=20, end=25), BusyWindow(machine=0, start=1, end=3, reason="downtime"),
                 BusyWindow(machine=2, start=20, end=22), BusyWindow(machine=7, start=0, end=9)]}
    return JobContext.model_validate({**base, **kw})


def test_the_context_document_has_every_field_in_order_sorted_and_bounded() -> None:
    # Fixed steps by step; busy windows of the job's machines only (machine 7 is not visited), sorted by
    # machine, start and then end.
    doc = context_document(_ctx())
    assert list(doc) == ["instance", "job", "operations", "release", "fixed", "busy", "horizon"]
    assert doc == {
        "instance": "duo", "job": 1,
        "operations": [{"step": 0, "machine": 2, "duration": 3}, {"step": 1, "machine": 0, "duration": 4}],
        "release": 5,
        "fixed": [{"step": 0, "start": 5, "end": 8}, {"step": 1, "start": 9, "end": 13}],
        "busy": [{"machine": 0, "start": 1, "end": 3, "reason": "downtime"},
                 {"machine": 2, "start": 20, "end": 22, "reason": "reserved"},
                 {"machine": 2, "start": 20, "end": 25, "reason": "reserved"}],
        "horizon": 40}


def test_the_full_scope_keeps_every_window_and_the_normal_one_only_the_job_s_machines() -> None:
    assert [w["machine"] for w in context_document(_ctx(scope="full"))["busy"]] == [0, 2, 2, 7]
    assert [w["machine"] for w in context_document(_ctx(scope="minimal"))["busy"]] == [0, 2, 2]


def test_a_first_ask_is_the_system_prompt_and_three_user_lines() -> None:
    ctx = _ctx(fixed={}, busy=[], release=0)
    assert job_messages(ctx) == [
        {"role": "system", "content": JOB_SYSTEM_PROMPT},
        {"role": "user", "content": "Schedule job 1 of instance duo.\n"
                                    'CONTEXT: {"instance":"duo","job":1,"operations":[{"step":0,"machine":2,'
                                    '"duration":3},{"step":1,"machine":0,"duration":4}],"release":0,"fixed":[],'
                                    '"busy":[],"horizon":40}\n'
                                    'Reply with {"operations": [...]} only.'}]
    assert CONTEXT_MARKER == "CONTEXT:"


def test_a_re_ask_names_the_rejected_attempt_and_lists_every_message_before_the_reply_line() -> None:
    ctx = _ctx(fixed={}, busy=[], attempt=3, feedback=["step 0 starts before the release 5", "step 1 overlaps"])
    user = job_messages(ctx)[1]["content"].splitlines()
    assert user[0] == "Schedule job 1 of instance duo." and user[1].startswith("CONTEXT: {")
    assert user[2:] == ["Your previous answer (attempt 2) was rejected:",
                        "- step 0 starts before the release 5",
                        "- step 1 overlaps",
                        "Fix these problems.",
                        'Reply with {"operations": [...]} only.']


def test_the_system_prompts_state_the_rules_and_the_answer_s_shape() -> None:
    shape = '{"operations": [{"job": J, "step": S, "machine": M, "start": T, "end": E}, ...]}'
    job = JOB_SYSTEM_PROMPT.splitlines()
    assert job[0] == "You are a job agent in a job-shop scheduler. You schedule the operations of ONE job."
    assert job[-3:] == ["Answer with JSON only, no prose, in exactly this shape:", shape,
                        "with one entry per step of the job, all values integers."]
    assert "- No operation starts before the release time." in job
    assert '- Steps listed in "fixed" have already started: copy their start and end unchanged.' in job
    assert "- An operation must not overlap any busy window of its machine ([start, end) intervals)." in job
    supervisor = SUPERVISOR_SYSTEM_PROMPT.splitlines()
    assert supervisor[0].startswith("You are the supervisor of a job-shop scheduler.")
    assert supervisor[-3:] == ["Answer with JSON only, no prose, in exactly this shape:", shape,
                               "with one entry per operation of every job, all values integers."]


def test_the_supervisor_is_asked_with_proposals_by_job_and_fixed_steps_sorted() -> None:
    proposals = [JobProposal(job=j, backend="llm", operations=[
        ProposedOperation(job=j, step=0, machine=j, start=j, end=j + 2)]) for j in (2, 0)]
    messages = supervisor_messages("tiny", proposals, fixed={2: {1: (6, 8), 0: (0, 3)}, 0: {0: (0, 2)}})
    assert messages == [
        {"role": "system", "content": SUPERVISOR_SYSTEM_PROMPT},
        {"role": "user", "content": "Merge the job agents' proposals for instance tiny.\n"
                                    'CONTEXT: {"instance":"tiny","proposals":['
                                    '{"job":0,"operations":[{"job":0,"step":0,"machine":0,"start":0,"end":2}]},'
                                    '{"job":2,"operations":[{"job":2,"step":0,"machine":2,"start":2,"end":4}]}],'
                                    '"fixed":[{"job":0,"step":0,"start":0,"end":2},{"job":2,"step":0,"start":0,'
                                    '"end":3},{"job":2,"step":1,"start":6,"end":8}]}\n'
                                    'Reply with {"operations": [...]} only.'}]
    assert '"fixed":[]' in supervisor_messages("tiny", [])[1]["content"]  # no started work: an empty list
