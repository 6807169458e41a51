"""The controller's HTTP contract at its edges: the body limit is inclusive, a missing Content-Type is a 415,
every service error maps to its documented status (with ``Retry-After`` where trying again helps), the bearer
token is compared exactly."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from urllib.parse import urlsplit

import pytest

from alas_argo.controller import ControllerServer, RepairService
from alas_argo.controller.contracts import DisruptionRequest, RepairResponse
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
from alas_argo.log import ExecutionLog
from alas_argo.log.layout import event_key
from alas_argo.log.s3_store import S3Store
from tests.controller.conftest import TOKEN
from tests.controller.test_http import BREAKDOWN, call, post


def _base(server: ControllerServer) -> str:
    return f"http://127.0.0.1:{server.server_port}"


def test_a_body_of_exactly_the_limit_is_accepted(make_controller: Callable[..., ControllerServer],
                                                 run_id: str) -> None:
    raw = json.dumps(BREAKDOWN).encode()
    exact = _base(make_controller(max_body_bytes=len(raw)))
    assert post(exact, None, raw=raw)[0] == 201
    short = _base(make_controller(max_body_bytes=len(raw) - 1))
    status, doc, _ = post(short, None, raw=raw, key="k2")
    assert status == 413 and str(len(raw) - 1) in doc["error"]


def test_a_post_without_content_type_is_a_415(controller: str, run_id: str) -> None:
    parts = urlsplit(controller)
    conn = http.client.HTTPConnection(str(parts.hostname), parts.port, timeout=30)
    raw = json.dumps(BREAKDOWN).encode()
    try:
        conn.putrequest("POST", "/runs/run-1/disruptions")
        for name, value in (("Authorization", f"Bearer {TOKEN}"), ("Idempotency-Key", "k"),
                            ("Content-Length", str(len(raw)))):
            conn.putheader(name, value)
        conn.endheaders(raw)
        resp = conn.getresponse()
        assert resp.status == 415 and "application/json" in json.loads(resp.read())["error"]
    finally:
        conn.close()


class _Failing(RepairService):
    """A service whose every repair fails with one error."""

    def __init__(self, store: S3Store, error: AlasError) -> None:
        super().__init__(store)
        self.error = error

    def handle(self, run_id: str, request: DisruptionRequest, key: str) -> RepairResponse:
        raise self.error


@pytest.mark.parametrize(("error", "status", "message", "where", "retry_after"), [
    (RunNotFound("run run-1 is unknown", where="run run-1"), 404, "run run-1 is unknown", "run run-1", None),
    (ConflictError("the plan moved on", where="run run-1"), 409, "the plan moved on", "run run-1", "1"),
    (InputError("machine 9 does not exist", where="disruption.events[0]"), 422, "machine 9 does not exist",
     "disruption.events[0]", None),
    (InfeasibleError("no plan honours it"), 422, "no plan honours it", None, None),
    # What the store or a bug says stays in the log (it names endpoints, buckets, keys): the client gets a
    # fixed sentence, and for a refusal the kind of problem without its names (public_reason).
    (StoreUnavailable("s3://b/k unreachable"), 503, "the store is unavailable; try again later", None, "5"),
    (StoreError("bucket 'alas-prod' gone: s3://alas-prod/runs/x"), 500, "store error: bucket gone", None, None),
    (IntegrityError("event 3 does not follow event 2", where="s3://alas-prod/runs/x/events/00000003.json"), 500,
     "the run's execution log is damaged (a record is not the chain's): run `alas log verify` on it", None, None),
    (AlasError("something else"), 500, "internal error", None, None)],
    ids=["not-found", "conflict", "input", "infeasible", "unavailable", "store", "damaged", "other"])
def test_service_errors_map_to_their_statuses(make_controller: Callable[..., ControllerServer], s3_store: S3Store,
                                              error: AlasError, status: int, message: str, where: str | None,
                                              retry_after: str | None) -> None:
    base = _base(make_controller(service=_Failing(s3_store, error)))
    got, doc, headers = post(base, BREAKDOWN)
    assert got == status and doc["error"] == message
    assert doc.get("where") == where
    assert headers.get("Retry-After") == retry_after


@pytest.mark.parametrize("authorization", [
    f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", f"Basic {TOKEN}", TOKEN, f"Bearer{TOKEN}", "Bearer ", ""])
def test_only_the_exact_bearer_token_is_accepted(controller: str, run_id: str, authorization: str) -> None:
    status, doc, headers = post(controller, BREAKDOWN, token=None, headers={"Authorization": authorization})
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer" and "bearer token" in doc["error"]


@pytest.mark.parametrize("authorization", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER  {TOKEN} "])
def test_the_scheme_is_case_insensitive_and_spaces_around_the_token_do_not_count(
        controller: str, run_id: str, authorization: str) -> None:
    assert post(controller, BREAKDOWN, token=None, headers={"Authorization": authorization})[0] == 201


def test_reads_need_the_token_too(controller: str, run_id: str) -> None:
    assert call(controller, "GET", f"/runs/{run_id}", token=f"{TOKEN}x")[0] == 401
    status, doc, _ = call(controller, "GET", f"/runs/{run_id}")
    assert status == 200 and doc["run_id"] == run_id and doc["version"] == 1


@pytest.mark.parametrize("token", [None, "wrong"])
def test_a_refused_request_commits_nothing(controller: str, run_id: str, s3_store: S3Store,
                                           token: str | None) -> None:
    status, _, _ = post(controller, BREAKDOWN, token=token)
    assert status == 401
    assert ExecutionLog(s3_store, run_id).versions() == [1]  # the 401 is the whole answer: no repair ran
    assert post(controller, BREAKDOWN)[0] == 201 and ExecutionLog(s3_store, run_id).versions() == [1, 2]


def test_without_a_token_configured_no_authorization_is_asked(make_controller: Callable[..., ControllerServer],
                                                              run_id: str) -> None:
    """``alas controller serve --no-auth``, for a local test: the server runs with no token."""
    base = _base(make_controller(token=None))
    assert post(base, BREAKDOWN, token=None)[0] == 201


def test_a_repair_on_a_damaged_log_is_refused_with_what_to_run(controller: str, run_id: str,
                                                               s3_store: S3Store) -> None:
    # The run's first event edited in the bucket behind the log's back: the reader refuses to build on it, and
    # the client is told what is wrong and what to run, without the store's names.
    key = event_key(run_id, 0)
    doc = json.loads(s3_store.get(key=key))
    s3_store.put(key=key, data=json.dumps({**doc, "payload": {"instance": "edited"}}).encode())
    status, answer, _ = post(controller, BREAKDOWN)
    assert (status, answer) == (500, {"error": "the run's execution log is damaged (a record is not the chain's): "
                                               "run `alas log verify` on it"})
    assert ExecutionLog(s3_store, run_id).verify().problems[0].code == "bad_hash"
