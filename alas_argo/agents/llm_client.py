"""An OpenAI-compatible chat-completions client over the standard library, and the transport protocol.

This module is the one boundary that talks HTTP to a model endpoint (a hosted API, vLLM, Ollama...). Every
call has a timeout; 429 and 5xx answers, refused connections and timeouts are retried with exponential
backoff that honours ``Retry-After`` (capped, so a hostile header cannot stall a run); what still fails is
wrapped into the project's error types here, chained with ``from e``:

- :class:`LlmAuthError` (permanent): 401 / 403, naming the endpoint;
- :class:`LlmRequestError` (permanent): any other 4xx, or a 200 whose body is not a chat completion;
- :class:`LlmUnavailable` (transient, exit 75): refused connection, timeout or 429/5xx after the retries.

All three derive from :class:`LlmEndpointError`, which is what a pipeline catches to fall back to another
planner. Tokens come from the answer's ``usage`` field, or are estimated (about four characters a token)
and flagged ``estimated`` when an endpoint does not report them.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from alas_argo import json_limits
from alas_argo.addresses import is_http_url
from alas_argo.errors import AlasError, PermanentError, TransientError
from alas_argo.file_names import read_answer

__all__ = [
    "MAX_RESPONSE_BYTES",
    "ChatResult",
    "ChatTransport",
    "ExchangeKey",
    "HttpChatClient",
    "LlmAuthError",
    "LlmEndpointError",
    "LlmRequestError",
    "LlmUnavailable",
    "Message",
    "estimate_tokens",
]

#: The largest answer body read from an endpoint (a chat completion is kilobytes).
MAX_RESPONSE_BYTES = 64 * 2**20

#: A chat message as the API takes it: {"role": "system"|"user"|"assistant", "content": "..."}.
Message = dict[str, str]


class LlmEndpointError(AlasError):
    """Base of every failure to get an answer from a model endpoint (catch it to fall back)."""


class LlmAuthError(LlmEndpointError, PermanentError):
    """The endpoint refused our credentials (401 / 403)."""


class LlmRequestError(LlmEndpointError, PermanentError):
    """The endpoint rejected the request (4xx) or answered with something that is not a chat completion."""


class LlmUnavailable(LlmEndpointError, TransientError):
    """The endpoint could not be reached or kept failing (refused, timeout, 429 / 5xx after retries)."""


@dataclass(frozen=True)
class ExchangeKey:
    """Which agent asked: the key under which an exchange is recorded and replayed."""

    role: str = "job"
    job: int | None = None
    attempt: int = 0


@dataclass
class ChatResult:
    """One answered chat completion, with what it cost."""

    text: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False
    latency_s: float = 0.0
    calls: int = 1
    finish_reason: str | None = None
    status: int = 200
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


class ChatTransport(Protocol):
    """Anything that turns chat messages into an answer: the HTTP client, or a replay of a recorded run."""

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        """Answer ``messages``; raise an :class:`LlmEndpointError` when no answer can be had."""
        ...


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters per token) for endpoints that report no usage."""
    return max(1, (len(text) + 3) // 4) if text else 0


def _retry_after(value: str | None, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


def _without_userinfo(url: str) -> str:
    """``url`` with anything between its scheme and the last ``@`` of its authority dropped (a URL urllib cannot
    split included): a password in it must not reach an error message."""
    scheme, sep, rest = url.partition("://")
    authority, slash, path = rest.partition("/")
    return f"{scheme}{sep}{authority.rpartition('@')[2]}{slash}{path}" if sep else url


class HttpChatClient:
    """A chat-completions client for any OpenAI-compatible endpoint (``POST {base_url}/chat/completions``).

    Args:
        base_url: The API root, e.g. ``https://api.openai.com/v1`` or ``http://vllm:8000/v1``.
        model: Model name sent with every request.
        api_key: Bearer token; None for endpoints without auth (a local vLLM / Ollama).
        timeout: Seconds per HTTP call (connect and read).
        max_retries: Retries after the first call on 429 / 5xx / refused / timeout.
        backoff: First backoff in seconds; doubles per retry.
        max_backoff: Cap of any single wait, including one asked for by ``Retry-After``.
        temperature: Sampling temperature; 0 keeps answers as reproducible as the endpoint allows.
        max_tokens: Completion budget per call (None: the endpoint's default).
        sleep: Injected for tests, so delays cost no wall time.
        clock: Monotonic clock used for latency.
    """

    def __init__(self, base_url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0,
                 max_retries: int = 3, backoff: float = 0.5, max_backoff: float = 30.0,
                 temperature: float = 0.0, max_tokens: int | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        try:
            parts = urlsplit(base_url)
        except ValueError:  # "http://[::1": an IPv6 host without its bracket; what may be credentials left out
            raise LlmRequestError("LLM base URL must be http(s)://host[:port][/path], e.g. http://vllm:8000/v1 "
                                  "(an IPv6 host in brackets: http://[::1]:8000/v1)",
                                  where=_without_userinfo(base_url)) from None
        if parts.username is not None or parts.password is not None:
            # urllib sends no credentials from a URL (every call failed as a connection error, exit 75), and every
            # error would have printed the password: refused, named without them.
            raise LlmRequestError("LLM base URL must not hold credentials: give the key as ALAS_LLM__API_KEY "
                                  "(or OPENAI_API_KEY), sent as a Bearer token",
                                  where=_without_userinfo(base_url))
        # "http://" alone used to be tried, and fail as transient (exit 75); a space in the URL too (is_http_url
        # refuses what no client can send). A non-ASCII path is a UnicodeEncodeError in urllib, which other clients
        # would percent-encode: refused here only.
        if not (is_http_url(base_url) and parts.path.isascii()):
            raise LlmRequestError("LLM base URL must be http(s)://host[:port][/path], e.g. http://vllm:8000/v1",
                                  where=base_url)
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._sleep = sleep
        self._clock = clock

    @property
    def endpoint(self) -> str:
        """The URL every request goes to."""
        return f"{self.base_url}/chat/completions"

    def complete(self, messages: list[Message], *, key: ExchangeKey | None = None) -> ChatResult:
        """Send ``messages`` and return the first choice's text; retries and wraps failures (module doc)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        data = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        started = self._clock()
        last: str = ""
        for call in range(1, self.max_retries + 2):
            wait: float | None = None
            try:
                status, payload = self._post(data, headers)
                return self._result(payload, messages, status, calls=call, latency=self._clock() - started)
            except urllib.error.HTTPError as e:
                detail = _error_detail(e)
                if e.code in (401, 403):
                    raise LlmAuthError(f"LLM endpoint refused the credentials (HTTP {e.code}: {detail}); "
                                       "check OPENAI_API_KEY / ALAS_LLM__API_KEY", where=self.endpoint) from e
                if e.code != 429 and e.code < 500:
                    raise LlmRequestError(f"LLM endpoint rejected the request (HTTP {e.code}: {detail})",
                                          where=self.endpoint) from e
                last = f"HTTP {e.code}: {detail}"
                wait = _retry_after(e.headers.get("Retry-After") if e.headers else None)
                cause: Exception = e
            except TimeoutError as e:
                last, cause = f"no answer within {self.timeout:g} s", e
            except urllib.error.URLError as e:
                reason = e.reason
                if isinstance(reason, TimeoutError):
                    last = f"no answer within {self.timeout:g} s"
                else:
                    last = f"cannot connect ({reason})"
                cause = e
            except (OSError, http.client.HTTPException) as e:  # reset, TLS failure, a body cut short
                last, cause = f"connection failed ({type(e).__name__}: {e})", e
            if call > self.max_retries:
                raise LlmUnavailable(f"LLM endpoint failed after {call} call(s): {last}",
                                     where=self.endpoint) from cause
            default = self.backoff * (2 ** (call - 1))
            self._sleep(min(self.max_backoff, wait if wait is not None else default))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _post(self, data: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        request = urllib.request.Request(self.endpoint, data=data, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:
            # Bounded: the timeout is per socket read, so an endpoint streaming without end was read until the
            # process ran out of memory.
            body = read_answer(response, MAX_RESPONSE_BYTES)  # IncompleteRead for a body cut short
            if len(body) > MAX_RESPONSE_BYTES:
                raise LlmRequestError(f"LLM endpoint answered with more than {MAX_RESPONSE_BYTES // 2**20} MiB: not "
                                      "a chat completion", where=self.endpoint)
            return int(response.status), body

    def _result(self, payload: bytes, messages: list[Message], status: int, *, calls: int,
                latency: float) -> ChatResult:
        try:
            doc = json_limits.loads(payload.decode("utf-8"))
            choice = doc["choices"][0]
            text = choice["message"]["content"] or ""
        except (UnicodeDecodeError, json.JSONDecodeError, KeyError, IndexError, TypeError) as e:
            raise LlmRequestError(f"LLM endpoint answered HTTP {status} with no chat completion in the body",
                                  where=self.endpoint) from e
        if not isinstance(text, str):
            raise LlmRequestError("LLM endpoint returned non-text message content", where=self.endpoint)
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else None
        prompt = usage.get("prompt_tokens") if usage else None
        completion = usage.get("completion_tokens") if usage else None
        estimated = not (isinstance(prompt, int) and isinstance(completion, int))
        if not (isinstance(prompt, int) and isinstance(completion, int)):
            prompt = estimate_tokens("".join(m.get("content", "") for m in messages))
            completion = estimate_tokens(text)
        return ChatResult(text=text, model=str(doc.get("model") or self.model), prompt_tokens=prompt,
                          completion_tokens=completion, estimated=estimated, latency_s=latency,
                          calls=calls, finish_reason=choice.get("finish_reason"), status=status)


def _error_detail(e: urllib.error.HTTPError) -> str:
    """A short, single-line reason from an error answer's body (OpenAI puts it in error.message)."""
    try:
        raw = e.read(2048).decode("utf-8", "replace")
    except Exception:  # the body is best-effort context only
        raw = ""
    finally:
        e.close()  # an unclosed error body leaks its socket (a ResourceWarning under pytest)
    try:
        doc = json_limits.loads(raw)
        message = doc.get("error", {}).get("message") if isinstance(doc.get("error"), dict) else None
        if message:
            return str(message)[:200]
    except (json.JSONDecodeError, AttributeError):
        pass
    return (raw.strip().replace("\n", " ")[:200]) or str(e.reason)
