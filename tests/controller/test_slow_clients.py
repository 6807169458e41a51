"""Slow clients cannot hold the controller: a total deadline per request, a bounded set of worker threads, and
normal requests answered while 200 clients trickle; error bodies never name the store's address or keys."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from alas_argo.controller import ControllerServer, RepairService
from alas_argo.log.s3_store import S3Store
from tests.controller.conftest import TOKEN
from tests.controller.test_http import BREAKDOWN, call, post
from tests.s3server import LoopbackS3, free_port

HEAD = (b"POST /runs/run-1/disruptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection without answering (an orderly close or a reset)."""
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def _trickle(port: int, stop: threading.Event, cut: list[float], started: float) -> None:
    """Send a request one byte every 50 ms, never finishing; record when the server cut us off."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        for byte in HEAD + b"{" * 10_000:
            if stop.is_set():
                return
            try:
                sock.sendall(bytes([byte]))
            except OSError:  # reset or broken pipe: the server closed the connection
                cut.append(time.monotonic() - started)
                return
            time.sleep(0.05)


def test_a_client_trickling_bytes_is_cut_off_at_the_total_deadline(
        make_controller: Callable[..., ControllerServer], run_id: str) -> None:
    server = make_controller(request_timeout=1.0)
    stop, cut = threading.Event(), list[float]()
    started = time.monotonic()
    worker = threading.Thread(target=_trickle, args=(server.server_port, stop, cut, started))
    worker.start()
    worker.join(timeout=60)  # each byte arrives well within any per-read timeout: only a total deadline cuts it
    stop.set()
    assert cut, "the trickling client was never cut off"
    assert cut[0] < 30  # generous: the deadline is 1 s, sleeping and scheduling add the rest


def test_200_slow_clients_while_normal_requests_are_answered(
        make_controller: Callable[..., ControllerServer], run_id: str) -> None:
    before = threading.active_count()
    server = make_controller(request_timeout=4.0, workers=4)
    base = f"http://127.0.0.1:{server.server_port}"
    held: list[socket.socket] = []
    try:
        for _ in range(200):  # each sends half a request head and stalls
            sock = socket.create_connection(("127.0.0.1", server.server_port), timeout=30)
            sock.sendall(HEAD[:40])
            held.append(sock)
        assert threading.active_count() <= before + 1 + 4  # the selector thread and at most 4 workers
        statuses = [call(base, "GET", "/healthz")[0] for _ in range(20)]
        statuses.append(call(base, "GET", "/runs/run-1")[0])
        status, doc, _ = post(base, BREAKDOWN, key="during-the-flood")
        assert statuses == [200] * 21 and status == 201 and doc["version"] == 2
        assert threading.active_count() <= before + 1 + 4
        # past the deadline every stalled client has been cut off
        for sock in held:
            sock.settimeout(30)
            assert _closed(sock)
    finally:
        for sock in held:
            sock.close()
    assert call(base, "GET", "/healthz")[0] == 200


def test_connections_beyond_the_cap_are_closed(make_controller: Callable[..., ControllerServer], run_id: str) -> None:
    server = make_controller(request_timeout=5.0, max_connections=10)
    held = [socket.create_connection(("127.0.0.1", server.server_port), timeout=30) for _ in range(10)]
    try:
        for sock in held:
            sock.sendall(HEAD[:10])
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=30) as extra:
            extra.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _closed(extra)  # closed without an answer: the cap holds
    finally:
        for sock in held:
            sock.close()


@pytest.fixture
def dead_store_controller(make_controller: Callable[..., ControllerServer]) -> tuple[str, str]:
    endpoint = f"http://127.0.0.1:{free_port()}"
    store = S3Store(bucket="secret-bucket", endpoint=endpoint, access_key="a", secret_key="b", prefix="tenant-x",
                    connect_timeout=0.3, max_retries=0)
    server = make_controller(RepairService(store))
    return f"http://127.0.0.1:{server.server_port}", endpoint


def _no_internals(doc: dict[str, Any], *secrets: str) -> None:
    text = repr(doc)
    for secret in secrets:
        assert secret not in text, doc
    assert "runs/" not in text and "s3://" not in text, doc


def test_store_failures_do_not_reveal_the_store(dead_store_controller: tuple[str, str]) -> None:
    base, endpoint = dead_store_controller
    address = endpoint.removeprefix("http://")
    status, doc, headers = post(base, BREAKDOWN, key="k-dead")
    assert status == 503 and headers.get("Retry-After") == "5"
    _no_internals(doc, address, "secret-bucket", "tenant-x")
    status, doc, _ = call(base, "GET", "/runs/run-1")
    assert status == 503
    _no_internals(doc, address, "secret-bucket", "tenant-x")
    status, doc, _ = call(base, "GET", "/readyz")
    assert status == 503
    _no_internals(doc, address, "secret-bucket", "tenant-x")


def test_a_missing_bucket_is_a_500_without_its_name(make_controller: Callable[..., ControllerServer],
                                                    s3_server: LoopbackS3) -> None:
    store = S3Store(**{**s3_server.store_kwargs("no-such-bucket-4711")}, max_retries=0)
    server = make_controller(RepairService(store))
    status, doc, _ = post(f"http://127.0.0.1:{server.server_port}", BREAKDOWN, key="k-nb")
    assert status == 500 and doc == {"error": "store error: bucket does not exist"}
