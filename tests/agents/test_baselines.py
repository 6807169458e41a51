"""The single-agent and planner/critic baselines, against the simulator and a scripted endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from alas_argo.agents.baselines import critic_messages, planner_critic, single_agent, single_messages
from alas_argo.agents.contracts import ProposedOperation
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ExchangeKey, HttpChatClient
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport, context_of_messages
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings
from tests.agents.llm_server import Reply, ScriptedLlmServer, running_server


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


def test_single_agent_prompt_holds_the_whole_instance() -> None:
    instance = get_instance("ft06")
    doc = context_of_messages(single_messages(instance))
    assert len(doc["jobs"]) == 6 and doc["jobs"][0][0] == {"machine": 2, "duration": 1}


def test_a_flawless_single_agent_is_valid() -> None:
    instance = get_instance("la01")
    p = LlmPlanner(LlmSettings(), transport=SimulatedTransport(ErrorModel(entry_error_rate=0)))
    result = single_agent(instance, p)
    assert validate(instance, result.plan).valid and p.usage["exchanges"] == 1


def test_planner_critic_over_http(llm_server: ScriptedLlmServer) -> None:
    """Planner answers with a precedence error; the critic names job 0; the revision is right; approved."""
    instance = get_instance("ft06")
    good = SimulatedTransport(ErrorModel(entry_error_rate=0)).complete(single_messages(instance), key=ExchangeKey())
    ops = json.loads(good.text)["operations"]
    bad = [dict(o, start=0, end=o["end"] - o["start"]) if (o["job"], o["step"]) == (0, 1) else o for o in ops]
    llm_server.script(Reply(content=json.dumps({"operations": bad})),
                      Reply(content=json.dumps({"approved": False, "problems": [{"job": 0, "problem": "order"}]})),
                      Reply(content=good.text),
                      Reply(content='{"approved": true, "problems": []}'))
    p = LlmPlanner(LlmSettings(), transport=HttpChatClient(llm_server.url, "m", max_retries=0))
    result = planner_critic(instance, p, turns=5)
    assert validate(instance, result.plan).valid and result.turns == 2
    assert [(e.role, e.attempt) for e in p.recorder.exchanges] == [
        ("planner", 0), ("critic", 0), ("planner", 1), ("critic", 1)]
    revision = context_of_messages(llm_server.requests[2]["body"]["messages"])
    assert revision["critique"] == [{"job": 0, "problem": "order"}] and len(revision["previous"]) == 36
    reviewed = critic_messages(instance, [ProposedOperation(**o) for o in bad])
    assert context_of_messages(llm_server.requests[1]["body"]["messages"]) == context_of_messages(reviewed)
