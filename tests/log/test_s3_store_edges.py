"""The S3 backend's own promises at its error boundary, beyond the contract both backends keep (test_store.py)
and the outages of test_s3_failures.py: answers moto never sends, from a scripted S3 endpoint on loopback
(real HTTP, real botocore parsing), and the store built from the settings."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import pytest

from alas_argo.errors import StoreError
from alas_argo.log.s3_store import S3Store
from tests.s3server import free_port

KEY = "runs/r/events/00000000.json"


def _error(code: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>scripted</Message>'
            "<RequestId>1</RequestId></Error>").encode()


class Scripted:
    """An S3 endpoint on loopback that answers each HTTP method as scripted: ``answers[method]`` is a list of
    (status, body) used in turn, the last one repeated. Every request is recorded as (method, path)."""

    def __init__(self) -> None:
        self.answers: dict[str, list[tuple[int, bytes]]] = {}
        self.requests: list[tuple[str, str]] = []
        scripted = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # HTTP/1.1 answers botocore's "Expect: 100-continue" at once; on HTTP/1.0 each PUT waits 1 s for it
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                scripted.requests.append((self.command, self.path))
                queue = scripted.answers.get(self.command, [(500, _error("InternalError"))])
                status, body = queue.pop(0) if len(queue) > 1 else queue[0]
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_PUT = _answer

            def log_message(self, *_args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def store(self, **kwargs: object) -> S3Store:
        """A store on bucket ``b`` of this endpoint that never waits between retries."""
        params: dict[str, object] = {"bucket": "b", "endpoint": self.endpoint, "access_key": "a",
                                     "secret_key": "s", "max_retries": 1, "sleep": lambda _d: None}
        return S3Store(**{**params, **kwargs})  # type: ignore[arg-type]

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    try:
        yield server
    finally:
        server.close()


def test_a_refused_listing_names_the_prefix_once(scripted: Scripted) -> None:
    scripted.answers = {"GET": [(403, _error("AccessDenied"))]}
    store = scripted.store(prefix="team")
    for listing in (lambda: store.list(prefix="runs/"), lambda: store.children(prefix="runs/")):
        with pytest.raises(StoreError) as info:
            listing()
        assert info.value.where == f"{store.location}/runs/"  # the store's prefix is in its location already
        assert info.value.message.startswith("S3 list refused (AccessDenied): ")
