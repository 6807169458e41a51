"""The installation smoke check (`alas smoke`, the chart's `helm test`) against a real controller on loopback,
on the S3 store the chart uses and on the filesystem store: every check passes when the release works, and
each way a release can be broken fails the check it should, skips the ones that need it, and says why."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from alas_argo.controller import ControllerServer, RepairService, serve
from alas_argo.log import EventType, ExecutionLog, FsStore, Store
from alas_argo.log.s3_store import S3Store
from alas_argo.smoke import Check, smoke
from tests.s3server import LoopbackS3

TOKEN = "smoke-token-0123456789"


@pytest.fixture(params=["s3", "fs"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    if request.param == "fs":
        return FsStore(tmp_path / "store")
    server: LoopbackS3 = request.getfixturevalue("s3_server")
    return S3Store(**server.store_kwargs(request.getfixturevalue("s3_bucket")), backoff=0.01, max_retries=1)


@pytest.fixture
def controller(store: Store) -> Iterator[Callable[..., str]]:
    servers: list[ControllerServer] = []

    def start(token: str | None = TOKEN) -> str:
        server = serve(RepairService(store), "127.0.0.1", 0, token=token)
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def outcome(checks: list[Check]) -> list[tuple[str, bool | None]]:
    return [(c.name, c.ok) for c in checks]


def test_a_working_release_passes_every_check_and_leaves_the_controllers_repair_in_force(
        store: Store, controller: Callable[..., str]) -> None:
    checks = smoke(store, "smoke-ok", controller=controller(), token=TOKEN)
    assert outcome(checks) == [("store: a run is planned and committed", True), ("controller: ready", True),
                               ("controller: a disruption is repaired and committed", True),
                               ("store: the controller's version is current", True),
                               ("store: the log verifies", True)]
    log = ExecutionLog(store, "smoke-ok")
    current = log.current_plan()
    assert current is not None and current[0] == 2
    commit = next(e for e in log.events() if e.type is EventType.PLAN_COMMITTED and e.payload["version"] == 2)
    assert commit.payload["meta"]["idempotency_key"] == "smoke-ok-smoke"
    assert commit.payload["meta"]["disruption"]["events"][0]["kind"] == "duration_change"
    assert "v2 committed by the controller" in checks[2].detail


def test_a_wrong_token_fails_the_repair_and_skips_what_needs_it(store: Store, controller: Callable[..., str]) -> None:
    checks = smoke(store, "smoke-token", controller=controller(), token="not-the-token")
    assert [ok for _, ok in outcome(checks)] == [True, True, False, None, True]
    assert "answered 401" in checks[2].detail and "bearer token" in checks[2].detail
    current = ExecutionLog(store, "smoke-token").current_plan()
    assert current is not None and current[0] == 1  # v1 only: nothing half-written


def test_a_controller_that_does_not_answer_is_named(store: Store) -> None:
    checks = smoke(store, "smoke-dead", controller="http://127.0.0.1:9", timeout=5)
    assert [ok for _, ok in outcome(checks)] == [True, False, None, None, True]
    assert checks[1].detail.startswith("http://127.0.0.1:9 not reachable")


def test_without_a_controller_only_the_store_is_checked(store: Store) -> None:
    checks = smoke(store, "smoke-store")
    assert outcome(checks) == [("store: a run is planned and committed", True), ("controller", None),
                               ("store: the log verifies", True)]
    assert "no controller URL" in checks[1].detail


def test_a_dead_store_fails_the_first_check_and_nothing_passes() -> None:
    dead = S3Store(bucket="b", endpoint="http://127.0.0.1:9", access_key="x", secret_key="y", backoff=0.01,
                   max_retries=1)
    checks = smoke(dead, "smoke-nostore")
    assert [ok for _, ok in outcome(checks)] == [False, None, None]
    assert "http://127.0.0.1:9" in checks[0].detail and "Could not connect" in checks[0].detail
