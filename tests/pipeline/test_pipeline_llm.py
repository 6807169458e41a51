"""`alas run --planner llm` end to end against a loopback OpenAI-compatible server: the model's mistakes are
caught by the validator and repaired, unusable answers fall back, every exchange is logged, and the run can
be replayed from the log with no endpoint."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alas_argo import metrics
from alas_argo.agents.llm_recording import ExchangeRecorder, log_sink
from alas_argo.jssp.instance import Instance
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline import RunConfig, run_pipeline
from alas_argo.settings import load_settings
from tests.agents.llm_server import Reply, ScriptedLlmServer, context_of, running_server

ANSWERS = {
    0: [(0, 0, 0, 3), (1, 1, 3, 5), (2, 2, 5, 7)],
    1: [(0, 0, 0, 2), (1, 2, 7, 8), (2, 1, 8, 12)],  # step 0 overlaps job 0 on machine 0: a mistake
}
PROSE = "Job 2 should go first on machine 1, then machine 2, then machine 0."


def _answer(job: int) -> str:
    if job not in ANSWERS:
        return PROSE  # unusable: the pipeline falls back to the heuristic agent for this job
    return json.dumps({"operations": [{"job": job, "step": s, "machine": m, "start": a, "end": b}
                                      for s, m, a, b in ANSWERS[job]]})


@pytest.fixture
def server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


def _spec(log: ExecutionLog, base_url: str | None, replay: list[Any] | None = None) -> dict[str, Any]:
    settings = load_settings(llm={"base_url": base_url, "model": "scripted", "timeout": 2.0, "max_retries": 0})
    return {"settings": settings, "recorder": ExchangeRecorder(sink=log_sink(log)), "replay_events": replay}


def test_llm_mistakes_are_caught_repaired_logged_and_replayable(
        tmp_path: Path, server: ScriptedLlmServer, tiny: Instance) -> None:
    server.route = lambda request: Reply(content=_answer(context_of(request)["job"]))
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny.to_json()))
    config = RunConfig(instance=str(path), planner="llm", time_limit=1, repair_budget=1)
    store = FsStore(tmp_path / "store")
    log = ExecutionLog(store, "llm-1")
    result = run_pipeline(config, log, agent_spec=_spec(log, server.url))
    assert result.succeeded, result.run and result.run.errors
    assert result.final is not None and result.final.makespan == 11  # the optimizer reaches tiny's optimum
    events = log.events()
    exchanges = [e for e in events if e.type == EventType.LLM_EXCHANGE]
    assert len(exchanges) == 3 and len(server.requests) == 3
    failed = [e for e in events if e.type == EventType.VALIDATION_FAILED and e.node_id == "check_plan"]
    assert failed, "the model's overlap reached the validator"
    codes = {v["code"] for v in failed[0].payload["report"]["violations"]}
    assert "machine_overlap" in codes
    fallbacks = [e for e in events if e.type == EventType.PLAN_PROPOSED and e.payload.get("fallback")]
    assert [e.payload["job"] for e in fallbacks] == [2]
    assert log.verify().ok
    tokens = metrics.REGISTRY.get_sample_value("alas_llm_tokens_total", {"kind": "prompt"})
    assert tokens is not None and tokens >= 3 * 50  # the scripted server reports 50 prompt tokens per call

    # Replay: the recorded answers, no endpoint, no new request to the server.
    replay_log = ExecutionLog(store, "llm-replay")
    again = run_pipeline(config, replay_log, agent_spec=_spec(replay_log, None, replay=events))
    assert again.succeeded and len(server.requests) == 3
    assert again.final is not None and again.final.makespan == result.final.makespan
    replayed = [e for e in replay_log.events() if e.type == EventType.LLM_EXCHANGE]
    assert len(replayed) == 3


def test_unreachable_endpoint_falls_back_and_never_commits_invalid(tmp_path: Path, tiny: Instance) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny.to_json()))
    log = ExecutionLog(FsStore(tmp_path / "store"), "llm-down")
    config = RunConfig(instance=str(path), planner="llm", time_limit=1, repair_budget=1)
    result = run_pipeline(config, log, agent_spec=_spec(log, "http://127.0.0.1:9/v1"))
    assert result.succeeded and result.final_valid
    fallbacks = [e for e in log.events() if e.type == EventType.PLAN_PROPOSED and e.payload.get("fallback")]
    assert len(fallbacks) == 3 and all("no answer" in e.payload["reason"] for e in fallbacks)
