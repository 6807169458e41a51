"""A scripted OpenAI-compatible chat-completions server on loopback, for the LLM backend's tests.

It serves ``POST /v1/chat/completions`` from a queue of :class:`Reply` objects (``script``) and, when the
queue is empty, from a ``route`` function of the decoded request. Replies can be good answers, the mistakes
models make on job-shop tasks (tests build those texts), HTTP errors with headers (429 + Retry-After, 500,
401), answers without ``usage``, raw non-JSON bodies, and a delay longer than the client's timeout (a model
that never answers). Delays wait on an event that :meth:`ScriptedLlmServer.stop` sets, so no test hangs.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Reply", "ScriptedLlmServer", "Sleeps", "context_of", "running_server", "simulated_route"]


@dataclass
class Reply:
    """One scripted answer."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] | None = field(default_factory=lambda: {"prompt_tokens": 50, "completion_tokens": 20})
    raw_body: bytes | None = None
    delay: float = 0.0
    finish_reason: str = "stop"
    model: str = "scripted-model"

    def body(self) -> bytes:
        """The HTTP body for this reply."""
        if self.raw_body is not None:
            return self.raw_body
        if self.status != 200:
            return json.dumps({"error": {"message": f"scripted error {self.status}"}}).encode()
        doc: dict[str, Any] = {
            "id": "chatcmpl-test", "object": "chat.completion", "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.content},
                         "finish_reason": self.finish_reason}],
        }
        if self.usage is not None:
            doc["usage"] = dict(self.usage, total_tokens=sum(self.usage.values()))
        return json.dumps(doc).encode()


def context_of(request: dict[str, Any]) -> dict[str, Any]:
    """The JSON context (after ``CONTEXT:``) of the last user message of a recorded request."""
    user = [m["content"] for m in request["body"]["messages"] if m["role"] == "user"][-1]
    line = next(x for x in user.splitlines() if x.startswith("CONTEXT:"))
    return dict(json.loads(line[len("CONTEXT:"):]))


class ScriptedLlmServer:
    """The server; use :func:`running_server` (or the ``llm_server`` fixture) to start and stop it."""

    def __init__(self) -> None:
        self.queue: deque[Reply] = deque()
        self.route: Callable[[dict[str, Any]], Reply] | None = None
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        """The base URL (``.../v1``) to configure the client with."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies, served in order before ``route`` is consulted."""
        with self._lock:
            self.queue.extend(replies)

    def _next(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self.queue:
                return self.queue.popleft()
        if self.route is None:
            return Reply(status=500)
        return self.route(request)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                request = {"path": self.path, "headers": dict(self.headers), "body": body}
                reply = server._next(request) if self.path.endswith("/chat/completions") else Reply(status=404)
                if reply.delay and server._stopping.wait(reply.delay):
                    return
                payload = reply.body()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

        return Handler

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Wake any delayed reply, stop serving and close the socket."""
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def running_server() -> Iterator[ScriptedLlmServer]:
    """Start a server on a free loopback port, yield it, and stop it (a fixture body)."""
    server = ScriptedLlmServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def simulated_route(model: Any = None, *, seed: int = 0) -> Callable[[dict[str, Any]], Reply]:
    """A route that answers like :class:`~alas_argo.agents.simulated.SimulatedTransport` over real HTTP.

    The server cannot see the client's exchange key, so it numbers the attempts itself: per job for job
    agents, per task for whole-instance prompts (the n-th request of a kind is attempt n - 1).
    """
    from alas_argo.agents.llm_client import ExchangeKey
    from alas_argo.agents.simulated import SimulatedTransport, context_of_messages

    sim = SimulatedTransport(model, seed=seed)
    seen: dict[tuple[str, Any], int] = {}
    lock = threading.Lock()

    def route(request: dict[str, Any]) -> Reply:
        messages = request["body"]["messages"]
        doc = context_of_messages(messages)
        kind = ("job", doc["job"]) if "job" in doc else (str(doc.get("task")), None)
        with lock:
            attempt = seen.get(kind, 0)
            seen[kind] = attempt + 1
        role = "job" if kind[0] == "job" else ("critic" if kind[0] == "review" else "planner")
        result = sim.complete(messages, key=ExchangeKey(role=role, job=kind[1], attempt=attempt))
        return Reply(content=result.text, model="scripted-simulator",
                     usage={"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens})

    return route


class Sleeps:
    """An injected sleep that records the waits instead of taking them."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
