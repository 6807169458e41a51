"""A real S3 protocol server on loopback for tests: moto's server mode, started and stopped by the caller.

Why not plain ``moto.server.ThreadedMotoServer``: moto honours ``If-None-Match: *`` on PutObject (it
answers ``412 PreconditionFailed`` when the key exists), but as a check followed by a separate write inside
a threaded WSGI server, without a lock; real S3 and MinIO make the check atomic. Measured here: 200 rounds
of four clients racing a conditional put of one key gave 0 double winners at Python's default thread
switch interval but 3 with ``sys.setswitchinterval(1e-6)`` — rare, yet possible. This server runs the same
moto application behind one lock, which makes every request atomic with respect to the others (the
guarantee the log's conditional appends rely on) while the wire protocol (HTTP, SigV4, XML errors) stays
real.

Use :class:`LoopbackS3` directly, or the fixtures defined here: ``s3_server`` (one server per session) and
``s3_bucket`` (a fresh bucket per test). Make them visible to a test directory by importing them into its
conftest (``from tests.s3server import s3_bucket, s3_server``), as ``tests/log/conftest.py`` does.
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

__all__ = ["LoopbackS3", "free_port", "s3_bucket", "s3_server"]

ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class _Serialized:
    """WSGI middleware: one request at a time, body fully produced inside the lock."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with self._lock:
            result = self._app(environ, start_response)
            try:
                return list(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


class LoopbackS3:
    """moto's S3 server on ``127.0.0.1:<port>`` in a daemon thread.

    moto keeps its state per process, so stopping and starting again on the same port (to simulate an
    outage) brings the same buckets and objects back.
    """

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._server: Any = None
        self._thread: threading.Thread | None = None
        # One boto3 session for every client of this server: a new session loads the S3 service model again
        # (0.15 s of CPU for each bucket a test asks for); a client made from a kept session costs 0.015 s.
        # Each call still gets its own client, so no connection outlives a stop and start. Sessions are not
        # safe for making clients from several threads at once, hence the lock.
        self._session: Any = None
        self._session_lock = threading.Lock()

    def start(self) -> LoopbackS3:
        """Start serving (returns self)."""
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        app = _Serialized(DomainDispatcherApplication(create_backend_app))
        self._server = make_server("127.0.0.1", self.port, app, threaded=True)
        # A short poll, so stop() returns in 0.05 s instead of up to serve_forever's default 0.5 s.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def client(self) -> Any:
        """A boto3 S3 client for this server."""
        import boto3

        with self._session_lock:
            if self._session is None:
                self._session = boto3.session.Session()
            return self._session.client(
                "s3", endpoint_url=self.endpoint, region_name=REGION, aws_access_key_id=ACCESS_KEY,
                aws_secret_access_key=SECRET_KEY)

    def new_bucket(self, prefix: str = "alas") -> str:
        """Create a bucket with a unique name and return the name."""
        name = f"{prefix}-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def store_kwargs(self, bucket: str) -> dict[str, Any]:
        """Keyword arguments for ``S3Store(...)`` pointing at ``bucket`` on this server."""
        return {"bucket": bucket, "endpoint": self.endpoint, "region": REGION, "access_key": ACCESS_KEY,
                "secret_key": SECRET_KEY}

    def __enter__(self) -> LoopbackS3:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[LoopbackS3]:
    """moto's S3 server on a free loopback port for the whole session (stopped at the end)."""
    server = LoopbackS3().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server: LoopbackS3) -> str:
    """A fresh, empty bucket on the loopback server."""
    return s3_server.new_bucket()
