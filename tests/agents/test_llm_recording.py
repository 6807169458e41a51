"""Record and replay: every exchange is recorded, and a replay reproduces the run with no endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.llm import LlmPlanner, make_llm_backend
from alas_argo.agents.llm_client import ExchangeKey, LlmAuthError, LlmUnavailable
from alas_argo.agents.llm_recording import (
    Exchange,
    ExchangeRecorder,
    ReplayMissing,
    ReplayTransport,
    exchanges_from_events,
    exchanges_from_file,
    log_sink,
)
from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.log import ExecutionLog, FsStore
from alas_argo.log.events import EventType
from alas_argo.settings import LlmSettings
from tests.agents.llm_server import Reply, ScriptedLlmServer, context_of, running_server


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


def earliest_answer(request: dict[str, Any]) -> Reply:
    """A model that chains its job's operations from the release time (ignoring busy windows)."""
    ctx = context_of(request)
    t, ops = ctx["release"], []
    for op in ctx["operations"]:
        ops.append({"job": ctx["job"], "step": op["step"], "machine": op["machine"], "start": t,
                    "end": t + op["duration"]})
        t += op["duration"]
    return Reply(content="Here:\n```json\n" + json.dumps({"operations": ops}) + "\n```")


def test_record_then_replay_reproduces_proposals_without_endpoint(
        llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.route = earliest_answer
    llm_server.script(Reply(status=500))  # job 0's first call fails; it is not retried (max_retries 0)
    events: list[dict[str, object]] = []
    recorder = ExchangeRecorder(sink=lambda e: events.append({"type": EventType.LLM_EXCHANGE.value,
                                                               "payload": e.to_payload()}))
    live = LlmPlanner(LlmSettings(base_url=llm_server.url, max_retries=0, timeout=2), recorder=recorder)
    ctxs = build_job_contexts(tiny)
    with pytest.raises(LlmUnavailable):
        live.propose(ctxs[0])
    first = [live.propose(c) for c in ctxs]
    retry_ctx = ctxs[1].model_copy(update={"attempt": 1, "feedback": ["step 0 overlaps job 0 on machine 0"]})
    first.append(live.propose(retry_ctx))
    assert len(events) == 5 and events == recorder.events()
    json.dumps(events)  # the payloads are JSON-ready as they go into the log

    stored = [{"seq": i, "type": "run.started", "payload": {}} for i in range(2)] + events
    replay = make_llm_backend(LlmSettings(), replay_events=stored)  # no base_url: nothing to contact
    with pytest.raises(LlmUnavailable, match="replayed failure"):
        replay.propose(ctxs[0])  # the recorded failure comes back in order
    second = [replay.propose(c) for c in ctxs]
    second.append(replay.propose(retry_ctx))
    assert [p.operations for p in second] == [p.operations for p in first]
    assert [p.notes for p in second] == [p.notes for p in first]
    assert replay.usage["calls"] == 0 and replay.usage["replayed"] == 4
    assert replay.usage["total_tokens"] == live.usage["total_tokens"]
    assert isinstance(replay.transport, ReplayTransport) and replay.transport.remaining() == 0
    with pytest.raises(ReplayMissing, match="job 0, attempt 0"):
        replay.propose(ctxs[0])


def test_exchange_records_what_was_said_and_what_was_wrong(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.script(Reply(content="Job 0 runs first.", usage={"prompt_tokens": 9, "completion_tokens": 4}))
    recorder = ExchangeRecorder()
    LlmPlanner(LlmSettings(base_url=llm_server.url, api_key="sk-secret", max_retries=0),
               recorder=recorder).propose(build_job_contexts(tiny)[0])
    (record,) = recorder.exchanges
    assert (record.role, record.job, record.attempt, record.status) == ("job", 0, 0, "ok")
    assert record.response == "Job 0 runs first."
    assert record.notes == ["unusable answer: the model answered in prose without any JSON"]
    assert (record.prompt_tokens, record.completion_tokens, record.calls) == (9, 4, 1)
    assert record.messages[0]["role"] == "system" and "CONTEXT:" in record.messages[1]["content"]
    assert "sk-secret" not in json.dumps(recorder.events())


def test_replay_detects_a_changed_prompt(tiny: Instance) -> None:
    ctx = build_job_contexts(tiny)[0]
    recorded = Exchange(job=0, messages=[{"role": "user", "content": "an older prompt"}],
                        response='{"operations": []}')
    proposal = LlmPlanner(LlmSettings(), transport=ReplayTransport([recorded])).propose(ctx)
    assert "replayed answer was recorded for a different prompt" in proposal.notes


def test_replayed_errors_keep_their_class() -> None:
    recorded = Exchange(job=3, messages=[], status="error", error_type="LlmAuthError", error="HTTP 401")
    with pytest.raises(LlmAuthError, match="replayed failure: HTTP 401"):
        ReplayTransport([recorded]).complete([], key=ExchangeKey(job=3))


def test_bad_exchange_payload_names_the_event() -> None:
    events = [{"seq": 7, "type": "llm.exchange", "payload": {"role": "job"}}]
    with pytest.raises(InputError, match="event seq 7"):
        exchanges_from_events(events)


def test_recorded_exchanges_read_back_from_a_file(tmp_path: Path) -> None:
    recorded = [Exchange(job=1, messages=[{"role": "user", "content": "hi"}], text="[]"),
                Exchange(role="supervisor", attempt=2, messages=[], status="error", error_type="LlmUnavailable")]
    path = tmp_path / "case.jsonl"
    path.write_text(recorded[0].model_dump_json() + "\n\n" + recorded[1].model_dump_json() + "\n")
    assert exchanges_from_file(path) == recorded


@pytest.mark.parametrize(("line", "fragment"), [
    ('{"role":"job","job":1,"attempt":0,"model":"simulat', "Invalid JSON: EOF while parsing a string"),
    ('{"role": "job", "job": "one"}', "Input should be a valid integer"),
    ("[" * 5000, "Invalid JSON: recursion limit exceeded")])
def test_a_recording_line_that_is_not_an_exchange_is_named(tmp_path: Path, line: str, fragment: str) -> None:
    path = tmp_path / "case.jsonl"
    path.write_text(Exchange(job=1, messages=[]).model_dump_json() + "\n" + line + "\n")
    with pytest.raises(InputError, match="not an exchange record") as e:
        exchanges_from_file(path)
    assert e.value.where == f"{path} line 2" and fragment in e.value.message


def test_an_unreadable_recording_is_named(tmp_path: Path) -> None:
    path = tmp_path / "case.jsonl"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(InputError, match="cannot read the recorded exchanges") as e:
        exchanges_from_file(path)
    assert e.value.where == str(path)


def test_exchanges_go_through_the_execution_log_and_replay_from_it(
        llm_server: ScriptedLlmServer, tiny: Instance, tmp_path: Path) -> None:
    log = ExecutionLog(FsStore(tmp_path), "run-1")
    llm_server.route = earliest_answer
    live = LlmPlanner(LlmSettings(base_url=llm_server.url, max_retries=0, timeout=2),
                      recorder=ExchangeRecorder(sink=log_sink(log, node_id="agents")))
    ctxs = build_job_contexts(tiny)
    first = [live.propose(c) for c in ctxs]
    stored = ExecutionLog(FsStore(tmp_path), "run-1").events()
    assert [(e.type, e.node_id, e.payload["job"]) for e in stored] == [
        (EventType.LLM_EXCHANGE, "agents", j) for j in range(3)]
    assert ExecutionLog(FsStore(tmp_path), "run-1").verify().ok
    replay = make_llm_backend(LlmSettings(), replay_events=stored)
    assert [replay.propose(c).operations for c in ctxs] == [p.operations for p in first]
