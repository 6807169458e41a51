"""The chat-completions client's edges: what a request carries, how each kind of failure is worded and where
it points, which answers count as a chat completion, how tokens are counted or estimated, and the waits
between retries (the default doubling, its cap, ``Retry-After`` of 0 or as an HTTP date).

A scripted loopback server (``tests/agents/llm_server.py``) answers well-formed HTTP; a raw socket server
below answers what no well-behaved server would (a closed connection, a body cut short), and a client whose
``_post`` raises stands in for a connect timeout, which loopback cannot produce.
"""

from __future__ import annotations

import io
import json
import socket
import threading
import urllib.error
from collections.abc import Iterator

import pytest

from alas_argo.agents import llm_client
from alas_argo.agents.llm_client import (
    ChatResult,
    ExchangeKey,
    HttpChatClient,
    LlmAuthError,
    LlmRequestError,
    LlmUnavailable,
    _retry_after,
    estimate_tokens,
)
from tests.agents.llm_server import Reply, ScriptedLlmServer, Sleeps, running_server

MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello there"}]


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


class Ticks:
    """An injected monotonic clock: each reading is the next value."""

    def __init__(self, *values: float) -> None:
        self.values = list(values)

    def __call__(self) -> float:
        return self.values.pop(0)


def client(server: ScriptedLlmServer, sleeps: Sleeps | None = None, **kw: object) -> HttpChatClient:
    options: dict[str, object] = {"timeout": 2.0, "max_retries": 2, "backoff": 0.5}
    options.update(kw)
    return HttpChatClient(server.url, "test-model", sleep=sleeps or Sleeps(), **options)  # type: ignore[arg-type]


def endpoint_of(server: ScriptedLlmServer) -> str:
    return server.url + "/chat/completions"


# --- the request ------------------------------------------------------------------------------------------


def test_a_request_without_a_key_sends_no_authorization_and_json_headers(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="ok"))
    client(llm_server).complete(MESSAGES)
    headers = llm_server.requests[0]["headers"]
    assert "Authorization" not in headers
    assert headers["Content-Type"] == "application/json" and headers["Accept"] == "application/json"
    # No max_tokens unless asked for: the endpoint's own default applies.
    assert llm_server.requests[0]["body"] == {"model": "test-model", "messages": MESSAGES, "temperature": 0.0}


def test_max_tokens_and_temperature_are_sent_when_given(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="ok"))
    client(llm_server, max_tokens=64, temperature=0.7).complete(MESSAGES)
    body = llm_server.requests[0]["body"]
    assert body["max_tokens"] == 64 and body["temperature"] == 0.7


@pytest.mark.parametrize("url", ["http://vllm:8000/v1 x", "http://vllm\t:8000/v1", "http://vllm:8000/v\x7f",
                                 "http://vllm:8000/vé", "http://" + "x" * 64 + ":8000/v1", "http://a..b:8000/v1"])
def test_a_base_url_no_client_can_send_is_refused_before_any_call(url: str) -> None:
    # Each failed in urllib, at the first call, as a connection error (exit 75) or an encoding traceback.
    with pytest.raises(LlmRequestError) as info:
        HttpChatClient(url, "m")
    assert info.value.message == "LLM base URL must be http(s)://host[:port][/path], e.g. http://vllm:8000/v1"
    assert info.value.where == url


def test_a_trailing_slash_of_the_base_url_is_dropped(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="ok"))
    c = HttpChatClient(llm_server.url + "/", "m", sleep=Sleeps())
    assert c.endpoint == endpoint_of(llm_server)
    c.complete(MESSAGES)
    assert llm_server.requests[0]["path"] == "/v1/chat/completions"


def test_a_base_url_that_is_no_server_is_refused_with_the_form_to_use() -> None:
    with pytest.raises(LlmRequestError) as info:
        HttpChatClient("vllm:8000", "m")
    assert info.value.message == ("LLM base URL must be http(s)://host[:port][/path], "
                                  "e.g. http://vllm:8000/v1")


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:9/v 1",                  # a space: http.client's InvalidURL, was retried as transient
    "http://127.0.0.1:9/v1\t",                 # a tab (urlsplit drops it, so the form check passed)
    "http://127.0.0.1:9/v1\x7f",               # DEL
    "http://127.0.0.1:9/v\u00e91",             # a non-ASCII path: UnicodeEncodeError, a crash
    "http://a..b/v1",                          # an empty host label: IDNA's UnicodeError, a crash
    "http://" + "a" * 64 + ".example/v1",      # a host label past 63 characters: the same
])
def test_a_base_url_urllib_cannot_send_is_refused_before_any_call(url: str) -> None:
    """Such URLs passed the form check and then failed every call as transient (exit 75) or crashed with a
    UnicodeError that no fallback catches: a typo in the configuration is permanent."""
    with pytest.raises(LlmRequestError, match=r"LLM base URL must be") as info:
        HttpChatClient(url, "m")
    assert info.value.where == url and info.value.exit_code == 2


