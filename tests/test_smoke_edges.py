"""The smoke check's failures, each named by what failed and where: a controller that is not ready, that
refuses the repair, that answers 201 but commits nothing, or that commits under another key; a run id whose
history does not fit; a log that does not verify. Also what the check asks the controller for (the
disruption it sends, the idempotency key) and what a passing check says.

A small front server stands between the check and a real controller (on the filesystem store) and misbehaves
on purpose: each way a release can be broken that `tests/test_smoke.py` cannot make a real controller do."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import alas_argo.smoke
from alas_argo.controller import RepairService, serve
from alas_argo.jssp.catalog import get_instance
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.runtime.result import RunStatus
from alas_argo.smoke import EXTRA_DURATION, smoke

TOKEN = "edge-smoke-token-0123"
NAMES = ["store: a run is planned and committed", "controller: ready",
         "controller: a disruption is repaired and committed", "store: the controller's version is current",
         "store: the log verifies"]


@dataclass
class Front:
    """How the front server answers: ``/readyz`` with ``ready``; a POST forwarded to the real controller
    (under ``key`` instead of the check's when set) or, with ``answer`` set, that status and raw body."""

    upstream: str
    url: str = ""
    ready: tuple[int, bytes] = (200, b"ok")
    hang: str | None = None  # "GET" or "POST": that request is held, unanswered, until the test ends
    stall: bool = False  # /readyz answers 503 announcing a terabyte, sends 300 bytes and holds the rest
    released: threading.Event = field(default_factory=threading.Event)
    answer: tuple[int, bytes] | None = None
    key: str | None = None
    posts: list[dict[str, Any]] = field(default_factory=list)


def _handler(front: Front) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if front.hang == "GET":
                front.released.wait(60)
            if front.stall:
                self.send_response(503)
                self.send_header("Content-Length", str(10**12))
                self.end_headers()
                self.wfile.write(b"z" * 300)
                self.wfile.flush()
                front.released.wait(60)
                return
            self._send(*front.ready) if self.path == "/readyz" else self._send(404, b"{}")

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            front.posts.append({"path": self.path, "body": json.loads(raw),
                                "key": self.headers.get("Idempotency-Key"),
                                "auth": self.headers.get("Authorization")})
            if front.hang == "POST":
                front.released.wait(60)
            if front.answer is not None:
                self._send(*front.answer)
                return
            headers = {"Content-Type": "application/json", "Authorization": self.headers["Authorization"],
                       "Idempotency-Key": front.key or self.headers["Idempotency-Key"]}
            request = urllib.request.Request(front.upstream + self.path, data=raw, headers=headers, method="POST")
            with urllib.request.urlopen(request, timeout=30) as resp:
                self._send(resp.status, resp.read())

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def store(tmp_path: Path) -> FsStore:
    return FsStore(tmp_path / "store")


@pytest.fixture
def front(store: FsStore) -> Iterator[Front]:
    controller = serve(RepairService(store), "127.0.0.1", 0, token=TOKEN)
    state = Front(upstream=f"http://127.0.0.1:{controller.server_port}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    # A short poll, so shutdown() below returns in 0.05 s instead of up to serve_forever's default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    state.released.set()
    server.shutdown()
    server.server_close()
    controller.shutdown()
    controller.server_close()


def test_the_check_sends_a_duration_change_of_the_first_operation_under_its_own_key(
        store: FsStore, front: Front) -> None:
    """A trailing slash on the controller's URL is dropped; the disruption is ft06's first operation made
    EXTRA_DURATION longer, revealed at 0, repaired by LCRP within 5 s, under `<run>-smoke` with the token."""
    checks = smoke(store, "edge-ok", controller=front.url + "/", token=TOKEN)
    assert [(c.name, c.ok) for c in checks] == [(name, True) for name in NAMES]
    (post,) = front.posts
    first = get_instance("ft06").jobs[0][0][1]
    assert post == {"path": "/runs/edge-ok/disruptions", "key": "edge-ok-smoke", "auth": f"Bearer {TOKEN}",
                    "body": {"time": 0, "method": "lcrp", "budget": 5,
                             "events": [{"kind": "duration_change", "job": 0, "step": 0,
                                         "duration": first + EXTRA_DURATION}]}}
    log = ExecutionLog(store, "edge-ok")
    current = log.current_plan()
    assert current is not None and current[0] == 2
    assert checks[0].detail.startswith("run edge-ok: ft06 planned, v1 committed (makespan ")
    assert checks[1].detail == f"{front.url}/readyz answered 200"
    assert checks[2].detail.startswith("v2 committed by the controller (makespan ")
    assert checks[3].detail == "v2 is current in the store, under this check's idempotency key"
    assert checks[4].detail == log.verify().summary() and "intact" in checks[4].detail
    assert all(c.seconds >= 0 for c in checks)


def test_a_controller_that_is_not_ready_is_named_with_its_answer(store: FsStore, front: Front) -> None:
    front.ready = (503, b"store not reachable")
    checks = smoke(store, "edge-unready", controller=front.url, token=TOKEN)
    assert [c.ok for c in checks] == [True, False, None, None, True]
    assert checks[1].detail == f"{front.url}/readyz answered 503: store not reachable"
    assert [c.detail for c in checks[2:4]] == ["skipped: an earlier check failed"] * 2
    assert [c.seconds for c in checks[2:4]] == [0.0, 0.0]
    assert front.posts == []  # nothing asked of a controller that is not ready


@pytest.mark.parametrize(("answer", "said"), [
    ((500, b'{"error": "repair failed: boom"}'), "answered 500: repair failed: boom"),
    ((409, b'{"message": "run is leased"}'), "answered 409: run is leased"),
    ((422, b'{"detail": 1}'), "answered 422: {'detail': 1}"),  # no message: the body, as it came
    ((200, b'{"version": 2}'), "answered 200: {'version': 2}"),  # only a new repair (201) passes
])
def test_a_refused_repair_is_named_with_the_controllers_answer(answer: tuple[int, bytes], said: str,
                                                                store: FsStore, front: Front) -> None:
    front.answer = answer
    checks = smoke(store, "edge-refused", controller=front.url, token=TOKEN)
    assert [c.ok for c in checks] == [True, True, False, None, True]
    assert checks[2].detail == f"POST /runs/edge-refused/disruptions {said}"
    assert checks[3].detail == "skipped: an earlier check failed"


def test_a_201_that_committed_nothing_fails_the_store_check(store: FsStore, front: Front) -> None:
    """The controller's word is not taken: the store must hold its version."""
    front.answer = (201, b'{"version": 7, "makespan": 99}')
    checks = smoke(store, "edge-nothing", controller=front.url, token=TOKEN)
    assert [c.ok for c in checks] == [True, True, True, False, True]
    assert checks[2].detail == "v7 committed by the controller (makespan 99)"
    assert checks[3].detail == "current version 1, not the repair"


def test_a_repair_committed_under_another_key_is_named(store: FsStore, front: Front) -> None:
    front.key = "someone-else"
    checks = smoke(store, "edge-key", controller=front.url, token=TOKEN)
    assert [c.ok for c in checks] == [True, True, True, False, True]
    assert checks[3].detail == "v2 was committed under ['someone-else'], not 'edge-key-smoke'"
    commits = [e for e in ExecutionLog(store, "edge-key").events() if e.type is EventType.PLAN_COMMITTED]
    assert [e.payload["version"] for e in commits] == [1, 2]


def test_a_run_id_whose_history_does_not_fit_fails_the_first_check_with_the_reason(store: FsStore) -> None:
    """The pipeline's own refusal (an AlasError) is the check's detail; nothing after it passes."""
    assert [c.ok for c in smoke(store, "edge-again")] == [True, None, True]
    checks = smoke(store, "edge-again", instance="la01")
    assert [c.ok for c in checks] == [False, None, True]  # the run's log is there, and it verifies
    assert "edge-again" in checks[0].detail and "la01" in checks[0].detail
    assert checks[2].detail.startswith("run edge-again: intact")


def test_a_log_that_does_not_verify_fails_the_first_check_naming_the_event(store: FsStore, tmp_path: Path) -> None:
    """A finished run is not planned again: its result is read back, and the reader refuses the edited event
    (until the log readers checked each event, the run passed the first check and the last found the edit)."""
    smoke(store, "edge-edited")
    path = tmp_path / "store" / "runs" / "edge-edited" / "events" / "00000005.json"
    doc = json.loads(path.read_bytes())
    doc["payload"]["edited"] = True
    path.write_text(json.dumps(doc))
    checks = smoke(store, "edge-edited")
    assert [c.ok for c in checks] == [False, None, False]
    assert checks[0].detail == (store.where("runs/edge-edited/events/00000005.json") + ": event 5's content does "
                                "not match its hash (edited); run `alas log verify`")
    # and the last check, which runs whenever the run has a log, gives verify's whole report
    assert checks[2].detail.startswith("run edge-edited: BROKEN at event 5")


def test_a_store_that_loses_the_run_fails_the_first_check(store: FsStore, tmp_path: Path) -> None:
    """A hole in the chain is an AlasError of the store's: the first check names the missing event's file."""
    smoke(store, "edge-hole")
    (tmp_path / "store" / "runs" / "edge-hole" / "events" / "00000010.json").unlink()
    checks = smoke(store, "edge-hole")
    assert [c.ok for c in checks] == [False, None, False]
    assert "edge-hole/events/00000010.json: event 10 is missing" in checks[0].detail
    assert checks[2].detail.startswith("run edge-hole: BROKEN at event 10")  # verify's report of the same hole


def test_the_store_alone_is_planned_by_the_heuristics_and_says_the_controller_was_not_checked(
        store: FsStore) -> None:
    """No solver time: the run's recorded inputs name the heuristic planner and optimizer. Each check's
    seconds are its own duration (within the call's), rounded to milliseconds."""
    began = time.perf_counter()
    checks = smoke(store, "edge-store")
    elapsed = time.perf_counter() - began
    assert checks[1].detail == "not checked: no controller URL given" and checks[1].seconds == 0.0
    inputs = ExecutionLog(store, "edge-store").events()[0].payload["inputs"]
    assert (inputs["planner"], inputs["optimizer"]) == ("heuristic", "heuristic")
    assert all(0 <= c.seconds <= elapsed + 0.001 and c.seconds == round(c.seconds, 3) for c in checks)


def test_a_controller_that_refuses_connections_is_named_with_the_systems_reason(store: FsStore) -> None:
    checks = smoke(store, "edge-refusing", controller="http://127.0.0.1:9", timeout=5)
    assert checks[1].detail == "http://127.0.0.1:9 not reachable: [Errno 111] Connection refused"


def test_a_not_ready_answer_is_cut_to_200_bytes_and_undecodable_bytes_do_not_break_it(store: FsStore,
                                                                                       front: Front) -> None:
    front.ready = (500, b"\xff" + b"y" * 300)
    checks = smoke(store, "edge-garbled", controller=front.url, token=TOKEN)
    assert checks[1].detail == f"{front.url}/readyz answered 500: \ufffd" + "y" * 199


def test_a_not_ready_answer_that_never_ends_is_read_no_further_than_what_is_shown(store: FsStore,
                                                                                  front: Front) -> None:
    # Read whole, the answer would hold the check until the socket timed out and then end it with a
    # traceback (the timeout raised while handling the 503), or grow it without bound had the body kept coming.
    front.stall = True
    checks = smoke(store, "edge-stall", controller=front.url, token=TOKEN, timeout=5)
    assert [c.ok for c in checks] == [True, False, None, None, True]
    assert checks[1].detail == f"{front.url}/readyz answered 503: " + "z" * 200


def test_a_controller_that_hangs_on_readyz_fails_within_the_timeout(store: FsStore, front: Front) -> None:
    front.hang = "GET"
    checks = smoke(store, "edge-hang-ready", controller=front.url, token=TOKEN, timeout=0.5)
    assert [c.ok for c in checks] == [True, False, None, None, True]
    assert checks[1].detail == f"{front.url} not reachable: timed out"


def test_a_controller_that_hangs_on_the_repair_fails_within_the_timeout(store: FsStore, front: Front) -> None:
    front.hang = "POST"
    checks = smoke(store, "edge-hang-post", controller=front.url, token=TOKEN, timeout=0.5)
    assert [c.ok for c in checks] == [True, True, False, None, True]
    assert checks[2].detail == ("POST /runs/edge-hang-post/disruptions answered nothing: "
                                "controller unreachable: timed out")


@pytest.mark.parametrize(("errors", "said"), [
    ({"optimizer": "boom", "commit": "lost"}, "optimizer: boom; commit: lost"),
    ({}, "no error recorded"),
])
def test_a_run_that_ends_without_a_valid_plan_fails_the_first_check_with_its_errors(
        errors: dict[str, str], said: str, store: FsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even with v1 committed and a final plan: a run that did not succeed is a failed check."""
    smoke(store, "edge-failed")
    failed = SimpleNamespace(succeeded=False, status=RunStatus.FAILED, errors=errors,
                             final=SimpleNamespace(makespan=60))
    monkeypatch.setattr(alas_argo.smoke, "run_pipeline", lambda config, log: failed)
    checks = smoke(store, "edge-failed")
    assert [c.ok for c in checks] == [False, None, True]  # the log of the earlier, good run still verifies
    assert checks[0].detail == f"the run ended failed without a valid committed plan: {said}"


def test_a_run_that_succeeded_but_left_no_plan_in_the_store_fails_the_first_check(
        store: FsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline's word is not taken either: a success with no committed plan in the store (a store that
    lost it) fails the check, instead of the check crashing on the missing version."""
    done = SimpleNamespace(succeeded=True, status=RunStatus.SUCCEEDED, errors={},
                           final=SimpleNamespace(makespan=60))
    monkeypatch.setattr(alas_argo.smoke, "run_pipeline", lambda config, log: done)
    checks = smoke(store, "edge-lost")
    assert [c.ok for c in checks] == [False, None, None]
    assert checks[0].detail == "the run ended succeeded without a valid committed plan: no error recorded"
