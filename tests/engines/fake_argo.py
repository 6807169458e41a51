"""A loopback HTTP server playing the Argo server's workflow-create endpoint, for `alas submit`'s tests: it
records each request (path, Authorization header, JSON body) and answers with the workflow it was sent, named,
or with a refusal of the status and body the test sets."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeArgo", "serving"]


class FakeArgo(BaseHTTPRequestHandler):
    """The handler; its class attributes are the server's state, reset by :func:`serving`."""

    requests: list[dict[str, Any]] = []  # shared with the test on purpose
    status = 200
    #: The body of a non-200 answer.
    answer = b"{}"
    #: The created workflow's name; None: its generateName and "x7k2p", as Argo names one.
    name: str | None = None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        cls.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        if cls.status == 200:
            wf = body["workflow"]
            name = cls.name if cls.name is not None else wf["metadata"]["generateName"] + "x7k2p"
            data = json.dumps({**wf, "metadata": {**wf["metadata"], "name": name}}).encode()
        else:
            data = cls.answer
        self.send_response(cls.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving(*, answer: bytes = b"{}", name: str | None = None, tls: ssl.SSLContext | None = None) -> Iterator[str]:
    """A fresh fake Argo server (no requests, status 200, ``answer`` for refusals) on a free port; its URL
    (https with ``tls``)."""
    FakeArgo.requests, FakeArgo.status, FakeArgo.answer, FakeArgo.name = [], 200, answer, name
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeArgo)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    # A short poll, so shutdown() below returns in 0.05 s instead of up to serve_forever's default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
