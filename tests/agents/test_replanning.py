"""What the agents see and answer when they re-plan after a disruption: job contexts, whole-instance prompts,
the simulated critic, and validator feedback against the disruption."""

from __future__ import annotations

import json

import pytest

from alas_argo.agents.baselines import critic_messages, planner_critic, single_agent, single_messages
from alas_argo.agents.context import replan_contexts
from alas_argo.agents.contracts import ProposedOperation
from alas_argo.agents.feedback import feedback_rounds, first_proposals
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ExchangeKey
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport, context_of_messages
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.planning import plan
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings


@pytest.fixture(scope="module")
def case() -> tuple[Instance, Schedule, Disruption]:
    """ft06's optimal plan, machine 2 down from time 10 for 8 and a later operation of job 1 longer."""
    instance = get_instance("ft06")
    schedule = plan(instance, time_limit=5, deterministic=True).schedule
    pending = next(o for o in sorted(schedule.operations, key=lambda o: o.start) if o.start >= 10)
    disruption = Disruption(time=10, events=[
        MachineBreakdown(machine=2, start=10, duration=8),
        DurationChange(job=pending.job, step=pending.step, duration=pending.duration + 3)])
    return instance, schedule, disruption


def _flawless(stream: str = "") -> LlmPlanner:
    return LlmPlanner(LlmSettings(model="simulated"),
                      transport=SimulatedTransport(ErrorModel(entry_error_rate=0), seed=0, stream=stream))


def test_job_contexts_carry_the_reveal_time_the_started_work_and_the_downtime(
        case: tuple[Instance, Schedule, Disruption]) -> None:
    instance, schedule, disruption = case
    state = ExecutionState.at(instance, schedule, disruption)
    contexts = replan_contexts(state)
    starts = schedule.starts()
    for ctx in contexts:
        assert ctx.release == 10
        assert ctx.fixed == {s: (starts[(j, s)], starts[(j, s)] + state.durations[(j, s)])
                             for j, s in state.frozen if j == ctx.job}
        visits_2 = any(m == 2 for m, _ in ctx.operations)
        assert any(w.reason == "downtime" and (w.machine, w.start, w.end) == (2, 10, 18) for w in ctx.busy) == visits_2
        assert [d for _, d in ctx.operations] == [state.durations[(ctx.job, s)] for s in range(len(ctx.operations))]


def test_a_flawless_agent_session_is_valid_against_the_disruption(case: tuple[Instance, Schedule, Disruption]) -> None:
    instance, schedule, disruption = case
    state = ExecutionState.at(instance, schedule, disruption)
    planner = _flawless()
    contexts = replan_contexts(state)
    proposals, _ = first_proposals(instance, planner, contexts)
    session = feedback_rounds(instance, planner, contexts, proposals, rounds=0, disruption=disruption,
                              baseline=schedule)
    assert session.valid and validate(instance, session.plan, disruption=disruption, baseline=schedule).valid
    # The same draft checked without the disruption breaks the nominal duration: the session did check with it.
    assert not validate(instance, session.plan).valid


def test_feedback_names_the_disruption_rules_the_agents_broke(case: tuple[Instance, Schedule, Disruption]) -> None:
    """A job agent that starts its free steps too early hears about the reveal time in the next round."""
    instance, schedule, disruption = case
    state = ExecutionState.at(instance, schedule, disruption)
    contexts = replan_contexts(state)
    planner = _flawless()
    proposals, _ = first_proposals(instance, planner, contexts)
    job = next(j for j in range(instance.num_jobs) if any(s not in contexts[j].fixed for s in range(6)))
    early = [o.model_copy(update={"start": o.start - 10, "end": o.end - 10})
             if o.step not in contexts[job].fixed else o for o in proposals[job].operations]
    proposals[job] = proposals[job].model_copy(update={"operations": early})
    session = feedback_rounds(instance, planner, contexts, proposals, rounds=1, disruption=disruption,
                              baseline=schedule)
    assert session.rounds[0].by_code.get("started_in_past", 0) > 0 and job in session.rounds[1].jobs_asked
    asked = [e for e in planner.recorder.exchanges if e.job == job and e.attempt == 1]
    assert asked and "had not started by the disruption at 10" in asked[0].messages[-1]["content"]


def test_whole_instance_prompt_after_a_disruption(case: tuple[Instance, Schedule, Disruption]) -> None:
    instance, schedule, disruption = case
    state = ExecutionState.at(instance, schedule, disruption)
    messages = single_messages(instance, state=state)
    doc = context_of_messages(messages)
    assert doc["task"] == "replan" and doc["release"] == 10
    assert doc["downtime"] == [{"machine": 2, "start": 10, "end": 18}]
    assert {(f["job"], f["step"]) for f in doc["fixed"]} == state.frozen
    changed = next(iter(disruption.duration_changes.items()))
    assert doc["jobs"][changed[0][0]][changed[0][1]]["duration"] == changed[1]
    assert "already started" in messages[0]["content"] and "after the disruption" in messages[1]["content"]
    assert context_of_messages(single_messages(instance))["task"] == "schedule"  # the static prompt is unchanged


def test_flawless_baselines_replan_validly(case: tuple[Instance, Schedule, Disruption]) -> None:
    instance, schedule, disruption = case
    state = ExecutionState.at(instance, schedule, disruption)
    single = single_agent(instance, _flawless(), state=state)
    assert validate(instance, single.plan, disruption=disruption, baseline=schedule).valid
    pc = planner_critic(instance, _flawless(), turns=3, state=state)
    assert validate(instance, pc.plan, disruption=disruption, baseline=schedule).valid and pc.turns == 1


def test_the_simulated_critic_checks_the_disruption(case: tuple[Instance, Schedule, Disruption]) -> None:
    """A re-plan that moves a started operation is flagged by a critic that notices everything."""
    instance, schedule, disruption = case
    state = ExecutionState.at(instance, schedule, disruption)
    good = SimulatedTransport(ErrorModel(entry_error_rate=0)).complete(single_messages(instance, state=state),
                                                                       key=ExchangeKey(role="single"))
    ops = [ProposedOperation(**o) for o in json.loads(good.text)["operations"]]
    critic = SimulatedTransport(ErrorModel(critic_detection_rate=1.0))
    approve = json.loads(critic.complete(critic_messages(instance, ops, state), key=ExchangeKey(role="critic")).text)
    assert approve == {"approved": True, "problems": []}
    job, step = min(state.frozen)
    moved = [o.model_copy(update={"start": o.start + 1, "end": o.end + 1}) if (o.job, o.step) == (job, step)
             else o for o in ops]
    review = json.loads(critic.complete(critic_messages(instance, moved, state), key=ExchangeKey(role="critic")).text)
    assert not review["approved"] and any("had started" in p["problem"] for p in review["problems"])


def test_a_stream_draws_apart_from_the_static_answers() -> None:
    messages = single_messages(get_instance("la01"))
    key = ExchangeKey(role="single")
    plain, same = SimulatedTransport(seed=3), SimulatedTransport(seed=3, stream="")
    other = SimulatedTransport(seed=3, stream="replan:breakdown")
    assert plain.complete(messages, key=key).text == same.complete(messages, key=key).text
    assert plain.complete(messages, key=key).text != other.complete(messages, key=key).text
