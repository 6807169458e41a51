"""The controller under 10,000 hostile requests over real HTTP: every answer is a JSON error or a repair, never a
500 and never a hang (hostile bodies, Content-Length and Content-Type values, keys and paths)."""

from __future__ import annotations

import http.client
import json
import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from alas_argo.controller import ControllerServer, RepairService, serve
from alas_argo.jssp.instance import Instance
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.fs_store import FsStore
from tests.controller.conftest import TOKEN, greedy
from tests.fuzz.hostile import EXAMPLES, fuzz, json_text, noise

pytestmark = pytest.mark.timeout(300)

REQUEST = {"time": 2, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3}],
           "method": "right-shift", "budget": 1}


@pytest.fixture
def server(tmp_path: Path, tiny: Instance) -> Iterator[ControllerServer]:
    store = FsStore(tmp_path / "store")
    log = ExecutionLog(store, "run-1")
    log.append(EventType.RUN_STARTED, payload={"instance": tiny.to_json()})
    log.commit_plan(greedy(tiny).to_json(), reason="plan")
    srv = serve(RepairService(store), "127.0.0.1", 0, token=TOKEN)
    yield srv
    srv.shutdown()
    srv.server_close()


def _request(rng: random.Random) -> tuple[str, str, dict[str, str], bytes]:
    body = json_text(REQUEST, rng).encode("utf-8", "surrogatepass") if rng.random() < 0.9 else rng.randbytes(30)
    # Most requests go to runs that do not exist (a 404 after the body is checked) so that the one real run's
    # log stays short; one in fifty reaches a real repair and commit.
    ghosts = ["ghost", "x" * 300, "..", "%00", "a/b", "r" + quote(noise(rng)[:5], safe="")]
    run = "run-1" if rng.random() < 0.02 else rng.choice(ghosts)
    path = rng.choice([f"/runs/{run}/disruptions", f"/runs/{run}", "/", "/metrics", "/healthz", "/runs//disruptions",
                       "/" + quote(noise(rng)[:10])]) if rng.random() < 0.2 else f"/runs/{run}/disruptions"
    headers = {"Content-Type": rng.choice(["application/json"] * 8 + ["text/plain", "", "application/json; x"]),
               "Authorization": f"Bearer {TOKEN}" if rng.random() < 0.95 else rng.choice(["", "Bearer", "Basic x"]),
               "Idempotency-Key": f"k-{rng.random()}" if rng.random() < 0.9 else rng.choice(["", "é", "k" * 300, " "])}
    length = len(body)
    if rng.random() < 0.1:  # never longer than the body: a client that does not send what it announced is point 5's
        headers["Content-Length"] = rng.choice(["", "-1", "abc", "1e3", "9" * 30, str(rng.randrange(length + 1))])
    else:
        headers["Content-Length"] = str(length)
    method = rng.choice(["POST"] * 9 + ["GET", "PUT", "DELETE"])
    return method, path, headers, body


def _send(port: int, request: tuple[str, str, dict[str, str], bytes]) -> int:
    method, path, headers, body = request
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value.encode("latin-1", "replace"))
        conn.endheaders(body)
        resp = conn.getresponse()
        text = resp.read()
        if resp.status >= 400:  # every error is a JSON body naming the problem
            assert "error" in json.loads(text), text
        return resp.status
    finally:
        conn.close()


def test_hostile_requests_never_get_a_500(server: ControllerServer) -> None:
    statuses: Counter[int] = Counter()

    def send(request: tuple[str, str, dict[str, str], bytes]) -> None:
        status = _send(server.server_port, request)
        statuses[status] += 1
        assert status < 500, request

    assert fuzz(_request, send, allowed=()) >= EXAMPLES
    assert statuses[422] > 100 and statuses[404] > 100  # the bodies reached the checks, not only the front door
