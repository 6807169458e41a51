"""The LLM planner's edges, without an endpoint: what a failed call records and counts (its key, its error, its
latency from the injected clock), what the supervisor's and the critic's questions record and return, what the
supervisor is asked, that a job agent keeps only its own job's operations, and the endpoint's configuration.

A scripted transport stands in for the endpoint, so every value asserted is exact (no HTTP, no wall clock)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobProposal, ProposedOperation
from alas_argo.agents.llm import LlmPlanner, client_from_settings, make_llm_backend
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, LlmUnavailable, Message
from alas_argo.agents.llm_prompts import supervisor_messages
from alas_argo.agents.llm_recording import ExchangeRecorder, ReplayTransport
from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.scrubbing import registered
from alas_argo.settings import LlmSettings

PROSE_NOTE = "unusable answer: the model answered in prose without any JSON"
CUT_OFF_NOTE = "the answer was cut off at the completion token limit"


class Scripted:
    """A transport answering from a script: a text (answered) or an exception (raised); it keeps every request."""

    def __init__(self, *script: str | Exception, finish_reason: str | None = None) -> None:
        self.script = list(script)
        self.finish_reason = finish_reason
        self.requests: list[tuple[list[Message], ExchangeKey]] = []

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        self.requests.append((messages, key))
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        return ChatResult(text=step, model="scripted", prompt_tokens=5, completion_tokens=2,
                          finish_reason=self.finish_reason)


def ticking(*times: float) -> Iterator[float]:
    yield from times


def test_a_failed_call_is_recorded_under_its_key_with_its_error_and_the_clock_s_latency(tiny: Instance) -> None:
    # The latency of a failed call is the injected clock's difference (12.5 - 10.0), not a sum; the failure
    # counts as a failure, not as an unusable answer; the callback sees the same numbers.
    error = LlmUnavailable("LLM endpoint failed after 1 call(s): refused", where="http://llm/v1/chat/completions")
    clock = ticking(10.0, 12.5)
    seen: list[dict[str, object]] = []
    recorder = ExchangeRecorder()
    planner = LlmPlanner(LlmSettings(), transport=Scripted(error), recorder=recorder, on_usage=seen.append,
                         clock=lambda: next(clock))
    ctx = build_job_contexts(tiny)[1].model_copy(update={"attempt": 2})
    with pytest.raises(LlmUnavailable) as raised:
        planner.propose(ctx)
    assert raised.value is error
    (record,) = recorder.exchanges
    assert (record.role, record.job, record.attempt, record.status) == ("job", 1, 2, "error")
    assert (record.error_type, record.error, record.response) == ("LlmUnavailable", str(error), None)
    assert (record.latency_s, record.calls) == (2.5, 0)
    assert seen == [{"calls": 0, "exchanges": 1, "failures": 1, "unusable": 0, "replayed": 0, "prompt_tokens": 0,
                     "completion_tokens": 0, "total_tokens": 0, "estimated_exchanges": 0, "latency_s": 2.5,
                     "role": "job"}]
    assert planner.usage == {k: v for k, v in seen[0].items() if k != "role"}


def test_a_failed_supervisor_call_is_recorded_as_the_supervisor_s(tiny: Instance) -> None:
    # Recorded under role "supervisor", no job and the attempt asked: a replay raises the failure again for it.
    recorder = ExchangeRecorder()
    planner = LlmPlanner(LlmSettings(), transport=Scripted(LlmUnavailable("down")), recorder=recorder)
    with pytest.raises(LlmUnavailable):
        planner.supervise("tiny", [], attempt=3)
    (record,) = recorder.exchanges
    assert (record.role, record.job, record.attempt, record.error) == ("supervisor", None, 3, "down")
    replay = LlmPlanner(LlmSettings(), transport=ReplayTransport(recorder.exchanges))
    with pytest.raises(LlmUnavailable, match="replayed failure: down"):
        replay.supervise("tiny", [], attempt=3)


def test_a_replayed_run_costs_no_latency(tiny: Instance) -> None:
    # The totals start at zero: a replay (latency 0 per exchange) sums to exactly 0.0 seconds.
    live = LlmPlanner(LlmSettings(), transport=Scripted('{"operations": []}'), recorder=ExchangeRecorder())
    ctx = build_job_contexts(tiny)[0]
    live.propose(ctx)
    replay = LlmPlanner(LlmSettings(), transport=ReplayTransport(live.recorder.exchanges))
    replay.propose(ctx)
    assert replay.usage["latency_s"] == 0.0 and replay.usage["replayed"] == 1


def test_the_supervisor_is_asked_about_the_instance_the_proposals_and_the_started_work(tiny: Instance) -> None:
    ops = [ProposedOperation(job=0, step=0, machine=0, start=0, end=3)]
    proposals = [JobProposal(job=0, operations=ops, backend="llm")]
    fixed = {0: {0: (0, 3)}}
    transport = Scripted('{"operations": []}', '{"operations": []}')
    planner = LlmPlanner(LlmSettings(), transport=transport)
    planner.supervise("tiny", proposals, fixed, attempt=2)
    planner.supervise("tiny", proposals)
    (first, first_key), (_, second_key) = transport.requests
    assert first == supervisor_messages("tiny", proposals, fixed)
    assert '"fixed":[{"job":0,"step":0,"start":0,"end":3}]' in first[1]["content"]
    assert "for instance tiny." in first[1]["content"]
    assert first_key == ExchangeKey(role="supervisor", job=None, attempt=2)
    assert second_key == ExchangeKey(role="supervisor", job=None, attempt=0)


def test_a_prose_supervisor_answer_is_an_empty_list_with_its_note_recorded() -> None:
    recorder = ExchangeRecorder()
    planner = LlmPlanner(LlmSettings(), transport=Scripted("Merge them as proposed."), recorder=recorder)
    answer = planner.supervise("tiny", [])
    assert answer.operations == [] and answer.notes == [PROSE_NOTE]
    assert recorder.exchanges[0].notes == [PROSE_NOTE]
    assert planner.usage["unusable"] == 1


def test_a_critic_s_answer_is_returned_and_its_notes_recorded() -> None:
    recorder = ExchangeRecorder()
    planner = LlmPlanner(LlmSettings(), transport=Scripted("Job 2 waits too long.", "  \n",
                                                           finish_reason="length"), recorder=recorder)
    key = ExchangeKey(role="critic", job=None, attempt=1)
    assert planner.ask_text([{"role": "user", "content": "review"}], key) == "Job 2 waits too long."
    assert planner.ask_text([{"role": "user", "content": "review"}], key) == "  \n"
    assert [e.notes for e in recorder.exchanges] == [[CUT_OFF_NOTE], [CUT_OFF_NOTE]]
    assert planner.usage["unusable"] == 1  # only the blank answer


def test_a_job_agent_keeps_only_its_own_job_s_operations(tiny: Instance) -> None:
    # The agent's job is handed to the parser: another job's operations are dropped by name, and an operation
    # without a "job" field is taken as the agent's (the supervisor's parser would refuse both differently).
    other = json.dumps({"operations": [{"job": 1, "step": 0, "machine": 0, "start": 0, "end": 2}]})
    unnamed = json.dumps({"operations": [{"step": 0, "machine": 1, "start": 0, "end": 4}]})
    planner = LlmPlanner(LlmSettings(), transport=Scripted(other, unnamed))
    ctx = build_job_contexts(tiny)[2]
    dropped = planner.propose(ctx)
    assert dropped.operations == []
    assert "operation #0 is for job 1, not this agent's job 2: dropped" in dropped.notes
    kept = planner.propose(ctx)
    assert [(o.job, o.step) for o in kept.operations] == [(2, 0)]


def test_the_endpoint_client_carries_the_settings_and_registers_the_key_for_scrubbing() -> None:
    # A fresh key per run: the registry is process-wide, and mutmut forks its mutants from a process that has
    # already run this test once (a fixed key would be registered already).
    key = f"sk-edges-{uuid.uuid4().hex}"
    assert key not in registered()
    client = client_from_settings(LlmSettings(base_url="http://127.0.0.1:9/v1", api_key=key, temperature=0.7,
                                              timeout=3.0, max_retries=1))
    assert (client.temperature, client.timeout, client.max_retries) == (0.7, 3.0, 1)
    assert key in registered()


def test_no_endpoint_and_no_exchanges_are_named() -> None:
    with pytest.raises(InputError) as no_endpoint:
        client_from_settings(LlmSettings())
    assert no_endpoint.value.message == ("no LLM endpoint configured: pass --llm-base-url or set OPENAI_BASE_URL "
                                         "(or ALAS_LLM__BASE_URL)")
    with pytest.raises(InputError) as no_exchange:
        make_llm_backend(LlmSettings(), replay_events=[])
    assert no_exchange.value.message == "the run to replay recorded no llm.exchange events"
    assert no_exchange.value.where == "--llm-replay"
