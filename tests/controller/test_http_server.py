"""The controller's HTTP layer (``alas_argo.controller.http_server``), request by request, on a filesystem store.

One server serves the module (a repair on ``tiny`` takes milliseconds and a fresh server costs a poll interval
to stop), each test on runs of its own, so that the whole contract — routes, the bearer token, the body and
key checks, 201 against 200 for a replay, the status of every error type, the exact bodies and headers — is
checked in a few seconds. That is what lets the mutation run (bench/README, Mutation testing) try every mutant
of the module; ``test_http.py`` and ``test_http_edges.py`` check the same contract on the S3 store.
"""

from __future__ import annotations

import itertools
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alas_argo.controller import ControllerServer, RepairService, serve
from alas_argo.controller.contracts import MAX_KEY_CHARS, DisruptionRequest, RepairResponse
from alas_argo.controller.http_server import public_reason
from alas_argo.controller.repair_service import RunNotFound
from alas_argo.errors import (
    AlasError,
    ConflictError,
    InfeasibleError,
    InputError,
    IntegrityError,
    StoreError,
    StoreUnavailable,
)
from alas_argo.jssp.instance import Instance
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.metrics import REGISTRY
from tests.controller.conftest import TOKEN, greedy, request

BREAKDOWN = {"time": 2, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3}],
             "method": "right-shift", "budget": 1}
JSON_HEADERS = {"Content-Type": "application/json", "Cache-Control": "no-store", "Connection": "close"}
_runs = itertools.count(1)


class _Scripted(RepairService):
    """The real service, except for the runs and the readiness a test scripts to fail with a given error."""

    def __init__(self, store: FsStore) -> None:
        super().__init__(store)
        self.errors: dict[str, BaseException] = {}
        self.not_ready: AlasError | None = None

    def ready(self) -> None:
        if self.not_ready is not None:
            raise self.not_ready
        super().ready()

    def handle(self, run_id: str, request: DisruptionRequest, key: str) -> RepairResponse:
        if run_id in self.errors:
            raise self.errors[run_id]
        return super().handle(run_id, request, key)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> FsStore:
    return FsStore(tmp_path_factory.mktemp("store"))


@pytest.fixture(scope="module")
def service(store: FsStore) -> _Scripted:
    return _Scripted(store)


@pytest.fixture(scope="module")
def server(service: _Scripted) -> Iterator[ControllerServer]:
    server = serve(service, "127.0.0.1", 0, token=TOKEN, max_body_bytes=4096)
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _unscripted(service: _Scripted) -> Iterator[None]:
    yield
    service.errors.clear()
    service.not_ready = None


@pytest.fixture
def run(store: FsStore, tiny: Instance) -> str:
    """A fresh run of ``tiny`` with a greedy plan committed as v1."""
    run_id = f"run-{next(_runs)}"
    log = ExecutionLog(store, run_id)
    log.append(EventType.RUN_STARTED, payload={"instance": tiny.to_json()})
    assert log.commit_plan(greedy(tiny).to_json(), reason="plan") == 1
    return run_id


def ask(server: ControllerServer, method: str, path: str, body: Any = None, *, token: str | None = TOKEN,
        key: str | None = "k1", headers: dict[str, str] | None = None,
        raw: bytes | None = None) -> tuple[int, bytes, dict[str, str]]:
    """Send one request; return the status, the raw body and the headers."""
    return request("127.0.0.1", server.server_port, method, path, body, token=token, key=key, headers=headers,
                   raw=raw)


def answer(server: ControllerServer, method: str, path: str, body: Any = None,
           **kwargs: Any) -> tuple[int, Any, dict[str, str]]:
    """:func:`ask`, with the body parsed as JSON (every answer but ``/metrics`` is JSON)."""
    status, raw, headers = ask(server, method, path, body, **kwargs)
    return status, json.loads(raw), headers


