"""The chat-completions client against a scripted loopback server: answers, usage, retries, errors."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from alas_argo.agents.llm_client import (
    ExchangeKey,
    HttpChatClient,
    LlmAuthError,
    LlmEndpointError,
    LlmRequestError,
    LlmUnavailable,
    estimate_tokens,
)
from alas_argo.errors import PermanentError, TransientError
from tests.agents.llm_server import Reply, ScriptedLlmServer, Sleeps, running_server

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]
KEY = ExchangeKey(role="job", job=0, attempt=0)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


def client(server: ScriptedLlmServer, sleeps: Sleeps | None = None, **kw: object) -> HttpChatClient:
    options: dict[str, object] = {"timeout": 2.0, "max_retries": 2, "backoff": 0.5}
    options.update(kw)
    return HttpChatClient(server.url, "test-model", sleep=sleeps or Sleeps(), **options)  # type: ignore[arg-type]


def test_answer_usage_and_request_shape(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="hi", usage={"prompt_tokens": 12, "completion_tokens": 3}))
    result = HttpChatClient(llm_server.url, "test-model", api_key="sk-test").complete(MESSAGES, key=KEY)
    assert (result.text, result.prompt_tokens, result.completion_tokens, result.total_tokens) == ("hi", 12, 3, 15)
    assert not result.estimated and result.calls == 1 and result.model == "scripted-model"
    request = llm_server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    assert request["body"]["model"] == "test-model" and request["body"]["messages"] == MESSAGES
    assert request["body"]["temperature"] == 0.0


def test_missing_usage_is_estimated(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="x" * 40, usage=None))
    result = client(llm_server).complete(MESSAGES, key=KEY)
    assert result.estimated
    assert result.completion_tokens == 10
    assert result.prompt_tokens == estimate_tokens("be briefhello there") == 5


def test_429_retry_after_is_honoured_then_succeeds(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=429, headers={"Retry-After": "3"}), Reply(content="ok"))
    result = client(llm_server, sleeps).complete(MESSAGES, key=KEY)
    assert result.text == "ok" and result.calls == 2
    assert sleeps.waits == [3.0]


def test_retry_after_is_capped(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=429, headers={"Retry-After": "86400"}), Reply(content="ok"))
    client(llm_server, sleeps, max_backoff=7.0).complete(MESSAGES, key=KEY)
    assert sleeps.waits == [7.0]


def test_5xx_storm_becomes_transient_after_retries(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(*[Reply(status=503) for _ in range(5)])
    with pytest.raises(LlmUnavailable) as info:
        client(llm_server, sleeps, max_retries=2).complete(MESSAGES, key=KEY)
    assert isinstance(info.value, TransientError) and info.value.exit_code == 75
    assert "after 3 call(s)" in str(info.value) and "HTTP 503" in str(info.value)
    assert len(llm_server.requests) == 3
    assert sleeps.waits == [0.5, 1.0]  # exponential backoff without Retry-After


def test_500_then_success(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(status=500), Reply(content="fine"))
    assert client(llm_server).complete(MESSAGES, key=KEY).calls == 2


def test_401_is_permanent_names_endpoint_and_is_not_retried(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(status=401), Reply(content="never served"))
    with pytest.raises(LlmAuthError) as info:
        client(llm_server).complete(MESSAGES, key=KEY)
    assert isinstance(info.value, PermanentError) and isinstance(info.value, LlmEndpointError)
    assert llm_server.url + "/chat/completions" in str(info.value)
    assert "HTTP 401" in str(info.value)
    assert len(llm_server.requests) == 1


def test_400_is_a_request_error(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(status=400))
    with pytest.raises(LlmRequestError, match="HTTP 400: scripted error 400"):
        client(llm_server).complete(MESSAGES, key=KEY)


def test_body_that_is_not_a_completion(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(raw_body=b"<html>gateway</html>"))
    with pytest.raises(LlmRequestError, match="no chat completion"):
        client(llm_server).complete(MESSAGES, key=KEY)


def test_body_nested_deeper_than_json_decodes_is_not_a_completion(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(raw_body=b"[" * 5000))
    with pytest.raises(LlmRequestError, match="no chat completion"):
        client(llm_server).complete(MESSAGES, key=KEY)


def test_error_body_nested_deeper_than_json_decodes_is_quoted(llm_server: ScriptedLlmServer) -> None:
    # The detail reads at most 2048 bytes: deep enough for json's RecursionError.
    llm_server.script(Reply(status=400, raw_body=b"[" * 2048))
    with pytest.raises(LlmRequestError, match=r"HTTP 400: \[\[\[\["):
        client(llm_server).complete(MESSAGES, key=KEY)


def test_model_that_never_answers_times_out(llm_server: ScriptedLlmServer) -> None:
    # Each answer comes after the suite's 30 s per-test limit (the server wakes it when it stops): a client that
    # waited for it instead of giving up at its timeout fails the test, with no clock read here.
    llm_server.script(Reply(content="late", delay=60), Reply(content="late", delay=60))
    with pytest.raises(LlmUnavailable, match=r"no answer within 0\.2 s"):
        client(llm_server, timeout=0.2, max_retries=1).complete(MESSAGES, key=KEY)
    assert len(llm_server.requests) == 2


def test_connection_refused_is_transient() -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps = Sleeps()
    c = HttpChatClient(f"http://127.0.0.1:{port}/v1", "m", timeout=1.0, max_retries=1, sleep=sleeps)
    with pytest.raises(LlmUnavailable, match="cannot connect"):
        c.complete(MESSAGES, key=KEY)
    assert sleeps.waits == [0.5]


def test_retry_after_forms() -> None:
    from alas_argo.agents.llm_client import _retry_after

    assert _retry_after("2.5") == 2.5
    assert _retry_after("-3") == 0.0
    assert _retry_after(None) is None and _retry_after("soon") is None
    assert _retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=lambda: 1445412480.0) == 10.0


def test_endpoint_and_key_from_conventional_environment(llm_server: ScriptedLlmServer,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from alas_argo.agents.llm import make_llm_backend
    from alas_argo.settings import load_settings

    monkeypatch.delenv("ALAS_LLM__BASE_URL", raising=False)
    monkeypatch.delenv("ALAS_LLM__API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    backend = make_llm_backend(load_settings(llm={"model": "env-model"}))
    llm_server.script(Reply(content="ok"))
    assert backend.transport.complete(MESSAGES, key=KEY).text == "ok"
    assert llm_server.requests[0]["headers"]["Authorization"] == "Bearer sk-from-env"
    assert llm_server.requests[0]["body"]["model"] == "env-model"


@pytest.mark.parametrize("url", ["notaurl", "localhost:8000/v1", "http://", "ftp://x/v1", "http://h:99999/v1"])
def test_a_base_url_that_is_no_server_is_refused_before_any_call(url: str) -> None:
    """`http://` alone (no host) and a port past 65535 were tried and failed as transient, exit 75."""
    with pytest.raises(LlmRequestError, match=r"LLM base URL must be http\(s\)://host\[:port\]\[/path\]") as e:
        HttpChatClient(url, "m")
    assert e.value.where == url and e.value.exit_code == 2
