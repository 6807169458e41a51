"""The LLM planner backend: job agents (and optionally the supervisor) backed by a chat-completions model.

Contract with the pipeline (what :meth:`LlmPlanner.propose` does with each kind of failure):

- garbage, prose, truncated or partial answers never raise: the proposal carries the operations that could
  be read (possibly none) and ``notes`` saying what was wrong. **An empty ``operations`` list means the
  answer was unusable** (:func:`is_unusable`): fall back to the configured planner for that job;
- wrong machines, wrong durations, overlaps and precedence violations are returned as proposed (noted when
  the agent can see them) for the independent validator to flag and LCRP to repair;
- no answer at all raises an :class:`~alas_argo.agents.llm_client.LlmEndpointError`:
  ``LlmUnavailable`` (transient: refused, timeout, 429/5xx after retries), ``LlmAuthError`` (401/403) or
  ``LlmRequestError`` (other 4xx, a replay with no recorded answer). Catch ``LlmEndpointError`` to fall back.

Every exchange, answered or not, is recorded (see :mod:`alas_argo.agents.llm_recording`), and
:attr:`LlmPlanner.usage` sums calls, tokens and latency for the run summary.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from alas_argo.agents.contracts import JobContext, JobProposal, ProposedOperation
from alas_argo.agents.llm_client import ChatResult, ChatTransport, ExchangeKey, HttpChatClient, LlmEndpointError
from alas_argo.agents.llm_parsing import ParseError, parse_answer, review_operations
from alas_argo.agents.llm_prompts import job_messages, supervisor_messages
from alas_argo.agents.llm_recording import Exchange, ExchangeRecorder, ReplayTransport, exchanges_from_events
from alas_argo.errors import InputError
from alas_argo.scrubbing import register_secret
from alas_argo.settings import LlmSettings, Settings

__all__ = ["LlmPlanner", "SupervisorAnswer", "client_from_settings", "is_unusable", "make_llm_backend"]

_USAGE_KEYS = ("calls", "exchanges", "failures", "unusable", "replayed", "prompt_tokens", "completion_tokens",
               "total_tokens", "estimated_exchanges")


def is_unusable(proposal: JobProposal) -> bool:
    """Whether a proposal holds nothing to work with (the pipeline falls back for that job)."""
    return not proposal.operations


def client_from_settings(llm: LlmSettings) -> HttpChatClient:
    """The HTTP client for the configured endpoint.

    Raises:
        InputError: When no endpoint is configured (no ``--llm-base-url`` / ``OPENAI_BASE_URL``).
    """
    if not llm.base_url:
        raise InputError("no LLM endpoint configured: pass --llm-base-url or set OPENAI_BASE_URL "
                         "(or ALAS_LLM__BASE_URL)")
    key = llm.api_key.get_secret_value() if llm.api_key is not None else None
    register_secret(key)  # an endpoint may echo it back in an error body: scrubbed from logs and output
    return HttpChatClient(llm.base_url, llm.model, api_key=key, timeout=llm.timeout,
                          max_retries=llm.max_retries, temperature=llm.temperature)


@dataclass(frozen=True)
class SupervisorAnswer:
    """The supervisor's merged operations and what parsing noted (see :meth:`LlmPlanner.supervise`)."""

    operations: list[ProposedOperation]
    notes: list[str]