def raw_request(server: ControllerServer, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``data`` as it is (a malformed request the client library would not write). A request line the
    stdlib cannot parse is answered HTTP/0.9 style, a body without status line or headers: status 0."""
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=30) as sock:
        sock.sendall(data)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    if not reply.startswith(b"HTTP/"):
        return 0, {}, reply
    head, _, body = reply.partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    return int(status_line.split()[1]), headers, body


def requests_counted(route: str, code: int) -> float:
    return REGISTRY.get_sample_value("alas_http_requests_total", {"route": route, "code": str(code)}) or 0.0


# ---- what a store failure may say ----------------------------------------------------------------------------

@pytest.mark.parametrize(("error", "reason"), [
    (StoreUnavailable("s3://b/k: connection refused"), "unreachable"),
    (ConflictError("the plan moved on"), "unreachable"),  # every transient error, in general words
    (StoreError("bucket 'alas-prod' does not exist: s3://alas-prod/runs/x"), "bucket does not exist"),
    (StoreError('access to "runs/x" denied by 10.0.0.7'), "access to denied by"),
    (StoreError("refused by 10.1.2.3/bucket and 'k'"), "refused by and"),
    (StoreError("'alas-prod'"), "refused the request"),
    (StoreError(": s3://alas/x"), "refused the request"),
    (StoreError("quota exceeded"), "quota exceeded")])
def test_a_public_reason_names_no_endpoint_bucket_or_key(error: AlasError, reason: str) -> None:
    assert public_reason(error) == reason


# ---- the answers' form -----------------------------------------------------------------------------------------

def test_every_answer_is_json_with_its_length_and_not_cached(server: ControllerServer) -> None:
    status, raw, headers = ask(server, "GET", "/healthz", token=None)
    assert (status, raw) == (200, b'{"status": "ok"}\n')
    assert {k: headers[k] for k in JSON_HEADERS} == JSON_HEADERS
    assert headers["Content-Length"] == str(len(raw))
    status, raw, headers = ask(server, "GET", "/elsewhere", token=None)
    assert (status, json.loads(raw)) == (404, {"error": "no route /elsewhere"})  # no "where" when there is none
    assert {k: headers[k] for k in JSON_HEADERS} == JSON_HEADERS and headers["Content-Length"] == str(len(raw))


def test_a_malformed_request_is_answered_in_json_too(server: ControllerServer) -> None:
    status, headers, body = raw_request(server, b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 501 and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"error": "Unsupported method ('BREW')"}
    # A request line it cannot parse: the path was never read, the answer is still the JSON error body.
    status, headers, body = raw_request(server, b"GET /healthz HTTP/1.1 extra\r\nHost: x\r\n\r\n")
    assert json.loads(body) == {"error": "Bad request version ('extra')"}


def test_a_too_long_request_line_is_414_in_json(server: ControllerServer) -> None:
    # The stdlib sends this one without a message: the body carries the status's phrase.
    status, headers, body = raw_request(server, b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert (status, json.loads(body)) == (414, {"error": "Request-URI Too Long"})
    assert headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_other_methods_are_405_with_allow(server: ControllerServer, run: str, method: str) -> None:
    status, doc, headers = answer(server, method, f"/runs/{run}/disruptions", BREAKDOWN)
    assert (status, doc) == (405, {"error": "method not allowed"}) and headers["Allow"] == "GET, POST"
    assert ExecutionLog(server.service.store, run).versions() == [1]


# ---- GET -------------------------------------------------------------------------------------------------------

def test_readiness_says_whether_the_store_answers(server: ControllerServer, service: _Scripted) -> None:
    assert answer(server, "GET", "/readyz", token=None)[:2] == (200, {"status": "ready"})
    service.not_ready = StoreUnavailable("http://10.0.0.7:9000 timed out")
    status, doc, headers = answer(server, "GET", "/readyz", token=None)
    assert (status, doc, headers["Retry-After"]) == (503, {"error": "store not reachable"}, "5")
    service.not_ready = StoreError("bucket 'alas-prod' does not exist: s3://alas-prod/")
    status, doc, headers = answer(server, "GET", "/readyz", token=None)
    assert (status, doc, headers["Retry-After"]) == (503, {"error": "store not ready: bucket does not exist"}, "5")


def test_metrics_are_prometheus_text(server: ControllerServer) -> None:
    assert answer(server, "GET", "/healthz?next=/a?b", token=None)[:2] == (200, {"status": "ok"})
    status, raw, headers = ask(server, "GET", "/metrics?x=1", token=None)
    assert status == 200 and headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert b"alas_http_requests_total" in raw and headers["Content-Length"] == str(len(raw))


def test_a_run_answers_its_plan_in_force(server: ControllerServer, run: str) -> None:
    assert answer(server, "GET", f"/runs/{run}?fields=all")[:2] == (
        200, {"run_id": run, "version": 1, "makespan": greedy_makespan(server, run), "retracted": []})
    assert answer(server, "GET", f"/runs/{run}/")[0] == 200
    status, doc, headers = answer(server, "GET", f"/runs/{run}", token=None)
    assert (status, doc, headers["WWW-Authenticate"]) == (401, {"error": "missing or invalid bearer token"}, "Bearer")
    status, doc, _ = answer(server, "GET", f"/runs/{run}/disruptions")
    assert (status, doc) == (404, {"error": f"no route /runs/{run}/disruptions"})


def greedy_makespan(server: ControllerServer, run: str) -> int:
    current = ExecutionLog(server.service.store, run).current_plan()
    assert current is not None
    return int(current[1]["makespan"])


def test_a_run_without_a_plan_in_force_is_404(server: ControllerServer, run: str) -> None:
    status, doc, _ = answer(server, "GET", "/runs/no-such-run")
    assert (status, doc) == (404, {"error": "run no-such-run has no committed plan in force",
                                   "where": "run no-such-run"})
    log = ExecutionLog(server.service.store, run)
    log.retract(1)
    status, doc, _ = answer(server, "GET", f"/runs/{run}")
    assert (status, doc) == (404, {"error": f"run {run} has no committed plan in force (retracted: v1)",
                                   "where": f"run {run}"})
    log.commit_plan(log.plan(1), reason="again")
    log.retract(2)
    status, doc, _ = answer(server, "GET", f"/runs/{run}")
    assert (status, doc["error"]) == (404, f"run {run} has no committed plan in force (retracted: v1, v2)")


def test_an_invalid_run_id_is_422(server: ControllerServer) -> None:
    status, doc, _ = answer(server, "GET", "/runs/.hidden")
    assert status == 422 and doc["error"].startswith("invalid run id '.hidden'") and "where" in doc
    status, doc, _ = answer(server, "POST", "/runs/.hidden/disruptions", BREAKDOWN)
    assert status == 422 and doc["error"].startswith("invalid run id '.hidden'")


def test_requests_are_counted_by_route(server: ControllerServer, run: str) -> None:
    cases = [("GET", "/healthz", 200, "healthz"), ("GET", "/readyz?x", 200, "readyz"),
             ("GET", "/healthz?a?b", 200, "healthz"),
             ("GET", "/metrics", 200, "metrics"), ("GET", f"/runs/{run}", 200, "run"),
             ("POST", f"/runs/{run}/disruptions", 401, "disruptions"),
             ("GET", "/nowhere", 404, "other"), ("GET", "/healthz/x", 404, "other")]
    for method, path, code, route in cases:
        before = requests_counted(route, code)
        token = "wrong" if method == "POST" else TOKEN
        assert ask(server, method, path, BREAKDOWN if method == "POST" else None, token=token)[0] == code
        assert requests_counted(route, code) == before + 1, (path, route)


# ---- POST: route, token, body, key ----------------------------------------------------------------------------

def test_a_post_elsewhere_is_404(server: ControllerServer, run: str) -> None:
    assert answer(server, "POST", f"/runs/{run}", BREAKDOWN)[:2] == (404, {"error": f"no route POST /runs/{run}"})
    assert answer(server, "POST", "/healthz?x=1", BREAKDOWN)[:2] == (404, {"error": "no route POST /healthz"})
    assert ExecutionLog(server.service.store, run).versions() == [1]


def test_a_post_without_the_token_is_401_and_commits_nothing(server: ControllerServer, run: str) -> None:
    for token in (None, "wrong", TOKEN.upper()):
        status, doc, headers = answer(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN, token=token)
        assert (status, doc, headers["WWW-Authenticate"]) == (401, {"error": "missing or invalid bearer token"},
                                                              "Bearer")
    assert ExecutionLog(server.service.store, run).versions() == [1]


@pytest.mark.parametrize("authorization", [f"bearer {TOKEN}", f"BEARER  {TOKEN} ", f"Bearer {TOKEN}"])
def test_the_scheme_in_any_case_and_spaces_around_the_token_are_accepted(server: ControllerServer, run: str,
                                                                          authorization: str) -> None:
    status, _, _ = ask(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN, token=None,
                       headers={"Authorization": authorization})
    assert status == 201


def test_each_request_is_logged_with_its_client(server: ControllerServer, caplog: pytest.LogCaptureFixture) -> None:
    """At INFO what the controller was asked to do and every answer that failed; the successful probes and scrapes
    (the kubelet's and Prometheus's, every few seconds) at DEBUG only."""
    with caplog.at_level(logging.DEBUG, logger="alas_argo.controller.http_server"):
        assert ask(server, "GET", "/healthz?probe=1", token=None)[0] == 200
        assert ask(server, "GET", "/metrics", token=None)[0] == 200
        assert ask(server, "GET", "/nowhere", token=None)[0] == 404
        assert ask(server, "DELETE", "/healthz", token=None)[0] == 405
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "alas_argo.controller.http_server"]
    assert lines == [("DEBUG", '127.0.0.1 "GET /healthz?probe=1 HTTP/1.1" 200 -'),
                     ("DEBUG", '127.0.0.1 "GET /metrics HTTP/1.1" 200 -'),
                     ("INFO", '127.0.0.1 "GET /nowhere HTTP/1.1" 404 -'),
                     ("INFO", '127.0.0.1 "DELETE /healthz HTTP/1.1" 405 -')]


def test_a_failed_probe_is_logged_at_info(server: ControllerServer, service: _Scripted,
                                          caplog: pytest.LogCaptureFixture) -> None:
    service.not_ready = StoreUnavailable("store down")
    try:
        with caplog.at_level(logging.INFO, logger="alas_argo.controller.http_server"):
            assert ask(server, "GET", "/readyz", token=None)[0] == 503
    finally:
        service.not_ready = None
    lines = [r.getMessage() for r in caplog.records if r.name == "alas_argo.controller.http_server"
             and r.levelno == logging.INFO]
    assert lines == ['127.0.0.1 "GET /readyz HTTP/1.1" 503 -']


def test_content_length_is_required_and_a_number(server: ControllerServer, run: str) -> None:
    path = f"/runs/{run}/disruptions"
    auth = f"Authorization: Bearer {TOKEN}\r\nIdempotency-Key: k\r\nContent-Type: application/json\r\n".encode()
    status, _, body = raw_request(server, f"POST {path} HTTP/1.1\r\nHost: x\r\n".encode() + auth + b"\r\n")
    assert (status, json.loads(body)) == (411, {"error": "Content-Length is required"})
    status, _, body = raw_request(server, f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n".encode()
                                  + auth + b"\r\n")
    assert (status, json.loads(body)) == (400, {"error": "invalid Content-Length"})
    assert ExecutionLog(server.service.store, run).versions() == [1]


def test_the_body_limit_is_inclusive(server: ControllerServer, run: str) -> None:
    path = f"/runs/{run}/disruptions"
    body = json.dumps(BREAKDOWN).encode()
    exact = body + b" " * (4096 - len(body))  # JSON allows trailing whitespace
    assert ask(server, "POST", path, raw=exact, key="exact")[0] == 201
    status, doc, headers = answer(server, "POST", path, raw=exact + b" ", key="over")
    assert (status, doc) == (413, {"error": "body larger than 4096 bytes"}) and headers["Connection"] == "close"
    assert ExecutionLog(server.service.store, run).versions() == [1, 2]


def test_a_negative_length_is_refused(server: ControllerServer, run: str) -> None:
    status, _, body = raw_request(server, f"POST /runs/{run}/disruptions HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                  f"Bearer {TOKEN}\r\nIdempotency-Key: k\r\nContent-Type: application/json\r\n"
                                  "Content-Length: -1\r\n\r\n".encode())
    assert (status, json.loads(body)) == (413, {"error": "body larger than 4096 bytes"})
    assert ExecutionLog(server.service.store, run).versions() == [1]


def test_an_empty_body_is_a_bad_body_not_a_large_one(server: ControllerServer, run: str) -> None:
    status, doc, _ = answer(server, "POST", f"/runs/{run}/disruptions", raw=b"")
    assert (status, doc) == (422, {"error": "invalid JSON: Expecting value", "where": "body line 1 column 1"})


def test_a_post_without_content_type_is_415(server: ControllerServer, run: str) -> None:
    body = json.dumps(BREAKDOWN).encode()
    status, _, raw = raw_request(server, f"POST /runs/{run}/disruptions HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                 f"Bearer {TOKEN}\r\nIdempotency-Key: k\r\nContent-Length: {len(body)}\r\n\r\n"
                                 .encode() + body)
    assert (status, json.loads(raw)) == (415, {"error": "Content-Type must be application/json"})


def test_only_content_length_bytes_are_the_body(server: ControllerServer, run: str) -> None:
    """Bytes after the declared body (a second, pipelined request) are not read as part of it."""
    body = json.dumps(BREAKDOWN).encode()
    status, _, raw = raw_request(server, f"POST /runs/{run}/disruptions HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                 f"Bearer {TOKEN}\r\nIdempotency-Key: k\r\nContent-Type: application/json\r\n"
                                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body + b"GET /healthz HTTP/1.1\r\n")
    assert status == 201, raw
    assert json.loads(raw)["version"] == 2


@pytest.mark.parametrize("ctype", ["application/json", "Application/JSON; charset=utf-8", " application/json ;x=1"])
def test_a_json_content_type_is_accepted_with_parameters_and_in_any_case(server: ControllerServer, run: str,
                                                                          ctype: str) -> None:
    assert ask(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN, headers={"Content-Type": ctype})[0] == 201


@pytest.mark.parametrize("ctype", ["text/plain", "application/jsonx", "application/x-www-form-urlencoded", ""])
def test_another_content_type_is_415(server: ControllerServer, run: str, ctype: str) -> None:
    status, doc, _ = answer(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN, headers={"Content-Type": ctype})
    assert (status, doc) == (415, {"error": "Content-Type must be application/json"})
    assert ExecutionLog(server.service.store, run).versions() == [1]


@pytest.mark.parametrize("key", [None, "", "with space", "tab\tkey", "clé", "k" * (MAX_KEY_CHARS + 1)])
def test_an_unusable_idempotency_key_is_400(server: ControllerServer, run: str, key: str | None) -> None:
    headers = {} if key is None else {"Idempotency-Key": key}
    status, doc, _ = answer(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN, key=None, headers=headers)
    assert (status, doc) == (400, {"error": f"Idempotency-Key header is required (1-{MAX_KEY_CHARS} printable "
                                            "characters)", "where": "Idempotency-Key"})
    assert ExecutionLog(server.service.store, run).versions() == [1]


@pytest.mark.parametrize("key", ["k", "!~", "k" * MAX_KEY_CHARS])
def test_a_printable_key_up_to_the_limit_is_accepted(server: ControllerServer, run: str, key: str) -> None:
    assert ask(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN, key=key)[0] == 201


# ---- POST: the repair and its replay ---------------------------------------------------------------------------

def test_a_new_repair_is_201_and_its_replay_200(server: ControllerServer, run: str) -> None:
    path = f"/runs/{run}/disruptions?trace=1&next=/a?b"
    status, first, headers = answer(server, "POST", path, BREAKDOWN, key="once")
    assert status == 201 and {k: headers[k] for k in JSON_HEADERS} == JSON_HEADERS
    assert first["run_id"] == run and first["version"] == 2 and first["parent_version"] == 1
    assert first["idempotent_replay"] is False
    status, again, _ = answer(server, "POST", path, BREAKDOWN, key="once")
    assert status == 200 and again == {**first, "idempotent_replay": True}
    assert ExecutionLog(server.service.store, run).versions() == [1, 2]
    assert answer(server, "GET", f"/runs/{run}")[1]["version"] == 2


@pytest.mark.parametrize(("error", "status", "body", "retry_after"), [
    (RunNotFound("run x is unknown", where="run x"), 404, {"error": "run x is unknown", "where": "run x"}, None),
    (ConflictError("the plan moved on", where="run x"), 409, {"error": "the plan moved on", "where": "run x"}, "1"),
    (ConflictError("the plan moved on"), 409, {"error": "the plan moved on"}, "1"),
    (InputError("machine 9 does not exist", where={"field": "events.0"}), 422,
     {"error": "machine 9 does not exist", "where": {"field": "events.0"}}, None),
    (InputError("bad", where=7), 422, {"error": "bad"}, None),  # type: ignore[arg-type]  # not str or dict: left out
    (InfeasibleError("no plan honours it", where="disruption"), 422,
     {"error": "no plan honours it", "where": "disruption"}, None),
    (StoreUnavailable("s3://b/k unreachable", where="s3://b/k"), 503,
     {"error": "the store is unavailable; try again later"}, "5"),
    (StoreError("bucket 'alas-prod' gone: s3://alas-prod/runs/x", where="s3://alas-prod"), 500,
     {"error": "store error: bucket gone"}, None),
    (IntegrityError("event 3 does not follow event 2", where="s3://alas-prod/runs/x/events/00000003.json"), 500,
     {"error": "the run's execution log is damaged (a record is not the chain's): run `alas log verify` on it"},
     None),
    (AlasError("something else", where="inside"), 500, {"error": "internal error"}, None),
    (RuntimeError("secret internals"), 500, {"error": "internal error"}, None)],
    ids=["not-found", "conflict", "conflict-nowhere", "input-dict", "input-int-where", "infeasible", "unavailable",
         "store", "damaged", "other", "bug"])
def test_each_error_maps_to_its_status(server: ControllerServer, service: _Scripted, run: str,
                                       error: BaseException, status: int, body: dict[str, Any],
                                       retry_after: str | None) -> None:
    service.errors[run] = error
    got, doc, headers = answer(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN)
    assert (got, doc, headers.get("Retry-After")) == (status, body, retry_after)


class _Refusing(FsStore):
    """A store that refuses every read, naming its bucket and key as a real store's error does."""

    def get(self, *, key: str) -> bytes:
        raise StoreError(f"bucket 'alas-prod' refused: s3://alas-prod/{key}")

    def list(self, *, prefix: str, start_after: str | None = None) -> list[str]:
        raise StoreError(f"bucket 'alas-prod' refused: s3://alas-prod/{prefix}")


@pytest.mark.parametrize(("error", "level", "line"), [
    (StoreUnavailable("timed out", where="s3://alas-prod/runs/x"), "WARNING",
     "store unavailable: s3://alas-prod/runs/x: timed out"),
    (StoreError("bucket 'alas-prod' gone", where="s3://alas-prod"), "ERROR",
     "store error: s3://alas-prod: bucket 'alas-prod' gone"),
    (AlasError("something else", where="inside"), "ERROR", "repair failed: inside: something else")],
    ids=["unavailable", "store", "other"])
def test_what_an_answer_leaves_out_is_logged_in_full(server: ControllerServer, service: _Scripted, run: str,
                                                     caplog: pytest.LogCaptureFixture, error: AlasError,
                                                     level: str, line: str) -> None:
    """The module's promise: store failures are answered in general words and logged in full."""
    service.errors[run] = error
    with caplog.at_level(logging.INFO, logger="alas_argo.controller.http_server"):
        assert answer(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN)[0] in (500, 503)
    logged = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.WARNING]
    assert logged == [(level, line)]


