"""The controller over real HTTP on loopback, against a real S3 protocol server (moto) on loopback."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from alas_argo.controller import ControllerServer, RepairService
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import ExecutionLog, execution_log
from alas_argo.log.layout import plan_key
from alas_argo.log.s3_store import S3Store
from tests.controller.conftest import TOKEN, request

BREAKDOWN = {"time": 2, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3}],
             "method": "right-shift", "budget": 1}


def call(base: str, method: str, path: str, body: Any = None, *, token: str | None = TOKEN,
         key: str | None = "k1", headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, dict[str, Any], dict[str, str]]:
    parts = urlsplit(base)
    status, text, headers_out = request(str(parts.hostname), int(parts.port or 80), method, path, body, token=token,
                                        key=key, headers=headers, raw=raw)
    try:
        doc = json.loads(text) if text else {}
    except ValueError:
        doc = {"text": text.decode()}
    return status, doc, headers_out


def post(base: str, body: Any, **kwargs: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    return call(base, "POST", "/runs/run-1/disruptions", body, **kwargs)


# ---- health, readiness, metrics --------------------------------------------------------------------------

def test_healthz_readyz_metrics(controller: str) -> None:
    assert call(controller, "GET", "/healthz", token=None)[:2] == (200, {"status": "ok"})
    assert call(controller, "GET", "/readyz", token=None)[:2] == (200, {"status": "ready"})
    with urllib.request.urlopen(f"{controller}/metrics", timeout=10) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        assert b"alas_repairs_total" in resp.read()


def test_readyz_fails_when_the_store_is_unreachable(make_controller: Callable[..., ControllerServer]) -> None:
    from tests.s3server import free_port

    dead = S3Store(bucket="b", endpoint=f"http://127.0.0.1:{free_port()}", access_key="x", secret_key="y",
                   max_retries=0, connect_timeout=1, read_timeout=1)
    server = make_controller(RepairService(dead))
    status, doc, headers = call(f"http://127.0.0.1:{server.server_port}", "GET", "/readyz", token=None)
    assert status == 503 and "store not reachable" in doc["error"] and headers["Retry-After"] == "5"
    assert call(f"http://127.0.0.1:{server.server_port}", "GET", "/healthz")[0] == 200


# ---- authentication and request hygiene --------------------------------------------------------------------

@pytest.mark.parametrize("token", [None, "wrong", ""])
def test_unauthenticated_requests_are_refused(controller: str, run_id: str, token: str | None) -> None:
    status, _doc, headers = post(controller, BREAKDOWN, token=token)
    assert status == 401 and headers["WWW-Authenticate"] == "Bearer"
    assert call(controller, "GET", f"/runs/{run_id}", token=token)[0] == 401


def test_refused_requests_change_nothing(controller: str, run_id: str, s3_store: S3Store) -> None:
    post(controller, BREAKDOWN, token="wrong")
    post(controller, {"time": 2}, key="bad-body")
    assert ExecutionLog(s3_store, run_id).versions() == [1]


def test_missing_idempotency_key(controller: str, run_id: str) -> None:
    status, doc, _ = post(controller, BREAKDOWN, key=None)
    assert status == 400 and doc["where"] == "Idempotency-Key"


def test_body_size_limit(make_controller: Callable[..., ControllerServer], run_id: str) -> None:
    server = make_controller(max_body_bytes=2048)
    base = f"http://127.0.0.1:{server.server_port}"
    events: list[Any] = list(BREAKDOWN["events"])  # type: ignore[call-overload]
    big = {**BREAKDOWN, "events": events * 200}
    status, doc, _ = post(base, big)
    assert status == 413 and "2048" in doc["error"]


def test_content_type_and_length_are_required(controller: str, run_id: str) -> None:
    status, _, _ = post(controller, None, raw=b"time=2", headers={"Content-Type": "text/plain"})
    assert status == 415
    parts = urlsplit(controller)
    conn = http.client.HTTPConnection(str(parts.hostname), parts.port, timeout=10)
    conn.putrequest("POST", "/runs/run-1/disruptions")
    conn.putheader("Authorization", f"Bearer {TOKEN}")
    conn.putheader("Idempotency-Key", "k")
    conn.endheaders()
    assert conn.getresponse().status == 411
    conn.close()


@pytest.mark.parametrize("body, where", [
    (b"{not json", "body"),
    (b"[]", "body"),
    (json.dumps({"time": 2, "events": []}).encode(), "events"),
    (json.dumps({"time": -1, "events": BREAKDOWN["events"]}).encode(), "time"),
    (json.dumps({**BREAKDOWN, "method": "magic"}).encode(), "method"),
    (json.dumps({**BREAKDOWN, "budget": 0}).encode(), "budget"),
    (json.dumps({**BREAKDOWN, "colour": "red"}).encode(), "colour"),
    (json.dumps({"time": 2, "events": [{"kind": "machine_breakdown", "machine": 0}]}).encode(), "events.0"),
    (json.dumps({"time": 2, "events": [{"kind": "machine_breakdown", "machine": 9, "start": 2,
                                        "duration": 3}]}).encode(), "disruption.events[0]"),
    (json.dumps({"time": 500, "events": BREAKDOWN["events"]}).encode(), "disruption.time"),
])
def test_every_field_is_validated(controller: str, run_id: str, body: bytes, where: str) -> None:
    status, doc, _ = post(controller, None, raw=body)
    assert status == 422, doc
    assert str(doc.get("where", "")).startswith(where), doc


def test_unknown_run_route_and_method(controller: str, run_id: str) -> None:
    status, doc, _ = call(controller, "POST", "/runs/nope/disruptions", BREAKDOWN)
    assert status == 404 and "no committed plan" in doc["error"]
    assert call(controller, "GET", "/runs/nope")[0] == 404
    assert call(controller, "GET", "/elsewhere")[0] == 404
    assert call(controller, "POST", "/runs/run-1", BREAKDOWN)[0] == 404
    assert call(controller, "POST", "/runs/..bad../disruptions", BREAKDOWN)[0] in (404, 422)
    status, _, headers = call(controller, "PUT", "/runs/run-1/disruptions", BREAKDOWN)
    assert status == 405 and headers["Allow"] == "GET, POST"


# ---- the repair itself ---------------------------------------------------------------------------------------

def test_repair_commits_a_valid_new_version(controller: str, run_id: str, s3_store: S3Store,
                                            tiny: Instance) -> None:
    body = {**BREAKDOWN, "method": "lcrp", "budget": 1}
    status, doc, _ = post(controller, body, key="first")
    assert status == 201, doc
    assert doc["version"] == 2 and doc["parent_version"] == 1 and doc["method"] == "lcrp"
    assert doc["idempotent_replay"] is False
    log = ExecutionLog(s3_store, run_id)
    assert log.versions() == [1, 2]
    repaired, before = Schedule.model_validate(log.plan(2)), Schedule.model_validate(log.plan(1))
    from alas_argo.jssp.disruption import Disruption

    verdict = validate(tiny, repaired, disruption=Disruption.model_validate(
        {"time": 2, "events": BREAKDOWN["events"]}), baseline=before)
    assert verdict.valid, verdict
    assert doc["makespan"] == repaired.makespan
    assert call(controller, "GET", f"/runs/{run_id}")[1] == {"run_id": run_id, "version": 2,
                                                             "makespan": repaired.makespan, "retracted": []}
    report = log.verify()
    assert report.ok and report.warnings == [], report


def test_same_key_is_answered_once(controller: str, run_id: str, s3_store: S3Store) -> None:
    first = post(controller, BREAKDOWN, key="once")
    again = post(controller, BREAKDOWN, key="once")
    assert first[0] == 201 and again[0] == 200
    assert again[1]["idempotent_replay"] is True
    assert {k: v for k, v in again[1].items() if k != "idempotent_replay"} == \
        {k: v for k, v in first[1].items() if k != "idempotent_replay"}
    assert ExecutionLog(s3_store, run_id).versions() == [1, 2]
    other = post(controller, {**BREAKDOWN, "time": 3}, key="once")
    assert other[0] == 422 and other[1]["where"] == "Idempotency-Key"


def test_later_disruptions_carry_earlier_ones_forward(controller: str, run_id: str, s3_store: S3Store) -> None:
    assert post(controller, BREAKDOWN, key="a")[0] == 201
    change = {"time": 4, "events": [{"kind": "duration_change", "job": 2, "step": 2, "duration": 3}],
              "method": "right-shift"}
    status, doc, _ = post(controller, change, key="b")
    assert status == 201 and doc["version"] == 3 and doc["parent_version"] == 2, doc
    plan = ExecutionLog(s3_store, run_id).plan(3)
    op = next(o for o in plan["operations"] if (o["job"], o["step"]) == (2, 2))
    assert op["end"] - op["start"] == 3
    earlier = post(controller, {**change, "time": 1}, key="c")
    assert earlier[0] == 422 and earlier[1]["where"] == "time"


def test_concurrent_events_for_one_run_lose_no_update(controller: str, run_id: str, s3_store: S3Store) -> None:
    results: list[tuple[int, dict[str, Any], dict[str, str]]] = []
    lock = threading.Lock()

    def send(i: int) -> None:
        # A different operation each: changing one operation's duration twice is refused by the repair
        # package's plan-in-force check (see the controller report).
        job, step = i % 3, 1 + i // 3
        got = post(controller, {"time": 2, "events": [{"kind": "duration_change", "job": job, "step": step,
                                                        "duration": 5 + i}], "method": "right-shift"},
                   key=f"concurrent-{i}")
        with lock:
            results.append(got)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(r[0] for r in results) == [201] * 4, results
    chain = sorted((r[1]["version"], r[1]["parent_version"]) for r in results)
    assert chain == [(2, 1), (3, 2), (4, 3), (5, 4)]  # every repair started from its predecessor


@pytest.mark.parametrize("stale_after_check", [False, True], ids=["as-scheduled", "stale-after-check"])
def test_two_replicas_racing_on_one_base_version(make_controller: Callable[..., ControllerServer],
                                                  run_id: str, s3_store: S3Store, stale_after_check: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Two controllers (separate services, as in two pods) both read v1 and repair it at the same moment:
    the log's compare-and-swap lets one commit, the other re-reads v2 and repairs that. ``stale-after-check``
    holds every writer for a moment after its currency check passes, so the loser goes stale between that
    check and its compare-and-swap (what load does now and then)."""
    barrier = threading.Barrier(2, timeout=30)
    calls: list[int] = []
    if stale_after_check:
        check = execution_log._check_current

        def check_then_pause(head: Any, expect: int | None, run: str) -> None:
            check(head, expect, run)
            if expect == 1:
                time.sleep(0.5)

        monkeypatch.setattr(execution_log, "_check_current", check_then_pause)

    def racing_repair(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) <= 2:
            barrier.wait()  # both have read the same base before either commits
        return repair(*args, **kwargs)

    a = make_controller(RepairService(s3_store, repairer=racing_repair))
    b = make_controller(RepairService(s3_store, repairer=racing_repair))
    results: dict[str, tuple[int, dict[str, Any], dict[str, str]]] = {}
    bodies = {"a": BREAKDOWN, "b": {"time": 2, "events": [{"kind": "duration_change", "job": 1, "step": 2,
                                                          "duration": 6}], "method": "right-shift"}}

    def send(name: str, server: ControllerServer) -> None:
        results[name] = post(f"http://127.0.0.1:{server.server_port}", bodies[name], key=f"replica-{name}")

    threads = [threading.Thread(target=send, args=("a", a)), threading.Thread(target=send, args=("b", b))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results["a"][0] == 201 and results["b"][0] == 201, results
    (first, first_parent), (last, last_parent) = sorted(
        (r[1]["version"], r[1]["parent_version"]) for r in results.values())
    assert (first_parent, last_parent) == (1, first)  # the loser's repair starts from the winner's version
    assert len(calls) == 3  # the loser repaired twice: once on v1 (rejected), once on the winner's version
    log = ExecutionLog(s3_store, run_id)
    assert log.versions() == [1, first, last]
    report = log.verify()
    # Which way the race goes is the scheduler's: a loser found stale before it writes leaves nothing (v2, v3);
    # one that goes stale between that check and its compare-and-swap leaves its plan object unreferenced, and
    # its next commit takes the next number (a version number is never shared): v2, v4 with v3 orphaned, seen
    # under load (the whole suite at load 3, the other core busy), or v3, v4 with v2 orphaned when the writer
    # that took v3 appends its commit first (seen once in 33 runs of the suite). All are correct; verify names
    # each orphan.
    orphans = [f"plan object {plan_key(run_id, v)} is not referenced by any event (an interrupted commit, or one "
               "that lost a compare-and-swap race after writing it)" for v in range(2, last) if v != first]
    assert report.ok and report.warnings == orphans, report
    if stale_after_check:  # both went stale after the check: both wrote a plan object, one of them is orphaned
        assert last == 4 and first in (2, 3) and len(orphans) == 1
    # The last version honours both disruptions: the winner's breakdown is carried forward under the loser's change.
    plan = Schedule.model_validate(log.plan(last))
    assert not any(o.machine == 0 and o.start < 5 and o.end > 2 and o.start >= 2 for o in plan.operations)


def test_urllib_client_round_trip(controller: str, run_id: str) -> None:
    """The operator's client (urllib) gets the answer it parses."""
    from alas_argo.operator import post_disruption

    outcome = post_disruption(f"{controller}/runs/{run_id}/disruptions", BREAKDOWN, "op-key", TOKEN)
    assert outcome.status_code == 201 and outcome.body["version"] == 2
    denied = post_disruption(f"{controller}/runs/{run_id}/disruptions", BREAKDOWN, "op-key-2", "nope")
    assert denied.status_code == 401 and not denied.transient
    with pytest.raises(urllib.error.HTTPError) as unauthenticated:
        urllib.request.urlopen(f"{controller}/runs/{run_id}", timeout=5)
    assert unauthenticated.value.code == 401
    unauthenticated.value.close()


def test_a_stalled_client_is_cut_off(make_controller: Callable[..., ControllerServer], run_id: str) -> None:
    import socket

    server = make_controller(request_timeout=0.5)
    # The client's own 10 s timeout is the bound: a server that waited for the missing 99 bytes would raise
    # socket.timeout in recv (no clock is read here).
    with socket.create_connection(("127.0.0.1", server.server_port), timeout=10) as sock:
        sock.sendall(b"POST /runs/run-1/disruptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode()
                     + b"\r\nIdempotency-Key: slow\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        assert sock.recv(1024) == b""  # the server closed the connection without answering
    assert call(f"http://127.0.0.1:{server.server_port}", "GET", "/healthz")[0] == 200


def test_an_unexpected_failure_is_a_bare_500(make_controller: Callable[..., ControllerServer],
                                            run_id: str, s3_store: S3Store) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    server = make_controller(RepairService(s3_store, repairer=broken))
    status, doc, _ = post(f"http://127.0.0.1:{server.server_port}", BREAKDOWN, key="boom")
    assert status == 500 and doc == {"error": "internal error"}
    assert ExecutionLog(s3_store, run_id).versions() == [1]


def test_requests_are_counted_by_route_not_by_run(controller: str, run_id: str) -> None:
    from alas_argo.metrics import REGISTRY

    def count(route: str, code: str) -> float:
        return REGISTRY.get_sample_value("alas_http_requests_total", {"route": route, "code": code}) or 0.0

    before = count("run", "401")
    call(controller, "GET", f"/runs/{run_id}", token="wrong")
    assert count("run", "401") == before + 1
    with urllib.request.urlopen(f"{controller}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    assert run_id not in text  # run ids never become label values