class LlmPlanner:
    """A :class:`~alas_argo.agents.contracts.PlannerBackend` that asks a chat model (module doc: contract).

    Args:
        settings: The project settings or just their ``llm`` group.
        transport: Where answers come from; default: the HTTP client for ``settings`` (tests pass the
            client of a loopback server, replays a :class:`ReplayTransport`).
        recorder: Receives every exchange; default: an in-memory recorder.
        on_usage: Called after every exchange with that exchange's usage dict (e.g. to feed metrics).
        clock: Monotonic clock for latency of failed calls.
    """

    name = "llm"

    def __init__(self, settings: Settings | LlmSettings, *, transport: ChatTransport | None = None,
                 recorder: ExchangeRecorder | None = None,
                 on_usage: Callable[[dict[str, Any]], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings.llm if isinstance(settings, Settings) else settings
        self.transport: ChatTransport = transport or client_from_settings(self.settings)
        self.recorder = recorder or ExchangeRecorder()
        self._on_usage = on_usage
        self._clock = clock
        self._lock = threading.Lock()
        self._totals: dict[str, float] = dict.fromkeys(_USAGE_KEYS, 0)
        self._totals["latency_s"] = 0.0

    @property
    def usage(self) -> dict[str, Any]:
        """Totals over every exchange so far: calls (HTTP, retries included), exchanges, failures (no
        answer), unusable answers, replayed answers, tokens, and latency in seconds."""
        with self._lock:
            out: dict[str, Any] = {k: int(self._totals[k]) for k in _USAGE_KEYS}
            out["latency_s"] = round(self._totals["latency_s"], 6)
        return out

    def _ask(self, messages: list[dict[str, str]], key: ExchangeKey) -> ChatResult:
        started = self._clock()
        try:
            return self.transport.complete(messages, key=key)
        except LlmEndpointError as e:
            exchange = Exchange.from_error(key, messages, e, latency_s=self._clock() - started)
            self._account(exchange, failed=True)
            raise

    def _finish(self, key: ExchangeKey, messages: list[dict[str, str]], result: ChatResult,
                notes: list[str], *, unusable: bool) -> dict[str, Any]:
        exchange = Exchange.from_result(key, messages, result, notes)
        return self._account(exchange, unusable=unusable, replayed=bool(result.extra.get("replayed")))

    def _account(self, exchange: Exchange, *, failed: bool = False, unusable: bool = False,
                 replayed: bool = False) -> dict[str, Any]:
        self.recorder.record(exchange)
        usage = {"calls": exchange.calls, "exchanges": 1, "failures": int(failed), "unusable": int(unusable),
                 "replayed": int(replayed), "prompt_tokens": exchange.prompt_tokens,
                 "completion_tokens": exchange.completion_tokens,
                 "total_tokens": exchange.prompt_tokens + exchange.completion_tokens,
                 "estimated_exchanges": int(exchange.estimated), "latency_s": round(exchange.latency_s, 6)}
        with self._lock:
            for k, v in usage.items():
                self._totals[k] += v
        if self._on_usage is not None:
            self._on_usage(dict(usage, role=exchange.role))
        return usage

    @staticmethod
    def _answer_notes(result: ChatResult) -> list[str]:
        notes: list[str] = []
        if result.finish_reason == "length":
            notes.append("the answer was cut off at the completion token limit")
        if result.extra.get("prompt_matches") is False:
            notes.append("replayed answer was recorded for a different prompt")
        return notes

    def propose(self, ctx: JobContext) -> JobProposal:
        """Ask the model to schedule ``ctx.job`` (see the module doc for what happens on failures).

        Raises:
            LlmEndpointError: When no answer could be had (after the client's retries).
        """
        messages = job_messages(ctx)
        key = ExchangeKey(role="job", job=ctx.job, attempt=ctx.attempt)
        result = self._ask(messages, key)
        notes = self._answer_notes(result)
        ops: list[ProposedOperation] = []
        try:
            parsed = parse_answer(result.text, job=ctx.job)
            ops = parsed.operations
            notes.extend(parsed.notes)
        except ParseError as e:
            notes.append(f"unusable answer: {e.message}")
        if ops:
            notes.extend(review_operations(ctx, ops))
        usage = self._finish(key, messages, result, notes, unusable=not ops)
        return JobProposal(job=ctx.job, operations=ops, backend=self.name, usage=usage, notes=notes)

    def supervise(self, instance: str, proposals: list[JobProposal],
                  fixed: dict[int, dict[int, tuple[int, int]]] | None = None,
                  attempt: int = 0) -> SupervisorAnswer:
        """Optionally ask the model to merge the job agents' proposals (its answer is validated like any).

        Raises:
            LlmEndpointError: When no answer could be had.
        """
        messages = supervisor_messages(instance, proposals, fixed)
        return self.ask_operations(messages, ExchangeKey(role="supervisor", job=None, attempt=attempt))

    def ask_operations(self, messages: list[dict[str, str]], key: ExchangeKey) -> SupervisorAnswer:
        """Any whole-schedule question (supervisor, single agent, planner turn): the operations answered.

        Raises:
            LlmEndpointError: When no answer could be had.
        """
        result = self._ask(messages, key)
        notes = self._answer_notes(result)
        ops: list[ProposedOperation] = []
        try:
            parsed = parse_answer(result.text, job=None)
            ops = parsed.operations
            notes.extend(parsed.notes)
        except ParseError as e:
            notes.append(f"unusable answer: {e.message}")
        self._finish(key, messages, result, notes, unusable=not ops)
        return SupervisorAnswer(ops, notes)

    def ask_text(self, messages: list[dict[str, str]], key: ExchangeKey) -> str:
        """A free-form answer (a critic's review), recorded and accounted like every other.

        Raises:
            LlmEndpointError: When no answer could be had.
        """
        result = self._ask(messages, key)
        self._finish(key, messages, result, self._answer_notes(result), unusable=not result.text.strip())
        return result.text


def make_llm_backend(settings: Settings | LlmSettings, *,
                     replay_events: Iterable[Mapping[str, Any] | Exchange | Any] | None = None,
                     recorder: ExchangeRecorder | None = None, transport: ChatTransport | None = None,
                     on_usage: Callable[[dict[str, Any]], None] | None = None) -> LlmPlanner:
    """The LLM backend the pipeline uses: live, or replaying a recorded run's events.

    Args:
        settings: Project settings (or their ``llm`` group).
        replay_events: A recorded run's log events (mappings or ``alas_argo.log.Event`` objects, e.g.
            ``ExecutionLog(store, run).events()``) or exchanges: answers are served from them and no
            endpoint is contacted (``--llm-replay RUN``).
        recorder: Receives every exchange (the pipeline's sink writes ``llm.exchange`` events).
        transport: An explicit transport (overrides both the endpoint and ``replay_events``).
        on_usage: Per-exchange usage callback (metrics).

    Raises:
        InputError: When neither an endpoint nor a replay is available, or the replay holds no exchange.
    """
    if transport is None and replay_events is not None:
        items = list(replay_events)
        exchanges = [e for e in items if isinstance(e, Exchange)]
        exchanges += exchanges_from_events([e for e in items if not isinstance(e, Exchange)])
        if not exchanges:
            raise InputError("the run to replay recorded no llm.exchange events", where="--llm-replay")
        transport = ReplayTransport(exchanges)
    return LlmPlanner(settings, transport=transport, recorder=recorder, on_usage=on_usage)