@pytest.mark.parametrize("url", ["http://b\u00fccher.example/v1", "http://[::1]:8000/v1", "https://api.example.com./v1/",
                                 "http://vllm:8000"])
def test_base_urls_urllib_can_send_are_kept(url: str) -> None:
    # An internationalized host name is sent in its IDNA form; an IPv6 literal and a rooted name are fine.
    assert HttpChatClient(url, "m").endpoint == url.rstrip("/") + "/chat/completions"


def test_the_defaults_of_a_client() -> None:
    # A hosted endpoint's pace: a minute per call, three retries from half a second doubling up to 30 s.
    c = HttpChatClient("http://h/v1", "m")
    assert (c.timeout, c.max_retries, c.backoff, c.max_backoff, c.temperature, c.max_tokens) == (
        60.0, 3, 0.5, 30.0, 0.0, None)
    assert ExchangeKey() == ExchangeKey(role="job", job=None, attempt=0)


# --- the answer -------------------------------------------------------------------------------------------


def test_the_result_carries_finish_reason_status_latency_and_the_answers_model(
        llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="ok", finish_reason="length", model="served-model"))
    result = client(llm_server, clock=Ticks(100.0, 102.5)).complete(MESSAGES)
    assert (result.finish_reason, result.status, result.latency_s, result.model) == ("length", 200, 2.5,
                                                                                      "served-model")


def test_another_2xx_status_is_kept_in_the_result_and_in_the_refusal(llm_server: ScriptedLlmServer) -> None:
    # urlopen raises only outside 2xx: a proxy's 203 with a completion is an answer, and its status is kept.
    completion = {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 1,
                                                                         "completion_tokens": 1}}
    llm_server.script(Reply(status=203, raw_body=json.dumps(completion).encode()),
                      Reply(status=202, raw_body=b'{"queued": true}'))
    assert client(llm_server).complete(MESSAGES).status == 203
    with pytest.raises(LlmRequestError) as info:
        client(llm_server).complete(MESSAGES)
    assert info.value.message == "LLM endpoint answered HTTP 202 with no chat completion in the body"


def test_latency_spans_every_retry(llm_server: ScriptedLlmServer) -> None:
    # Read once before the first call and once after the answer: the retries' time counts.
    llm_server.script(Reply(status=503), Reply(content="ok"))
    result = client(llm_server, clock=Ticks(10.0, 17.0)).complete(MESSAGES)
    assert (result.calls, result.latency_s) == (2, 7.0)


