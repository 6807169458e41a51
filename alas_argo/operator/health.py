"""The operator's HTTP endpoint: ``/healthz`` for the kubelet's liveness probe, ``/metrics`` for Prometheus.

Liveness means the reconcile loop still finishes passes: a pass that fails (the API server away, a
Forbidden) still counts, since the loop is alive and retries; a pass stuck for longer than ``max_age``
(a hung call) does not, and the kubelet restarts the pod. A bare TCP check, as before, passed as long as
the metrics thread listened, whatever the loop did.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from alas_argo import metrics

__all__ = ["ProbeServer", "serve_probes"]

log = logging.getLogger(__name__)

#: Answers (alive, reason) for the liveness probe.
Liveness = Callable[[], tuple[bool, str]]


class ProbeServer(ThreadingHTTPServer):
    """Serves ``/healthz`` and ``/metrics``; ``server_port`` is the bound port (use port 0 in tests)."""

    daemon_threads = True

    def __init__(self, host: str, port: int, liveness: Liveness) -> None:
        super().__init__((host, port), _Handler)
        self.liveness = liveness


class _Handler(BaseHTTPRequestHandler):
    server: ProbeServer

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)  # probes every few seconds: not INFO

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/healthz":
            alive, reason = self.server.liveness()
            self._send(200 if alive else 503, (reason + "\n").encode(), "text/plain; charset=utf-8")
        elif path == "/metrics":
            self._send(200, metrics.exposition(), "text/plain; version=0.0.4; charset=utf-8")
        else:
            self._send(404, b"not found\n", "text/plain; charset=utf-8")


def serve_probes(liveness: Liveness, host: str, port: int) -> ProbeServer:
    """Start the probe server on ``host:port`` in a daemon thread; stop it with ``shutdown()``."""
    server = ProbeServer(host, port, liveness)
    threading.Thread(target=server.serve_forever, name="alas-operator-probes", daemon=True).start()
    return server
