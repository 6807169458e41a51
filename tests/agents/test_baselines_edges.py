"""The baselines at their edges, against a scripted transport (found by mutation testing): the exact prompts
(roles, system text, the compact document, what a revision carries), the keys every exchange is recorded and
replayed under, the critic's turn bound and its failure, what counts as approval, and which answered entries
become the plan."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from alas_argo.agents.baselines import (
    CRITIC_SYSTEM_PROMPT,
    REPLAN_RULES,
    SINGLE_SYSTEM_PROMPT,
    critic_messages,
    planner_critic,
    single_agent,
    single_messages,
)
from alas_argo.agents.contracts import ProposedOperation
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, LlmAuthError, LlmUnavailable, Message
from alas_argo.agents.llm_prompts import CONTEXT_MARKER
from alas_argo.agents.simulated import context_of_messages
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.settings import LlmSettings

#: Two jobs of two steps; job 0 on machines 0 then 1, job 1 on machines 1 then 0.
DUO = Instance(name="duo", jobs=[[(0, 2), (1, 3)], [(1, 2), (0, 1)]])
#: A valid plan for DUO, as the model would write it.
GOOD = [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 2}, {"job": 0, "step": 1, "machine": 1, "start": 2,
                                                                     "end": 5},
        {"job": 1, "step": 0, "machine": 1, "start": 0, "end": 2}, {"job": 1, "step": 1, "machine": 0, "start": 2,
                                                                     "end": 3}]
REJECT = json.dumps({"approved": False, "problems": [{"job": 0, "problem": "order"}]})
APPROVE = '{"approved": true, "problems": []}'


class Scripted:
    """Answers in order (a text, or an exception raised in its place), keeping every question and its key."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers: Iterator[str | Exception] = iter(answers)
        self.asked: list[tuple[list[Message], ExchangeKey]] = []

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        self.asked.append((messages, key))
        answer = next(self.answers)
        if isinstance(answer, Exception):
            raise answer
        return ChatResult(text=answer, model="m", prompt_tokens=1, completion_tokens=1)

    def keys(self) -> list[tuple[str, int | None, int]]:
        return [(k.role, k.job, k.attempt) for _, k in self.asked]


def _planner(transport: Scripted) -> LlmPlanner:
    return LlmPlanner(LlmSettings(), transport=transport)


def _ops(*entries: dict[str, int]) -> str:
    return json.dumps({"operations": list(entries)})


def _state() -> ExecutionState:
    """DUO's GOOD plan with machine 0 down over [2, 4): both first steps have started by time 1."""
    plan = Schedule.from_operations("duo", [Operation(**o) for o in GOOD])
    return ExecutionState.at(DUO, plan, Disruption(time=1, events=[MachineBreakdown(machine=0, start=2,
                                                                                     duration=2)]))


def test_the_single_prompt_is_a_system_and_a_user_message_with_a_compact_document() -> None:
    messages = single_messages(DUO)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == SINGLE_SYSTEM_PROMPT
    doc = context_of_messages(messages)
    assert doc == {"instance": "duo", "task": "schedule", "jobs": [
        [{"machine": 0, "duration": 2}, {"machine": 1, "duration": 3}],
        [{"machine": 1, "duration": 2}, {"machine": 0, "duration": 1}]]}
    # The prompt's size is measured and paid for: the document is written without spaces.
    assert messages[1]["content"].splitlines() == [
        "Schedule instance duo.", CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":")),
        'Reply with {"operations": [...]} only.']


def test_after_a_disruption_both_prompts_add_the_replan_rules_to_their_system_text() -> None:
    state = _state()
    single = single_messages(DUO, state=state)
    assert single[0] == {"role": "system", "content": SINGLE_SYSTEM_PROMPT + "\n" + REPLAN_RULES}
    doc = context_of_messages(single)
    assert doc["instance"] == "duo" and doc["task"] == "replan" and doc["release"] == 1
    assert doc["fixed"] == [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 2},
                            {"job": 1, "step": 0, "machine": 1, "start": 0, "end": 2}]
    assert doc["downtime"] == [{"machine": 0, "start": 2, "end": 4}]
    critic = critic_messages(DUO, [ProposedOperation(**o) for o in GOOD], state)
    assert critic[0] == {"role": "system", "content": CRITIC_SYSTEM_PROMPT + "\n" + REPLAN_RULES}
    assert [m["role"] for m in critic] == ["system", "user"]
    static = critic_messages(DUO, [ProposedOperation(**o) for o in GOOD])
    assert static[0] == {"role": "system", "content": CRITIC_SYSTEM_PROMPT}


def test_the_critic_prompt_holds_the_instance_and_the_schedule_compactly() -> None:
    messages = critic_messages(DUO, [ProposedOperation(**o) for o in GOOD])
    doc = context_of_messages(messages)
    assert doc["instance"] == "duo" and doc["task"] == "review" and doc["schedule"] == GOOD
    assert len(doc["jobs"]) == 2
    assert messages[1]["content"].splitlines() == [
        "Review this schedule for instance duo.", CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":")),
        'Reply with {"approved": ..., "problems": [...]} only.']


def test_a_revision_keeps_the_whole_instance_beside_the_previous_answer_and_the_critique() -> None:
    previous = [ProposedOperation(**o) for o in GOOD[:2]]
    messages = single_messages(DUO, previous, [{"job": 1, "problem": "missing"}])
    doc = context_of_messages(messages)
    assert doc["instance"] == "duo" and doc["task"] == "schedule" and len(doc["jobs"]) == 2
    assert doc["previous"] == GOOD[:2] and doc["critique"] == [{"job": 1, "problem": "missing"}]
    lines = messages[1]["content"].splitlines()
    assert lines[2] == "A reviewer rejected your previous schedule (see previous and critique): revise it."
    assert context_of_messages(single_messages(DUO, previous))["critique"] == []  # no critique given: an empty one
    # A first question says nothing about a rejection.
    assert not any("reviewer" in line for line in single_messages(DUO)[1]["content"].splitlines())


