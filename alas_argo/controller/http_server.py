"""The controller's HTTP front: a selector thread reads whole requests (:mod:`.connections`), a bounded pool of
workers answers them with a stdlib ``BaseHTTPRequestHandler``; one request per connection.

Routes: ``POST /runs/<run_id>/disruptions`` (bearer token, ``Idempotency-Key`` header, JSON body at most
``max_body_bytes``), ``GET /runs/<run_id>`` (current version), ``GET /healthz`` (the process is up),
``GET /readyz`` (the store answers), ``GET /metrics`` (Prometheus text format).

Errors map to status codes by type: bad input 400/411/413/415/422, missing or wrong token 401, unknown
route 404 (and an unknown run 404), 405 for another method, a lost compare-and-swap 409, an unreachable
store 503 with ``Retry-After``. Bodies are JSON ``{"error": "...", "where": "..."}``; nothing internal
(stack traces, store credentials, the store's address or object keys) is ever sent: store failures are
answered in general words and logged in full.
"""

from __future__ import annotations

import hmac
import io
import json
import logging
import re
import socket
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any

from alas_argo import metrics
from alas_argo.controller.connections import ConnectionFront, PendingRequest
from alas_argo.controller.contracts import MAX_KEY_CHARS, parse_request
from alas_argo.controller.repair_service import RepairService, RunNotFound
from alas_argo.errors import (
    AlasError,
    ConflictError,
    InfeasibleError,
    InputError,
    IntegrityError,
    StoreError,
    TransientError,
)
from alas_argo.log import ExecutionLog, check_run_id

__all__ = ["ControllerServer", "public_reason", "serve"]

log = logging.getLogger(__name__)
_RUN_PATH = re.compile(r"^/runs/([^/]+)(/disruptions)?/?\Z")
_KEY = re.compile(r"^[\x21-\x7e]{1," + str(MAX_KEY_CHARS) + r"}\Z")


_NAMES = re.compile(r"'[^']*'|\"[^\"]*\"|\b\w+://\S+|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\S*")


def public_reason(e: AlasError) -> str:
    """What an answer may say about a store failure: the kind of problem, never the endpoint, bucket, prefix or
    object key (quoted names and addresses are dropped: "bucket 'x' does not exist" -> "bucket does not exist")."""
    if isinstance(e, TransientError):
        return "unreachable"
    text = " ".join(_NAMES.sub("", e.message.split(":", 1)[0]).split())
    return text or "refused the request"