def test_an_answer_without_a_model_names_the_clients(llm_server: ScriptedLlmServer) -> None:
    body = {"choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 1, "completion_tokens": 2}}
    llm_server.script(Reply(raw_body=json.dumps(body).encode()))
    result = client(llm_server).complete(MESSAGES)
    assert (result.model, result.finish_reason, result.text) == ("test-model", None, "ok")


def test_null_content_is_an_empty_answer(llm_server: ScriptedLlmServer) -> None:
    # Some endpoints answer content null (e.g. a refusal or a tool call): an empty text, not an error.
    llm_server.script(Reply(content=None, usage=None))
    result = client(llm_server).complete(MESSAGES)
    assert (result.text, result.completion_tokens, result.estimated) == ("", 0, True)


@pytest.mark.parametrize("body", [
    b'{"choices": []}',                                   # no choice
    b'{"choices": [{"text": "legacy completion"}]}',      # no message
    b'[1, 2]',                                            # not an object
    b'{"choices": [{"message": {"content": "ok"}}]}\xff',  # not UTF-8
    b'{"choices": "ok"}',                                 # choices not a list
])
def test_a_200_that_is_not_a_chat_completion_is_a_request_error(llm_server: ScriptedLlmServer,
                                                                  body: bytes) -> None:
    llm_server.script(Reply(raw_body=body))
    with pytest.raises(LlmRequestError) as info:
        client(llm_server).complete(MESSAGES)
    assert info.value.message == "LLM endpoint answered HTTP 200 with no chat completion in the body"
    assert info.value.where == endpoint_of(llm_server)
    assert len(llm_server.requests) == 1  # permanent: not retried


def test_content_that_is_not_text_is_a_request_error(llm_server: ScriptedLlmServer) -> None:
    body = {"choices": [{"message": {"content": [{"type": "text", "text": "ok"}]}}]}
    llm_server.script(Reply(raw_body=json.dumps(body).encode()))
    with pytest.raises(LlmRequestError) as info:
        client(llm_server).complete(MESSAGES)
    assert info.value.message == "LLM endpoint returned non-text message content"
    assert info.value.where == endpoint_of(llm_server)


# --- tokens -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 8, 2)])
def test_estimate_tokens_rounds_four_characters_up_to_a_token(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 7},                                 # completion missing
    {"completion_tokens": 7},                             # prompt missing
    {"prompt_tokens": "7", "completion_tokens": 3},       # a count that is not a number
    {"prompt_tokens": 7, "completion_tokens": None},
])
def test_usage_without_both_counts_is_estimated_for_both(llm_server: ScriptedLlmServer,
                                                         usage: dict[str, object]) -> None:
    body = {"choices": [{"message": {"content": "x" * 12}}], "usage": usage}
    llm_server.script(Reply(raw_body=json.dumps(body).encode()))
    result = client(llm_server).complete(MESSAGES)
    # "be brief" + "hello there" = 19 characters: 5 tokens; 12 characters: 3 tokens.
    assert (result.prompt_tokens, result.completion_tokens, result.estimated) == (5, 3, True)


def test_usage_that_is_not_an_object_is_estimated(llm_server: ScriptedLlmServer) -> None:
    body = {"choices": [{"message": {"content": "abc"}}], "usage": 42}
    llm_server.script(Reply(raw_body=json.dumps(body).encode()))
    result = client(llm_server).complete(MESSAGES)
    assert (result.prompt_tokens, result.completion_tokens, result.estimated) == (5, 1, True)


def test_the_estimate_skips_messages_without_content(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="ok", usage=None))
    result = client(llm_server).complete([{"role": "user"}, {"role": "user", "content": "12345678"}])
    assert (result.prompt_tokens, result.completion_tokens) == (2, 1)


def test_reported_usage_of_zero_is_taken_as_is(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(content="x" * 40, usage={"prompt_tokens": 0, "completion_tokens": 0}))
    result = client(llm_server).complete(MESSAGES)
    assert (result.prompt_tokens, result.completion_tokens, result.estimated, result.total_tokens) == (
        0, 0, False, 0)


def test_total_tokens_adds_prompt_and_completion() -> None:
    assert ChatResult(text="", model="m", prompt_tokens=7, completion_tokens=5).total_tokens == 12


# --- refusals ---------------------------------------------------------------------------------------------


def test_403_is_an_auth_error_naming_the_key_to_check(llm_server: ScriptedLlmServer) -> None:
    llm_server.script(Reply(status=403), Reply(content="never served"))
    with pytest.raises(LlmAuthError) as info:
        client(llm_server).complete(MESSAGES)
    assert info.value.message == ("LLM endpoint refused the credentials (HTTP 403: scripted error 403); "
                                  "check OPENAI_API_KEY / ALAS_LLM__API_KEY")
    assert info.value.where == endpoint_of(llm_server)
    assert isinstance(info.value.__cause__, urllib.error.HTTPError)
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("status", [404, 422, 499])
def test_other_4xx_are_request_errors_not_retried(llm_server: ScriptedLlmServer, status: int) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=status), Reply(content="never served"))
    with pytest.raises(LlmRequestError) as info:
        client(llm_server, sleeps).complete(MESSAGES)
    assert info.value.message == f"LLM endpoint rejected the request (HTTP {status}: scripted error {status})"
    assert info.value.where == endpoint_of(llm_server)
    assert isinstance(info.value.__cause__, urllib.error.HTTPError)
    assert len(llm_server.requests) == 1 and sleeps.waits == []


