"""Fixtures of the controller tests: a store on the loopback S3 server (``s3_server`` and ``s3_bucket`` come
from tests/conftest.py), a run with a committed plan in it, and the controller on a free loopback port."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from alas_argo.controller import ControllerServer, RepairService, serve
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.s3_store import S3Store
from tests.s3server import LoopbackS3

__all__ = ["TOKEN", "controller", "greedy", "make_controller", "run_id", "s3_store"]

TOKEN = "test-token-0123456789"


def request(host: str, port: int, method: str, path: str, body: Any = None, *, token: str | None = TOKEN,
            key: str | None = "k1", headers: dict[str, str] | None = None,
            raw: bytes | None = None) -> tuple[int, bytes, dict[str, str]]:
    """One request to a controller as its clients send it (JSON body, bearer token, idempotency key); the
    status, the raw body and the headers."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    hdrs = {"Content-Type": "application/json"} if data is not None else {}
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    if key is not None:
        hdrs["Idempotency-Key"] = key
    hdrs.update(headers or {})
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, resp.read(), dict(resp.getheaders())
    finally:
        conn.close()


def greedy(instance: Instance) -> Schedule:
    """A valid (semi-active) schedule: operations in round-robin job order, each as early as possible."""
    job_ready = [0] * instance.num_jobs
    machine_ready: dict[int, int] = {}
    ops = []
    for step in range(max(len(j) for j in instance.jobs)):
        for job, operations in enumerate(instance.jobs):
            if step < len(operations):
                machine, duration = operations[step]
                start = max(job_ready[job], machine_ready.get(machine, 0))
                ops.append(Operation(job=job, step=step, machine=machine, start=start, end=start + duration))
                job_ready[job] = machine_ready[machine] = start + duration
    return Schedule.from_operations(instance.name, ops)


@pytest.fixture
def s3_store(s3_server: LoopbackS3, s3_bucket: str) -> S3Store:
    return S3Store(**s3_server.store_kwargs(s3_bucket), backoff=0.01, max_retries=1)


@pytest.fixture
def run_id(s3_store: S3Store, tiny: Instance) -> str:
    """A run whose log records the (non-bundled) instance and commits a greedy plan as v1."""
    log = ExecutionLog(s3_store, "run-1")
    log.append(EventType.RUN_STARTED, payload={"instance": tiny.to_json()})
    assert log.commit_plan(greedy(tiny).to_json(), reason="plan") == 1
    return "run-1"


@pytest.fixture
def make_controller(s3_store: S3Store) -> Iterator[Callable[..., ControllerServer]]:
    servers: list[ControllerServer] = []

    def make(service: RepairService | None = None, **kwargs: Any) -> ControllerServer:
        kwargs.setdefault("token", TOKEN)
        server = serve(service or RepairService(s3_store), "127.0.0.1", 0, **kwargs)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def controller(make_controller: Callable[..., ControllerServer]) -> str:
    """Base URL of a controller on the S3 store with the default token."""
    server = make_controller()
    return f"http://127.0.0.1:{server.server_port}"
