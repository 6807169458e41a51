"""`alas run --optimizer none` with simulated and HTTP LLM agents: the merged proposals are the plan, the
validator's violations go back to the agents for K rounds, every round is logged, and runs replay."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alas_argo.agents.llm_recording import ExchangeRecorder, log_sink
from alas_argo.agents.simulated import ErrorModel
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline import RunConfig, Variant, run_pipeline
from alas_argo.pipeline.inputs import run_inputs
from alas_argo.settings import load_settings
from tests.agents.llm_server import ScriptedLlmServer, running_server, simulated_route


@pytest.fixture
def server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


def _run(tmp_path: Path, run_id: str, spec: dict[str, Any] | None = None, **config: Any) -> Any:
    log = ExecutionLog(FsStore(tmp_path / "store"), run_id)
    spec = dict(spec or {})
    spec.setdefault("recorder", ExchangeRecorder(sink=log_sink(log)))
    result = run_pipeline(RunConfig(instance="abz5", optimizer="none", time_limit=1, repair_budget=1, **config),
                          log, agent_spec=spec)
    return result, log


def test_simulated_agents_in_charge_get_feedback_rounds(tmp_path: Path) -> None:
    result, log = _run(tmp_path, "sim-full", planner="simulated", seed=2)
    assert result.succeeded
    trace = result.summary()["feedback_trace"]
    assert trace[0] > 0 and len(trace) <= 6 and trace == [r["violations"] for r in result.feedback]
    events = log.events()
    jobs = get_instance("abz5").num_jobs
    exchanges = [e for e in events if e.type is EventType.LLM_EXCHANGE]
    assert len(exchanges) == jobs + sum(len(r["jobs_asked"]) for r in result.feedback[1:])
    assert {e.payload["model"] for e in exchanges} == {"simulated"}
    checks = [e for e in events if e.node_id == "merge" and e.type in (EventType.VALIDATION_FAILED,
                                                                       EventType.VALIDATION_PASSED)]
    assert [len(e.payload["report"]["violations"]) for e in checks] == trace
    assert result.final is not None and result.config.optimizer == "none"
    assert log.verify().ok


def test_no_validator_commits_the_agents_first_answers(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, "sim-nv", planner="simulated", seed=2, variant=Variant.NO_VALIDATOR)
    assert result.status == "succeeded" and not result.final_valid
    assert len(result.feedback) == 1 and result.feedback[0]["checked"] is False


def test_no_repair_fails_when_feedback_does_not_converge(tmp_path: Path) -> None:
    stubborn = {"error_model": ErrorModel(correction_rate=0.0)}
    result, _ = _run(tmp_path, "sim-nr", stubborn, planner="simulated", variant=Variant.NO_REPAIR, feedback_rounds=1)
    assert not result.succeeded and len(result.feedback) == 2 and result.feedback[-1]["violations"] > 0
    full, _ = _run(tmp_path, "sim-nr-full", stubborn, planner="simulated", feedback_rounds=1)
    assert full.succeeded  # the deterministic patch after K rounds


def test_a_simulated_run_replays_from_its_log(tmp_path: Path) -> None:
    first, log = _run(tmp_path, "sim-rec", planner="simulated", seed=4)
    replay, _ = _run(tmp_path, "sim-replay", {"replay_events": log.events()}, planner="simulated", seed=4)
    assert replay.final == first.final and replay.feedback == first.feedback


def test_llm_in_charge_over_http_then_replayed_without_the_endpoint(tmp_path: Path,
                                                                    server: ScriptedLlmServer) -> None:
    server.route = simulated_route(seed=1)
    settings = load_settings(llm={"base_url": server.url, "model": "scripted", "timeout": 5.0, "max_retries": 0})
    result, log = _run(tmp_path, "http", {"settings": settings}, planner="llm")
    assert result.succeeded and result.feedback[0]["violations"] > 0
    asked = len(server.requests)
    assert asked == len([e for e in log.events() if e.type is EventType.LLM_EXCHANGE])
    offline = load_settings(llm={"base_url": None})
    replay, _ = _run(tmp_path, "http-replay", {"settings": offline, "replay_events": log.events()}, planner="llm")
    assert replay.final == result.final and len(server.requests) == asked


def test_defaults_leave_older_inputs_unchanged() -> None:
    instance = get_instance("ft06")
    fields = run_inputs(RunConfig(instance="ft06"), instance, [])["inputs"]
    assert "optimizer" not in fields and "feedback_rounds" not in fields
    assert run_inputs(RunConfig(instance="ft06", optimizer="none"), instance, [])["inputs"]["optimizer"] == "none"


def test_run_report_shows_the_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one table row per line
    code = main(["run", "ft06", "--planner", "simulated", "--optimizer", "none", "--root", str(tmp_path),
                 "--run-id", "r1"])
    out = capsys.readouterr().out
    assert code == 0
    line = next(x for x in out.splitlines() if "violations per round (simulated LLM)" in x)
    assert " -> " in line and line.split("│")[2].strip().endswith("0")
