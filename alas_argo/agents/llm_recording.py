"""Record and replay of model exchanges: what was asked, what the model said, what it cost.

Every exchange (request messages, answer text, usage, latency, status, and the parse notes) becomes one
:class:`Exchange`. An :class:`ExchangeRecorder` collects them and hands each to an optional sink as it
happens; the pipeline's sink appends it to the execution log as an ``llm.exchange`` event
(:data:`~alas_argo.log.events.EventType.LLM_EXCHANGE`), payload :meth:`Exchange.to_payload`.

:class:`ReplayTransport` serves a recorded run's answers again, in order per (role, job, attempt), with no
endpoint: ``alas run ... --llm-replay RUN`` reproduces a run deterministically, including its failures (a
recorded timeout is raised again as :class:`~alas_argo.agents.llm_client.LlmUnavailable`, so the same
fallback path is taken). No API key is ever part of a record.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from alas_argo.agents.llm_client import (
    ChatResult,
    ExchangeKey,
    LlmAuthError,
    LlmEndpointError,
    LlmRequestError,
    LlmUnavailable,
    Message,
)
from alas_argo.errors import InputError
from alas_argo.file_names import read_limited
from alas_argo.log.events import EventType

__all__ = ["EventAppender", "Exchange", "ExchangeRecorder", "ReplayMissing", "ReplayTransport",
           "exchanges_from_events", "exchanges_from_file", "log_sink"]

class ReplayMissing(LlmRequestError):
    """A replay was asked for an answer the recorded run does not hold."""


#: The recorded error classes raised again by a replay (a replay's own ReplayMissing too: a run made with
#: ``--llm-replay`` records it, and replaying that run must raise it as the permanent error it was).
_ERRORS: dict[str, type[LlmEndpointError]] = {
    cls.__name__: cls for cls in (LlmAuthError, LlmRequestError, LlmUnavailable, ReplayMissing)}


class Exchange(BaseModel):
    """One request to a model and its outcome, as stored in an ``llm.exchange`` event."""

    role: str = Field("job", description="`job` (a job agent), `supervisor` or `ping`.")
    job: int | None = Field(None, description="The job agent's job, None for the supervisor.")
    attempt: int = Field(0, description="The agent's attempt (0 first, >0 on re-asks).")
    model: str = Field("", description="Model that answered (as reported by the endpoint).")
    messages: list[dict[str, str]] = Field(description="The request's chat messages.")
    response: str | None = Field(None, description="The answer text; None when no answer came.")
    status: str = Field("ok", description="`ok` or `error`.")
    error_type: str | None = Field(None, description="Error class name when status is `error`.")
    error: str | None = Field(None, description="Error message when status is `error`.")
    finish_reason: str | None = Field(None, description="The endpoint's finish_reason (`length`: cut off).")
    prompt_tokens: int = Field(0, description="Prompt tokens (reported, or estimated).")
    completion_tokens: int = Field(0, description="Completion tokens (reported, or estimated).")
    estimated: bool = Field(False, description="Whether the token counts are estimates.")
    latency_s: float = Field(0.0, description="Wall seconds, retries and backoff included.")
    calls: int = Field(1, description="HTTP calls made (retries included; 0 when replayed).")
    notes: list[str] = Field(default_factory=list, description="What parsing tolerated or dropped.")

    @classmethod
    def from_result(cls, key: ExchangeKey, messages: list[Message], result: ChatResult,
                    notes: list[str] | None = None) -> Exchange:
        """The record of an answered exchange."""
        return cls(role=key.role, job=key.job, attempt=key.attempt, model=result.model, messages=messages,
                   response=result.text, finish_reason=result.finish_reason,
                   prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
                   estimated=result.estimated, latency_s=result.latency_s, calls=result.calls,
                   notes=list(notes or []))

    @classmethod
    def from_error(cls, key: ExchangeKey, messages: list[Message], error: LlmEndpointError,
                   latency_s: float) -> Exchange:
        """The record of an exchange that ended without an answer."""
        return cls(role=key.role, job=key.job, attempt=key.attempt, messages=messages, status="error",
                   error_type=type(error).__name__, error=str(error), latency_s=latency_s, calls=0)

    def to_payload(self) -> dict[str, Any]:
        """The event payload (JSON-ready)."""
        return self.model_dump(mode="json")


class ExchangeRecorder:
    """Collects exchanges (thread-safe: job agents run in parallel) and passes each to ``sink``.

    Args:
        sink: Called with every exchange as it is recorded, e.g. to append an ``llm.exchange`` event.
    """

    event_type = EventType.LLM_EXCHANGE

    def __init__(self, sink: Callable[[Exchange], None] | None = None) -> None:
        self._sink = sink
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []

    def record(self, exchange: Exchange) -> None:
        """Keep ``exchange`` and hand it to the sink."""
        with self._lock:
            self._exchanges.append(exchange)
        if self._sink is not None:
            self._sink(exchange)

    @property
    def exchanges(self) -> list[Exchange]:
        """Every exchange recorded so far, in order."""
        with self._lock:
            return list(self._exchanges)

    def events(self) -> list[dict[str, Any]]:
        """The exchanges as ``{"type": "llm.exchange", "payload": ...}`` documents."""
        return [{"type": str(self.event_type), "payload": e.to_payload()} for e in self.exchanges]


class EventAppender(Protocol):
    """What :func:`log_sink` needs of an execution log (``alas_argo.log.ExecutionLog`` has it)."""

    def append(self, type: EventType, *, payload: Mapping[str, Any] | None = None,
               node_id: str | None = None) -> Any:
        """Append one event."""
        ...


def log_sink(log: EventAppender, *, node_id: str | None = None) -> Callable[[Exchange], None]:
    """A recorder sink that appends every exchange to ``log`` as an ``llm.exchange`` event."""

    def append(exchange: Exchange) -> None:
        log.append(EventType.LLM_EXCHANGE, payload=exchange.to_payload(), node_id=node_id)

    return append


def _field(event: Mapping[str, Any] | Any, name: str, default: Any = None) -> Any:
    if isinstance(event, Mapping):
        return event.get(name, default)
    return getattr(event, name, default)


def exchanges_from_events(events: Iterable[Mapping[str, Any] | Any]) -> list[Exchange]:
    """The recorded exchanges among a run's log events (other event types are skipped).

    Args:
        events: Event documents (mappings) or ``alas_argo.log.Event`` objects, e.g.
            ``ExecutionLog(store, run_id).events()``.

    Raises:
        InputError: When an ``llm.exchange`` event's payload is not an exchange record.
    """
    found: list[Exchange] = []
    for index, event in enumerate(events):
        if _field(event, "type") != EventType.LLM_EXCHANGE:
            continue
        try:
            found.append(Exchange.model_validate(_field(event, "payload")))
        except ValidationError as e:
            where = f"event seq {_field(event, 'seq', index)}"
            raise InputError(f"llm.exchange payload is not an exchange record: {e.errors()[0]['msg']}",
                             where=where) from None
    return found


def exchanges_from_file(path: Path) -> list[Exchange]:
    """The exchanges a recorder wrote to ``path``, one JSON object per line (blank lines skipped).

    Raises:
        InputError: When the file cannot be read or a line is not an exchange record (the line is named).
    """
    try:
        text = read_limited(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the recorded exchanges: {getattr(e, 'strerror', None) or e}",
                         where=str(path)) from None
    found: list[Exchange] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            found.append(Exchange.model_validate_json(line))
        except ValidationError as e:
            raise InputError(f"not an exchange record: {e.errors()[0]['msg']}", where=f"{path} line {number}") \
                from None
    return found


class ReplayTransport:
    """Serves recorded answers, in order per (role, job, attempt), without any endpoint.

    Args:
        exchanges: The recorded exchanges (see :func:`exchanges_from_events`).
    """

    def __init__(self, exchanges: Iterable[Exchange]) -> None:
        self._lock = threading.Lock()
        self._queues: dict[tuple[str, int | None, int], deque[Exchange]] = {}
        for e in exchanges:
            self._queues.setdefault((e.role, e.job, e.attempt), deque()).append(e)

    def remaining(self) -> int:
        """Recorded exchanges not yet served."""
        with self._lock:
            return sum(len(q) for q in self._queues.values())

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        """The next recorded answer for ``key``; a recorded failure is raised again."""
        with self._lock:
            queue = self._queues.get((key.role, key.job, key.attempt))
            recorded = queue.popleft() if queue else None
        if recorded is None:
            raise ReplayMissing(f"the recorded run has no (further) answer for {key.role} agent, job "
                                f"{key.job}, attempt {key.attempt}", where="llm replay")
        if recorded.status != "ok" or recorded.response is None:
            error_cls = _ERRORS.get(recorded.error_type or "", LlmUnavailable)
            raise error_cls(f"replayed failure: {recorded.error or 'no answer'}", where="llm replay")
        return ChatResult(text=recorded.response, model=recorded.model, prompt_tokens=recorded.prompt_tokens,
                          completion_tokens=recorded.completion_tokens, estimated=recorded.estimated,
                          latency_s=0.0, calls=0, finish_reason=recorded.finish_reason,
                          extra={"replayed": True, "prompt_matches": recorded.messages == messages})
