"""The operator's probe server itself, apart from the reconcile loop (tests/operators/test_health.py): what
the kubelet and Prometheus read besides the status (the content types, the length), a probe URL with a query
string, the thread it serves from (a daemon, so it never holds the operator's exit), and the probe log at DEBUG.
"""

from __future__ import annotations

import logging
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import Message

import pytest

from alas_argo.operator import serve_probes


class Liveness:
    """A liveness answer the test sets, instead of an operator's reconcile loop."""

    def __init__(self) -> None:
        self.answer = (True, "ok: fine")

    def __call__(self) -> tuple[bool, str]:
        return self.answer


def get(url: str) -> tuple[int, Message, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.headers, e.read()


@pytest.fixture
def probe() -> Iterator[tuple[Liveness, str]]:
    liveness = Liveness()
    server = serve_probes(liveness, "127.0.0.1", 0)
    try:
        yield liveness, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def test_each_answer_says_its_type_and_length(probe: tuple[Liveness, str]) -> None:
    liveness, base = probe
    status, headers, body = get(f"{base}/healthz")
    assert (status, body) == (200, b"ok: fine\n")
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Content-Length"] == str(len(body))
    liveness.answer = (False, "stuck: last reconcile pass 61s ago")
    status, headers, body = get(f"{base}/healthz")
    assert (status, body) == (503, b"stuck: last reconcile pass 61s ago\n")
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Content-Length"] == str(len(body))
    # Prometheus reads the text format by this content type.
    status, headers, body = get(f"{base}/metrics")
    assert status == 200 and headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert headers["Content-Length"] == str(len(body)) and b"# TYPE " in body
    status, headers, body = get(f"{base}/nothing")
    assert (status, body) == (404, b"not found\n")
    assert headers["Content-Type"] == "text/plain; charset=utf-8" and headers["Content-Length"] == "10"


def test_a_query_string_does_not_change_the_path(probe: tuple[Liveness, str]) -> None:
    _liveness, base = probe
    for query in ("?x=1", "?a?b", "?"):
        assert get(f"{base}/healthz{query}")[::2] == (200, b"ok: fine\n"), query
        assert get(f"{base}/metrics{query}")[0] == 200, query
    assert get(f"{base}/nothing?x=/healthz")[0] == 404


def test_it_serves_from_a_named_daemon_thread(probe: tuple[Liveness, str]) -> None:
    """A daemon thread: the operator's exit (SIGTERM) is not held up by the probe server."""
    threads = [t for t in threading.enumerate() if t.name == "alas-operator-probes"]
    assert threads and all(t.daemon for t in threads)  # an earlier test's server may still be finishing


def test_probes_are_logged_at_debug_with_the_client_and_the_request(probe: tuple[Liveness, str],
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """A probe every few seconds: at DEBUG, never INFO, naming who asked and what."""
    _liveness, base = probe
    with caplog.at_level(logging.DEBUG, logger="alas_argo.operator.health"):
        get(f"{base}/healthz?probe=1")
    records = [r for r in caplog.records if r.name == "alas_argo.operator.health"]
    assert [r.levelno for r in records] == [logging.DEBUG]
    assert records[0].getMessage() == '127.0.0.1 "GET /healthz?probe=1 HTTP/1.1" 200 -'