def test_a_failed_readiness_check_and_a_bug_are_logged(server: ControllerServer, service: _Scripted, run: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    service.not_ready = StoreUnavailable("timed out", where="http://10.0.0.7:9000")
    service.errors[run] = RuntimeError("secret internals")
    with caplog.at_level(logging.INFO, logger="alas_argo.controller.http_server"):
        assert answer(server, "GET", "/readyz", token=None)[0] == 503
        assert answer(server, "POST", f"/runs/{run}/disruptions", BREAKDOWN)[0] == 500
    logged = [(r.levelname, r.getMessage()) for r in caplog.records if r.levelno >= logging.WARNING]
    assert logged == [("WARNING", "readiness check failed: http://10.0.0.7:9000: timed out"),
                      ("ERROR", f"repair of run {run} failed unexpectedly")]
    bug = next(r for r in caplog.records if r.levelno == logging.ERROR)
    assert bug.exc_info is not None and "secret internals" in str(bug.exc_info[1])  # the traceback is kept


def test_a_store_failure_on_a_read_is_mapped_too(tmp_path: Path) -> None:
    other = serve(RepairService(_Refusing(tmp_path)), "127.0.0.1", 0, token=None)
    try:
        assert answer(other, "GET", "/runs/run-1")[:2] == (500, {"error": "store error: bucket refused"})
    finally:
        other.shutdown()
        other.server_close()


# ---- the server's settings -----------------------------------------------------------------------------------

def test_the_settings_reach_the_connection_front(store: FsStore) -> None:
    server = serve(RepairService(store), "127.0.0.1", 0, token="t", max_body_bytes=10, request_timeout=2.5,
                   workers=3, max_connections=7)
    try:
        front = server.front
        assert (server.token, server.max_body_bytes, server.request_timeout) == ("t", 10, 2.5)
        assert (front.max_body_bytes, front.deadline, front.max_connections) == (10, 2.5, 7)
        assert front._pool._max_workers == 3
        assert server.server_address == ("127.0.0.1", server.server_port) and server.server_port > 0
        assert answer(server, "GET", "/healthz")[0] == 200
        assert answer(server, "GET", "/runs/x", token=None)[0] == 401  # the token given to serve is asked for
    finally:
        server.shutdown()
        server.server_close()
    # ``alas controller serve`` passes only the body limit: these defaults are the deployed settings.
    default = serve(RepairService(store), "127.0.0.1", 0, token="t")
    direct = ControllerServer("127.0.0.1", 0, RepairService(store), token="t")
    try:
        for made in (default, direct):
            assert (made.max_body_bytes, made.request_timeout, made.front.max_connections) == (1_048_576, 30.0, 1024)
            assert (made.front.max_body_bytes, made.front.deadline, made.front._pool._max_workers) == \
                (1_048_576, 30.0, 8)
    finally:
        default.shutdown()
        for made in (default, direct):
            made.server_close()


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_an_ipv6_host_is_bound_as_ipv6(store: FsStore) -> None:
    # Constructed outside any try: a server that bound the wrong family must fail this test, not skip it.
    server = ControllerServer("::1", 0, RepairService(store), token=None)
    try:
        assert server.socket.family == socket.AF_INET6
        assert server.server_address == ("::1", server.server_port)  # host and port, as for IPv4
    finally:
        server.server_close()


def test_serving_runs_in_a_named_daemon_thread(store: FsStore) -> None:
    """A daemon thread, so that the process still ends when its main thread does (``serve`` uses this)."""
    server = ControllerServer("127.0.0.1", 0, RepairService(store), token=None)
    thread = server.start()
    try:
        assert thread.daemon and thread.name == "alas-controller" and thread.is_alive()
        assert answer(server, "GET", "/healthz")[0] == 200
    finally:
        server.shutdown()
        server.server_close()
    thread.join(timeout=10)
    assert not thread.is_alive()
