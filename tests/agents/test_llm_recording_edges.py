"""Record and replay at the edges: a replay gives back everything an answer carried (the finish reason, estimated
tokens) at no cost, raises a recorded failure again with its class (a replay's own "no recorded answer" too),
names where it fails, and a bad record is named by its place (its event's seq, or its index when it has none)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, LlmRequestError, LlmUnavailable, Message
from alas_argo.agents.llm_recording import (
    Exchange,
    ExchangeRecorder,
    ReplayMissing,
    ReplayTransport,
    exchanges_from_events,
    exchanges_from_file,
)
from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.settings import LlmSettings

CUT = '{"operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}, {"job": 0, "st'


class CutOff:
    """An endpoint whose answer hits the token limit and whose usage is estimated (no usage in its body)."""

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        return ChatResult(text=CUT, model="m", prompt_tokens=40, completion_tokens=12, estimated=True,
                          latency_s=0.8, calls=2, finish_reason="length")


def test_a_replay_gives_back_the_finish_reason_and_the_estimate_at_no_cost(tiny: Instance) -> None:
    ctx = build_job_contexts(tiny)[0]
    live = LlmPlanner(LlmSettings(), transport=CutOff(), recorder=ExchangeRecorder())
    first = live.propose(ctx)
    (record,) = live.recorder.exchanges
    assert (record.finish_reason, record.estimated, record.latency_s, record.calls) == ("length", True, 0.8, 2)
    transport = ReplayTransport(live.recorder.exchanges)
    replayed = transport.complete(record.messages, key=ExchangeKey(job=0))
    assert (replayed.finish_reason, replayed.estimated, replayed.latency_s, replayed.calls) == ("length", True,
                                                                                               0.0, 0)
    assert replayed.extra == {"replayed": True, "prompt_matches": True}
    # Through the planner: the same notes (the cut-off one included) and the same estimated exchange count.
    again = LlmPlanner(LlmSettings(), transport=ReplayTransport(live.recorder.exchanges)).propose(ctx)
    assert "the answer was cut off at the completion token limit" in again.notes
    assert again.notes == first.notes
    assert again.usage["estimated_exchanges"] == first.usage["estimated_exchanges"] == 1


def test_a_replay_s_missing_answer_is_replayed_as_a_request_error(tiny: Instance) -> None:
    # A run made with --llm-replay records its own "no recorded answer" (ReplayMissing, a permanent request
    # error). Replaying that run must raise it again as such, not as a transient LlmUnavailable.
    ctx = build_job_contexts(tiny)[0]
    recorded = Exchange(job=0, messages=[], response='{"operations": []}')
    first_replay = LlmPlanner(LlmSettings(), transport=ReplayTransport([recorded]), recorder=ExchangeRecorder())
    first_replay.propose(ctx)
    with pytest.raises(ReplayMissing):
        first_replay.propose(ctx)
    assert first_replay.recorder.exchanges[1].error_type == "ReplayMissing"
    second_replay = LlmPlanner(LlmSettings(), transport=ReplayTransport(first_replay.recorder.exchanges))
    second_replay.propose(ctx)
    with pytest.raises(ReplayMissing, match=r"replayed failure: .*the recorded run has no") as raised:
        second_replay.propose(ctx)
    assert isinstance(raised.value, LlmRequestError) and not raised.value.transient


@pytest.mark.parametrize(("record", "error", "message"), [
    (Exchange(messages=[], status="error", error_type="SomethingElse", error="boom"), LlmUnavailable,
     "replayed failure: boom"),
    (Exchange(messages=[], status="ok", response=None), LlmUnavailable, "replayed failure: no answer"),
    (Exchange(messages=[], status="error", error_type="LlmRequestError", response="text kept by hand"),
     LlmRequestError, "replayed failure: no answer"),
])
def test_a_recorded_failure_is_raised_again_where_the_replay_is(record: Exchange, error: type[Exception],
                                                                message: str) -> None:
    # An unknown error class is transient; a record without an answer, or marked as an error, is a failure.
    with pytest.raises(error) as raised:
        ReplayTransport([record]).complete([], key=ExchangeKey())
    assert isinstance(raised.value, LlmRequestError | LlmUnavailable)
    assert (raised.value.message, raised.value.where) == (message, "llm replay")


def test_no_recorded_answer_names_the_agent_where_the_replay_is() -> None:
    with pytest.raises(ReplayMissing) as raised:
        ReplayTransport([]).complete([], key=ExchangeKey(role="supervisor", job=None, attempt=1))
    assert raised.value.message == "the recorded run has no (further) answer for supervisor agent, job None, attempt 1"
    assert raised.value.where == "llm replay"


def test_a_bad_exchange_without_a_seq_is_named_by_its_index() -> None:
    # Events handed as documents or objects without a seq are named by their position in what was given.
    good = {"type": "llm.exchange", "payload": Exchange(messages=[]).to_payload()}
    with pytest.raises(InputError) as as_document:
        exchanges_from_events([{"type": "run.started"}, good, {"type": "llm.exchange", "payload": {"job": 1}}])
    assert as_document.value.where == "event seq 2"
    assert as_document.value.message == "llm.exchange payload is not an exchange record: Field required"
    with pytest.raises(InputError) as as_object:
        exchanges_from_events([SimpleNamespace(), SimpleNamespace(type="llm.exchange", payload=None)])
    assert as_object.value.where == "event seq 1"
    assert as_object.value.message.startswith("llm.exchange payload is not an exchange record: ")


def test_a_missing_recording_is_named_with_the_system_s_reason(tmp_path: Path) -> None:
    path = tmp_path / "absent.jsonl"
    with pytest.raises(InputError) as raised:
        exchanges_from_file(path)
    assert raised.value.message == "cannot read the recorded exchanges: No such file or directory"
    assert raised.value.where == str(path)