class ControllerServer:
    """The HTTP server; ``server_port`` is the bound port (use port 0 in tests).

    Args:
        host: Address to bind.
        port: Port to bind (0 picks a free one).
        service: The repair service behind the routes.
        token: Bearer token clients must present (None: no authentication).
        max_body_bytes: Largest request body accepted.
        request_timeout: Seconds from connecting to a complete request (a total deadline, not per read: a
            client sending a byte at a time is cut off like a silent one); also bounds writing the answer.
        workers: Threads answering complete requests.
        max_connections: Open connections beyond which new ones are closed at once.
    """

    def __init__(self, host: str, port: int, service: RepairService, *, token: str | None,
                 max_body_bytes: int = 1_048_576, request_timeout: float = 30.0, workers: int = 8,
                 max_connections: int = 1024) -> None:
        self.socket = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                           backlog=512)
        self.server_address = self.socket.getsockname()[:2]
        self.server_port: int = self.server_address[1]
        self.service, self.token, self.max_body_bytes = service, token, max_body_bytes
        self.request_timeout = request_timeout
        self.front = ConnectionFront(self.socket, self._handle, deadline=request_timeout,
                                     max_body_bytes=max_body_bytes, workers=workers, max_connections=max_connections)

    def _handle(self, pending: PendingRequest) -> None:
        _Handler(pending, pending.address, self)  # type: ignore[arg-type]  # the handler needs only our fields

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until :meth:`shutdown`."""
        self.front.serve_forever(poll_interval)

    def shutdown(self) -> None:
        """Stop serving (requests already being answered finish)."""
        self.front.shutdown()

    def server_close(self) -> None:
        """Close the listening socket and every waiting connection."""
        self.front.close()
        self.socket.close()

    def start(self) -> threading.Thread:
        """Serve from a daemon thread; stop with ``shutdown()`` then ``server_close()``."""
        thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.2}, name="alas-controller",
                                  daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: ControllerServer  # type: ignore[assignment]
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        # The front read the whole request before a worker got it: the handler reads from memory and only
        # writes to the socket (whose timeout the front set).
        pending: PendingRequest = self.request
        self.connection = pending.sock
        self.rfile = io.BytesIO(bytes(pending.data))
        self.wfile = pending.sock.makefile("wb")
        self.close_connection = True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # The stdlib answers a malformed request line or head (400, 414, 431, 501) with an HTML page; answer
        # with the JSON error body every other error has.
        self.close_connection = True
        if not hasattr(self, "path"):
            self.path = "/"
        self._error(code, message or HTTPStatus(code).phrase)

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.address_string(), format % args)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # The kubelet's probes and Prometheus's scrapes answer every few seconds: their successes at DEBUG keep
        # the controller's log to what it was asked to do (and to any probe that failed).
        quiet = (getattr(self, "command", None) == "GET" and self._route() in ("healthz", "readyz", "metrics")
                 and str(code).isdigit() and int(code) < 400)
        (log.debug if quiet else log.info)("%s \"%s\" %s %s", self.address_string(), self.requestline, code, size)

    def _send(self, status: int, body: Any, *, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        raw = body if isinstance(body, bytes) else (json.dumps(body) + "\n").encode()
        metrics.count_http_request(self._route(), status)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(raw)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(raw)

    def _route(self) -> str:
        """The route label of this request (a closed set: never the run id)."""
        path = self.path.split("?", 1)[0]
        if m := _RUN_PATH.match(path):
            return "disruptions" if m.group(2) else "run"
        return path.strip("/") if path.strip("/") in ("healthz", "readyz", "metrics") else "other"

    def _error(self, status: int, message: str, where: Any = None, *,
               headers: dict[str, str] | None = None) -> None:
        body = {"error": message} if where is None else {"error": message, "where": where}
        self._send(status, body, headers=headers)

    # -- GET ---------------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            self._send(200, {"status": "ok"})
        elif path == "/readyz":
            try:
                self.server.service.ready()
            except AlasError as e:
                log.warning("readiness check failed: %s", e)
                reason = "store not reachable" if e.transient else f"store not ready: {public_reason(e)}"
                self._error(503, reason, headers={"Retry-After": "5"})
                return
            self._send(200, {"status": "ready"})
        elif path == "/metrics":
            self._send(200, metrics.exposition(), content_type="text/plain; version=0.0.4; charset=utf-8")
        elif (m := _RUN_PATH.match(path)) and not m.group(2):
            if not self._authorized():
                return
            self._run_status(m.group(1))
        else:
            self._error(404, f"no route {path}")

    def _run_status(self, run_id: str) -> None:
        try:
            log = ExecutionLog(self.server.service.store, check_run_id(run_id))
            current, retracted = log.current_plan(), log.retracted()
        except AlasError as e:
            self._fail(e)
            return
        if current is None:
            why = f" (retracted: {', '.join(f'v{v}' for v in retracted)})" if retracted else ""
            self._error(404, f"run {run_id} has no committed plan in force{why}", where=f"run {run_id}")
            return
        version, plan = current
        self._send(200, {"run_id": run_id, "version": version, "makespan": plan.get("makespan"),
                         "retracted": retracted})

    # -- POST --------------------------------------------------------------------------------------------

    def _authorized(self) -> bool:
        expected = self.server.token
        if expected is None:
            return True
        given = self.headers.get("Authorization", "")
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), expected.encode()):
            self._error(401, "missing or invalid bearer token", headers={"WWW-Authenticate": "Bearer"})
            return False
        return True

    def _body(self) -> bytes | None:
        length = self.headers.get("Content-Length")
        if length is None:
            self._error(411, "Content-Length is required")
            return None
        try:
            size = int(length)
        except ValueError:
            self._error(400, "invalid Content-Length")
            return None
        if size < 0 or size > self.server.max_body_bytes:
            # Not reading the body: the connection is closed instead of draining a huge upload.
            self.close_connection = True
            self._error(413, f"body larger than {self.server.max_body_bytes} bytes")
            return None
        ctype = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if ctype != "application/json":
            self.close_connection = True
            self._error(415, "Content-Type must be application/json")
            return None
        return self.rfile.read(size)

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        m = _RUN_PATH.match(path)
        if not m or not m.group(2):
            self.close_connection = True
            self._error(404, f"no route POST {path}")
            return
        if not self._authorized():
            self.close_connection = True
            return
        raw = self._body()
        if raw is None:
            return
        key = self.headers.get("Idempotency-Key", "")
        if not _KEY.match(key):
            self._error(400, f"Idempotency-Key header is required (1-{MAX_KEY_CHARS} printable characters)",
                        where="Idempotency-Key")
            return
        try:
            run_id = check_run_id(m.group(1))
            request = parse_request(raw)
            response = self.server.service.handle(run_id, request, key)
        except AlasError as e:
            self._fail(e)
            return
        except Exception:  # a bug: answer 500 with no internals, keep the traceback in the log
            log.exception("repair of run %s failed unexpectedly", m.group(1))
            self._error(500, "internal error")
            return
        self._send(200 if response.idempotent_replay else 201, response.to_json())

    def _fail(self, e: AlasError) -> None:
        where = e.where if isinstance(e.where, str | dict) else None
        if isinstance(e, RunNotFound):
            self._error(404, e.message, where)
        elif isinstance(e, ConflictError):
            self._error(409, e.message, where, headers={"Retry-After": "1"})
        elif isinstance(e, InputError | InfeasibleError):
            self._error(422, e.message, where)
        elif isinstance(e, TransientError):
            # A store's message names its endpoint, bucket and object keys: logged here, never sent.
            log.warning("store unavailable: %s", e)
            self._error(503, "the store is unavailable; try again later", headers={"Retry-After": "5"})
        elif isinstance(e, StoreError):
            log.error("store error: %s", e)
            self._error(500, f"store error: {public_reason(e)}")
        elif isinstance(e, IntegrityError):
            # The record it names is in the log; the client learns what is wrong and what to run, not where.
            log.error("damaged log: %s", e)
            self._error(500, "the run's execution log is damaged (a record is not the chain's): run "
                        "`alas log verify` on it")
        else:
            log.error("repair failed: %s", e)
            self._error(500, "internal error")

    def do_PUT(self) -> None:
        self.close_connection = True
        self._error(405, "method not allowed", headers={"Allow": "GET, POST"})

    do_DELETE = do_PATCH = do_PUT


def serve(service: RepairService, host: str, port: int, *, token: str | None,
          max_body_bytes: int = 1_048_576, request_timeout: float = 30.0, workers: int = 8,
          max_connections: int = 1024) -> ControllerServer:
    """Start the controller on ``host:port`` in a daemon thread and return the server."""
    server = ControllerServer(host, port, service, token=token, max_body_bytes=max_body_bytes,
                              request_timeout=request_timeout, workers=workers, max_connections=max_connections)
    server.start()
    return server