def test_the_single_agent_asks_once_under_its_own_key() -> None:
    transport = Scripted(_ops(*GOOD))
    result = single_agent(DUO, _planner(transport))
    assert transport.keys() == [("single", None, 0)]  # replays find the answer under this key
    assert result.turns == 1 and result.notes == [] and len(result.plan.operations) == 4


def test_no_answer_leaves_an_empty_plan_and_a_note_naming_the_turn() -> None:
    result = single_agent(DUO, _planner(Scripted(LlmUnavailable("endpoint down"))))
    assert result.plan.operations == [] and result.turns == 1
    assert result.notes == ["single turn 0: no answer: endpoint down"]


def test_a_refused_key_is_raised_not_noted() -> None:
    """A wrong key will not fix itself: neither baseline turns it into an empty plan."""
    with pytest.raises(LlmAuthError):
        single_agent(DUO, _planner(Scripted(LlmAuthError("401"))))
    with pytest.raises(LlmAuthError):
        planner_critic(DUO, _planner(Scripted(_ops(*GOOD), LlmAuthError("401"))))
    with pytest.raises(LlmAuthError):
        planner_critic(DUO, _planner(Scripted(_ops(*GOOD), REJECT, LlmAuthError("401"))))


def test_entries_that_start_before_zero_or_end_before_they_start_are_not_in_the_plan() -> None:
    """What cannot be an operation is left out (the validator then reports it missing); an operation that
    lasts no time is kept as answered."""
    answer = [dict(GOOD[0], start=-1, end=1), dict(GOOD[1], start=5, end=4), GOOD[2], dict(GOOD[3], end=2)]
    result = single_agent(DUO, _planner(Scripted(_ops(*answer))))
    assert [(o.job, o.step, o.start, o.end) for o in result.plan.operations] == [(1, 0, 0, 2), (1, 1, 2, 2)]


def test_the_critic_gets_turns_rounds_by_default_five() -> None:
    """A critic that never approves: five revisions, then the last revision is the plan."""
    transport = Scripted(_ops(*GOOD), *[a for i in range(5) for a in (REJECT, _ops(*GOOD[: 4 - i % 2]))], APPROVE)
    result = planner_critic(DUO, _planner(transport))
    assert result.turns == 6
    assert transport.keys() == [("planner", None, 0)] + [
        k for t in range(1, 6) for k in (("critic", None, t - 1), ("planner", None, t))]
    assert len(result.plan.operations) == 4  # the fifth revision (i = 4) answered all four
    transport = Scripted(_ops(*GOOD), REJECT, _ops(*GOOD), REJECT, _ops(*GOOD[:3]), APPROVE)
    result = planner_critic(DUO, _planner(transport), turns=2)
    assert result.turns == 3 and len(transport.asked) == 5 and len(result.plan.operations) == 3


def test_a_critic_without_an_answer_ends_the_conversation_with_a_note() -> None:
    transport = Scripted(_ops(*GOOD[:3]), REJECT, _ops(*GOOD), LlmUnavailable("endpoint down"))
    result = planner_critic(DUO, _planner(transport), turns=4)
    assert result.turns == 2 and len(result.plan.operations) == 4
    assert result.notes == ["critic turn 1: no answer: endpoint down"]


def test_an_empty_revision_keeps_the_previous_answer_and_notes_why() -> None:
    transport = Scripted(_ops(*GOOD), REJECT, LlmUnavailable("endpoint down"), APPROVE)
    result = planner_critic(DUO, _planner(transport), turns=3)
    assert result.turns == 2 and len(result.plan.operations) == 4
    assert result.notes == ["planner turn 1: no answer: endpoint down"]


@pytest.mark.parametrize("review", [
    '{"approved": true, "problems": [{"job": 0, "problem": "order"}]}',  # approval wins over listed problems
    '{"approved": false, "problems": null}', '{"approved": false, "problems": {"job": 0}}',
    '{"approved": false, "problems": ["order", 3]}', '[{"job": 0, "problem": "order"}]', "looks fine to me"])
def test_a_review_with_nothing_to_act_on_counts_as_approval(review: str) -> None:
    transport = Scripted(_ops(*GOOD), review)
    result = planner_critic(DUO, _planner(transport), turns=3)
    assert result.turns == 1 and len(transport.asked) == 2


def test_after_a_disruption_the_critic_and_the_revision_see_the_replan() -> None:
    """Every turn of the conversation works on the re-plan: the critic reviews against the started work and
    the downtime, and the revision is asked with the replan rules and document too."""
    state = _state()
    transport = Scripted(_ops(*GOOD), REJECT, _ops(*GOOD), APPROVE)
    planner_critic(DUO, _planner(transport), turns=2, state=state)
    assert transport.keys() == [("planner", None, 0), ("critic", None, 0), ("planner", None, 1), ("critic", None, 1)]
    for messages, key in transport.asked:
        doc = context_of_messages(messages)
        assert doc["release"] == 1 and doc["downtime"] == [{"machine": 0, "start": 2, "end": 4}], key
        assert messages[0]["content"].endswith("\n" + REPLAN_RULES), key
    revision = context_of_messages(transport.asked[2][0])
    assert revision["task"] == "replan" and revision["critique"] == [{"job": 0, "problem": "order"}]
