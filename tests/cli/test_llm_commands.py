"""`alas llm ping` and `alas bench llm` against a scripted loopback endpoint (and without one)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from alas_argo.agents.heuristic import earliest_fit
from alas_argo.cli import main
from tests.agents.llm_server import Reply, ScriptedLlmServer, context_of, running_server


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


@pytest.fixture(autouse=True)
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ALAS_LLM__BASE_URL", "ALAS_LLM__API_KEY"):
        monkeypatch.delenv(var, raising=False)


def careful_model(request: dict[str, Any]) -> Reply:
    """Earliest fit around the busy windows in the prompt; job 1 answers in prose (a fallback case)."""
    ctx = context_of(request)
    if ctx["job"] == 1:
        return Reply(content="I would schedule it as early as possible.")
    ops, ready = [], ctx["release"]
    for op in ctx["operations"]:
        windows = sorted((w["start"], w["end"]) for w in ctx["busy"] if w["machine"] == op["machine"])
        start = earliest_fit(windows, ready, op["duration"])
        ops.append({"job": ctx["job"], "step": op["step"], "machine": op["machine"], "start": start,
                    "end": start + op["duration"]})
        ready = start + op["duration"]
    return Reply(content=json.dumps({"operations": ops}), usage=None)


def test_bench_without_endpoint_skips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm"]) == 0
    assert "skipped: no LLM endpoint configured" in capsys.readouterr().out
    assert main(["bench", "llm", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["skipped"] is True and doc["rows"] == []


@pytest.mark.parametrize("mode", [[], ["--disruptions", "breakdown"], ["--compare"]])
def test_bench_without_endpoint_still_refuses_bad_flags(mode: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """A skipped experiment is no excuse for a typo: `--suite nope` was skipped with exit 0, as if it were fine."""
    assert main(["bench", "llm", *mode, "--suite", "nope"]) == 2
    captured = capsys.readouterr()
    assert "unknown suite or instance 'nope'" in captured.err and "skipped" not in captured.out
    if not mode:
        assert main(["bench", "llm", "--context-scopes", "wide"]) == 2
        assert "--context-scopes: unknown value 'wide'; known: minimal, normal, full" in capsys.readouterr().err
        assert main(["bench", "llm", "--context-scopes", "full,minimal,full"]) == 2
        assert "--context-scopes: full given more than once" in capsys.readouterr().err


def test_bench_compares_three_planners(llm_server: ScriptedLlmServer, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.route = careful_model
    code = main(["bench", "llm", "--compare", "--llm-base-url", llm_server.url, "--suite", "ft06", "--time-limit",
                 "1", "--llm-retries", "0", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["planner"]: r for r in doc["rows"]}
    assert set(rows) == {"llm", "heuristic", "cpsat"}
    assert all(r["valid"] for r in rows.values())
    assert rows["cpsat"]["makespan"] == 55
    llm = rows["llm"]
    assert llm["fallbacks"] == 1 and llm["raw_valid"] is True and llm["calls"] == 6
    assert llm["tokens"] > 0 and doc["usage"]["unusable"] == 1
    assert rows["heuristic"]["raw_valid"] is True and rows["heuristic"]["calls"] == 0
    assert len(llm_server.requests) == 6


def test_bench_table(llm_server: ScriptedLlmServer, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.route = careful_model
    assert main(["bench", "llm", "--compare", "--llm-base-url", llm_server.url, "--suite", "ft06",
                 "--time-limit", "1"]) == 0
    out = capsys.readouterr().out
    assert "llm usage: 6 call(s)" in out and "cpsat" in out


def test_bench_stops_on_bad_credentials(llm_server: ScriptedLlmServer) -> None:
    llm_server.route = lambda _request: Reply(status=401)
    assert main(["bench", "llm", "--llm-base-url", llm_server.url, "--suite", "ft06"]) == 2
    assert len(llm_server.requests) == 1


def test_ping(llm_server: ScriptedLlmServer, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.script(Reply(content="pong", usage={"prompt_tokens": 20, "completion_tokens": 1}))
    assert main(["llm", "ping", "--llm-base-url", llm_server.url, "--llm-model", "m1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["answer"] == "pong" and doc["prompt_tokens"] == 20 and doc["calls"] == 1
    assert llm_server.requests[0]["body"]["model"] == "m1"


def test_ping_errors_have_meaningful_exit_codes(llm_server: ScriptedLlmServer,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["llm", "ping"]) == 2
    assert "no LLM endpoint configured" in capsys.readouterr().err
    llm_server.script(Reply(status=401))
    assert main(["llm", "ping", "--llm-base-url", llm_server.url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("alas: error: ") and "HTTP 401" in err and llm_server.url in err
    llm_server.script(Reply(status=503), Reply(status=503))
    assert main(["llm", "ping", "--llm-base-url", llm_server.url, "--llm-retries", "1"]) == 75
    assert "HTTP 503" in capsys.readouterr().err