@pytest.mark.parametrize("status", [429, 500, 502, 599])
def test_429_and_every_5xx_are_retried(llm_server: ScriptedLlmServer, status: int) -> None:
    llm_server.script(Reply(status=status), Reply(content="ok"))
    assert client(llm_server).complete(MESSAGES).calls == 2


# --- error details ----------------------------------------------------------------------------------------


def _rejected(server: ScriptedLlmServer, reply: Reply) -> str:
    server.script(reply)
    with pytest.raises(LlmRequestError) as info:
        client(server).complete(MESSAGES)
    return info.value.message


def test_the_detail_is_the_error_message_cut_at_200_characters(llm_server: ScriptedLlmServer) -> None:
    body = json.dumps({"error": {"message": "m" * 300}}).encode()
    assert _rejected(llm_server, Reply(status=400, raw_body=body)) == (
        f"LLM endpoint rejected the request (HTTP 400: {'m' * 200})")


def test_a_plain_text_error_body_is_quoted_on_one_line(llm_server: ScriptedLlmServer) -> None:
    body = b"  bad\nrequest\n" + b"z" * 300
    assert _rejected(llm_server, Reply(status=400, raw_body=body)) == (
        "LLM endpoint rejected the request (HTTP 400: " + ("bad request " + "z" * 300)[:200] + ")")


@pytest.mark.parametrize("body", [b'{"error": "quota"}', b'{"error": {"code": 7}}', b'{"detail": "no"}'])
def test_json_without_an_error_message_is_quoted_whole(llm_server: ScriptedLlmServer, body: bytes) -> None:
    assert _rejected(llm_server, Reply(status=400, raw_body=body)) == (
        f"LLM endpoint rejected the request (HTTP 400: {body.decode()})")


def test_an_empty_error_body_gives_the_status_lines_reason(llm_server: ScriptedLlmServer) -> None:
    assert _rejected(llm_server, Reply(status=404, raw_body=b"")) == (
        "LLM endpoint rejected the request (HTTP 404: Not Found)")


def test_the_detail_reads_at_most_2048_bytes(llm_server: ScriptedLlmServer) -> None:
    body = b"a" * 2048 + b"TAIL"  # a JSON-less body longer than the read: only its start is quoted
    llm_server.script(Reply(status=500, raw_body=body))
    with pytest.raises(LlmUnavailable) as info:
        client(llm_server, max_retries=0).complete(MESSAGES)
    assert info.value.message == f"LLM endpoint failed after 1 call(s): HTTP 500: {'a' * 200}"


def test_an_error_body_that_is_not_utf8_is_quoted_with_replacement_characters(
        llm_server: ScriptedLlmServer) -> None:
    # Strict decoding would fail, and the detail would fall back to the bare status reason.
    assert _rejected(llm_server, Reply(status=400, raw_body=b"bad \xff byte")) == (
        "LLM endpoint rejected the request (HTTP 400: bad \ufffd byte)")


def test_an_error_message_past_the_first_2048_bytes_is_not_read(llm_server: ScriptedLlmServer) -> None:
    # Exactly 2048 bytes of JSON are read and decoded; one byte more and the same document is quoted raw.
    def padded(size: int) -> bytes:
        body = json.dumps({"error": {"message": "quota"}, "pad": ""}).encode()
        return json.dumps({"error": {"message": "quota"}, "pad": "p" * (size - len(body))}).encode()

    assert len(padded(2048)) == 2048 and len(padded(2049)) == 2049
    assert _rejected(llm_server, Reply(status=400, raw_body=padded(2048))) == (
        "LLM endpoint rejected the request (HTTP 400: quota)")
    assert _rejected(llm_server, Reply(status=400, raw_body=padded(2049))) == (
        "LLM endpoint rejected the request (HTTP 400: " + padded(2049).decode()[:200] + ")")


# --- transient failures and the waits between retries -----------------------------------------------------


def test_the_backoff_doubles_up_to_its_cap(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(*[Reply(status=503) for _ in range(5)])
    with pytest.raises(LlmUnavailable) as info:
        client(llm_server, sleeps, max_retries=4, backoff=1.0, max_backoff=5.0).complete(MESSAGES)
    assert sleeps.waits == [1.0, 2.0, 4.0, 5.0]
    assert info.value.message == "LLM endpoint failed after 5 call(s): HTTP 503: scripted error 503"
    assert info.value.where == endpoint_of(llm_server)
    assert isinstance(info.value.__cause__, urllib.error.HTTPError)


def test_no_retries_is_one_call_and_no_wait(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=503), Reply(content="never served"))
    with pytest.raises(LlmUnavailable, match=r"after 1 call\(s\)"):
        client(llm_server, sleeps, max_retries=0).complete(MESSAGES)
    assert len(llm_server.requests) == 1 and sleeps.waits == []


