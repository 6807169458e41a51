"""Crash safety: `alas run` killed with SIGKILL mid-run and restarted with the same run id resumes from the
log — committed versions are re-used through their idempotency records, nothing is committed twice —
and the final log verifies with no gap and no duplicate, on both backends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.layout import idempotency_key
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store
from tests.s3server import LoopbackS3

RUN = ["run", "ta01", "--planner", "heuristic", "--disrupt", "breakdown", "--disruptions", "3",
       "--time-limit", "1", "--repair-budget", "1", "--workers", "1", "--run-id", "crash", "--quiet"]


def _alas(args: list[str], env: dict[str, str], *, capture: bool) -> subprocess.Popen[bytes]:
    """`alas ARGS` in a child interpreter (the working tree's code, whatever the console script points at)."""
    code = "import sys; from alas_argo.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE if capture else subprocess.DEVNULL)


def _backend(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Store, list[str], dict[str, str]]:
    env = dict(os.environ)
    if kind == "fs":
        root = tmp_path / "store"
        return FsStore(root), ["--store", "fs", "--root", str(root)], env
    server: LoopbackS3 = request.getfixturevalue("s3_server")
    kwargs = server.store_kwargs(server.new_bucket())
    env.update(ALAS_STORE__S3_ENDPOINT=kwargs["endpoint"], ALAS_STORE__S3_BUCKET=kwargs["bucket"],
               AWS_ACCESS_KEY_ID=kwargs["access_key"], AWS_SECRET_ACCESS_KEY=kwargs["secret_key"])
    return S3Store(**kwargs), ["--store", "s3"], env


def _committed_nodes(log: ExecutionLog) -> list[str]:
    return [e.node_id or "" for e in log.events() if e.type is EventType.PLAN_COMMITTED]


@pytest.mark.timeout(120)  # 35 s measured in the whole suite on a loaded 2-core machine
@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["fs", "s3"])
def test_sigkill_mid_run_then_resume(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store, flags, env = _backend(kind, tmp_path, request)
    log = ExecutionLog(store, "crash")
    first = _alas([*RUN, *flags], env, capture=False)
    # Kill once two versions are committed and their idempotency records written, before the run ends (every
    # node records its output; the second commit's record is the one to wait for).
    deadline = time.monotonic() + 120
    second_commit = idempotency_key("crash", "crash:commit_2")
    while True:
        if store.list(prefix=second_commit) or first.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert first.poll() is None, "the run ended before it could be killed"
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert first.returncode == -signal.SIGKILL
    before: list[Any] = log.events()
    assert not any(e.type is EventType.RUN_SUCCEEDED for e in before)
    done_before = _committed_nodes(log)
    assert len(done_before) >= 2

    second = _alas([*RUN, *flags], env, capture=True)
    _, err = second.communicate(timeout=300)
    assert second.returncode == 0, err.decode()

    fresh = ExecutionLog(store, "crash")
    events = fresh.events()
    assert events[: len(before)] == before  # the history written before the crash is untouched
    report = fresh.verify()
    assert report.ok, report.summary()
    assert [e.seq for e in events] == list(range(len(events)))
    # every commit node committed exactly once across both processes; the resumed run re-used the
    # versions committed before the kill instead of committing them again
    nodes = Counter(_committed_nodes(fresh))
    assert set(nodes) == {"commit_v1", "commit_2", "commit_3", "commit_4"}
    assert all(n == 1 for n in nodes.values()), nodes
    hits = {e.node_id for e in events[len(before):] if e.type is EventType.NODE_IDEMPOTENT_HIT}
    assert set(done_before) <= hits
    assert sum(e.type is EventType.RUN_SUCCEEDED for e in events) == 1
    assert fresh.versions() == [1, 2, 3, 4]