def test_a_retry_after_of_zero_is_honoured_not_replaced_by_the_backoff(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=429, headers={"Retry-After": "0"}), Reply(content="ok"))
    client(llm_server, sleeps, backoff=4.0).complete(MESSAGES)
    assert sleeps.waits == [0.0]


def test_an_unreadable_retry_after_falls_back_to_the_backoff(llm_server: ScriptedLlmServer) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=429, headers={"Retry-After": "soon"}), Reply(status=503), Reply(content="ok"))
    client(llm_server, sleeps, backoff=4.0).complete(MESSAGES)
    assert sleeps.waits == [4.0, 8.0]


@pytest.mark.parametrize(("date", "wait"), [
    ("Sat, 01 Jan 2000 00:00:00 GMT", 0.0),  # in the past: no wait
    ("Fri, 01 Jan 9999 00:00:00 GMT", 6.0),  # centuries ahead: the cap
])
def test_a_retry_after_date_is_read_against_the_clock_and_capped(llm_server: ScriptedLlmServer, date: str,
                                                                  wait: float) -> None:
    sleeps = Sleeps()
    llm_server.script(Reply(status=503, headers={"Retry-After": date}), Reply(content="ok"))
    client(llm_server, sleeps, backoff=3.0, max_backoff=6.0).complete(MESSAGES)
    assert sleeps.waits == [wait]


def test_retry_after_strips_blanks_and_reads_nothing_from_an_empty_value() -> None:
    assert _retry_after(" 4 ") == 4.0
    assert _retry_after("") is None and _retry_after("   ") is None
    assert _retry_after(" Wed, 21 Oct 2015 07:28:10 GMT ", now=lambda: 1445412480.0) == 10.0
    assert _retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=lambda: 1445412490.0) == 0.0


class _RaisingClient(HttpChatClient):
    """A client whose every call fails with one exception, as ``urlopen`` would raise it."""

    def __init__(self, error: Exception, sleeps: Sleeps) -> None:
        super().__init__("http://model.invalid/v1", "m", timeout=1.5, max_retries=1, sleep=sleeps)
        self.error = error
        self.calls = 0

    def _post(self, data: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        self.calls += 1
        raise self.error


@pytest.mark.parametrize(("error", "said"), [
    (urllib.error.URLError(TimeoutError("timed out")), "no answer within 1.5 s"),  # a connect timeout
    (TimeoutError("timed out"), "no answer within 1.5 s"),                          # a read timeout
    (urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")),
     "cannot connect ([Errno 111] Connection refused)"),
    (ConnectionResetError(104, "Connection reset by peer"),
     "connection failed (ConnectionResetError: [Errno 104] Connection reset by peer)"),
])
def test_each_transient_failure_is_retried_and_worded(error: Exception, said: str) -> None:
    sleeps = Sleeps()
    c = _RaisingClient(error, sleeps)
    with pytest.raises(LlmUnavailable) as info:
        c.complete(MESSAGES)
    assert info.value.message == f"LLM endpoint failed after 2 call(s): {said}"
    assert info.value.where == "http://model.invalid/v1/chat/completions"
    assert info.value.__cause__ is error
    assert c.calls == 2 and sleeps.waits == [0.5]


class _UnreadableBody(io.BytesIO):
    """An error body whose connection drops while it is read."""

    def read(self, size: int | None = -1, /) -> bytes:
        raise ConnectionResetError(104, "Connection reset by peer")


def test_an_error_body_that_cannot_be_read_gives_the_status_lines_reason() -> None:
    # The body is best-effort context: losing it still leaves a transient 502, retried and then reported.
    error = urllib.error.HTTPError("http://model.invalid/v1/chat/completions", 502, "Bad Gateway",
                                   None, _UnreadableBody())  # type: ignore[arg-type]  # headers may be None
    sleeps = Sleeps()
    c = _RaisingClient(error, sleeps)
    with pytest.raises(LlmUnavailable) as info:
        c.complete(MESSAGES)
    assert info.value.message == "LLM endpoint failed after 2 call(s): HTTP 502: Bad Gateway"
    assert c.calls == 2 and sleeps.waits == [0.5]  # no headers at all: the backoff


class RawServer:
    """A loopback TCP server that reads a request and answers every connection with the same raw bytes."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.connections = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.1)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            with conn:
                self.connections += 1
                conn.settimeout(2)
                # Read the whole request first: closing with unread bytes would send a reset, not the answer.
                data = b""
                while b"\r\n\r\n" not in data or len(data) < self._request_length(data):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                conn.sendall(self.answer)

    @staticmethod
    def _request_length(data: bytes) -> int:
        head, _, _ = data.partition(b"\r\n\r\n")
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        return len(head) + 4 + length

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()


@pytest.mark.parametrize(("answer", "said"), [
    (b"", "connection failed (RemoteDisconnected: Remote end closed connection without response)"),
    (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"choices\"",
     "connection failed (IncompleteRead: IncompleteRead(10 bytes read, 90 more expected))"),
])
def test_a_connection_dropped_mid_answer_is_transient(answer: bytes, said: str) -> None:
    server = RawServer(answer)
    try:
        sleeps = Sleeps()
        c = HttpChatClient(server.url, "m", timeout=2.0, max_retries=1, sleep=sleeps)
        with pytest.raises(LlmUnavailable) as info:
            c.complete(MESSAGES)
    finally:
        server.close()
    assert info.value.message == f"LLM endpoint failed after 2 call(s): {said}"
    assert server.connections == 2 and sleeps.waits == [0.5]


@pytest.mark.parametrize("url", ["http://user:s3cr3t@vllm:8000/v1", "https://user@api.example.com/v1",
                                 "http://:s3cr3t@vllm/v1"])
def test_a_base_url_with_credentials_is_refused_without_them(url: str) -> None:
    """Credentials in the URL were never sent (every call failed as "cannot connect", exit 75) and every error
    named the URL, password included: refused at once, the URL named without them, the right place said."""
    with pytest.raises(LlmRequestError) as info:
        HttpChatClient(url, "m")
    assert info.value.message == ("LLM base URL must not hold credentials: give the key as ALAS_LLM__API_KEY (or "
                                  "OPENAI_API_KEY), sent as a Bearer token")
    assert info.value.where == url.replace(url[url.index("//") + 2:url.index("@") + 1], "")
    assert "s3cr3t" not in str(info.value) and "user" not in str(info.value)


@pytest.mark.parametrize(("url", "named"), [("http://[::1", "http://[::1"), ("http://[::1/v1", "http://[::1/v1"),
                                            ("http://user:s3cr3t@[::1/v1", "http://[::1/v1"),
                                            ("https://[vllm:8000/v1", "https://[vllm:8000/v1")])
def test_a_base_url_urllib_cannot_split_is_refused_naming_it_without_credentials(url: str, named: str) -> None:
    # urlsplit raises ValueError ("Invalid IPv6 URL") for an unclosed bracket: that was a traceback from
    # `alas llm ping` and every LLM command, before the URL was checked at all.
    with pytest.raises(LlmRequestError) as info:
        HttpChatClient(url, "m")
    assert info.value.message == ("LLM base URL must be http(s)://host[:port][/path], e.g. http://vllm:8000/v1 "
                                  "(an IPv6 host in brackets: http://[::1]:8000/v1)")
    assert info.value.where == named
    assert "s3cr3t" not in str(info.value)


def test_an_answer_past_the_bound_is_refused_not_read_until_memory_runs_out(
        llm_server: ScriptedLlmServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # The timeout is per socket read: an endpoint streaming without end was read whole. Lowered bound, same path.
    monkeypatch.setattr(llm_client, "MAX_RESPONSE_BYTES", 2**20)
    completion = {"choices": [{"message": {"content": "ok"}}], "pad": "x" * 2**20}
    llm_server.script(Reply(raw_body=json.dumps(completion).encode()), Reply(content="ok"))
    with pytest.raises(LlmRequestError) as info:
        client(llm_server).complete(MESSAGES)
    assert info.value.message == "LLM endpoint answered with more than 1 MiB: not a chat completion"
    assert client(llm_server).complete(MESSAGES).text == "ok"  # an answer under the bound reads as before
