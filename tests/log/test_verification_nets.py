"""What only verification can catch: a committed plan object lost from the store, and a chain forged from
its first link. Driven through the public API (the log appends and commits, ``verify_log`` and ``alas log
verify`` judge), with the damage done behind the log's back, on the filesystem and on S3 alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.log.event import GENESIS_HASH, seal_event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.fs_store import FsStore
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store
from alas_argo.log.verification import verify_log
from tests.s3server import LoopbackS3

Delete = Callable[[str], None]


@pytest.fixture(params=["fs", "s3"])
def damaged(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Store, Delete]:
    """A store of each backend, and a way to lose one of its records that the store API does not offer."""
    if request.param == "fs":
        fs = FsStore(tmp_path / "store")
        return fs, lambda key: fs.root.joinpath(*key.split("/")).unlink()
    server: LoopbackS3 = request.getfixturevalue("s3_server")
    s3 = S3Store(**server.store_kwargs(request.getfixturevalue("s3_bucket")), backoff=0.01, max_retries=2)
    client = server.client()
    return s3, lambda key: client.delete_object(Bucket=s3.bucket, Key=s3.prefix + key)


def _plan(makespan: int) -> dict[str, object]:
    return {"instance": "t", "makespan": makespan, "operations": [
        {"job": 0, "step": 0, "machine": 0, "start": 0, "end": makespan}]}


def _run(store: Store, run: str = "v") -> ExecutionLog:
    log = ExecutionLog(store, run)
    log.append(EventType.RUN_STARTED)
    log.commit_plan(_plan(3))
    log.append(EventType.NODE_SUCCEEDED, payload={"i": 0})
    log.commit_plan(_plan(5), parent_version=1)
    log.append(EventType.RUN_SUCCEEDED)
    return log


@pytest.mark.parametrize("version", [1, 2])
def test_a_deleted_plan_object_is_named(damaged: tuple[Store, Delete], version: int) -> None:
    store, delete = damaged
    log = _run(store)
    assert verify_log(store, "v").ok
    committed = log.plan_event(version)
    key = str(committed.payload["key"])
    delete(key)
    assert not store.exists(key=key)
    report = verify_log(store, "v")
    assert not report.ok
    missing = [p for p in report.problems if p.code == "plan_missing"]
    assert [(p.seq, p.key) for p in missing] == [(committed.seq, key)]
    assert f"plan v{version}" in missing[0].message and "missing" in missing[0].message
    assert report.versions == 2  # the commit event still counts: the object, not the record, is gone


def test_the_cli_names_a_deleted_plan_object(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FsStore(tmp_path / "s")
    log = _run(store)
    key = str(log.plan_event(2).payload["key"])
    store.root.joinpath(*key.split("/")).unlink()
    args = ["log", "verify", "v", "--store", "fs", "--root", str(tmp_path / "s")]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "BROKEN" in out and key in out and "missing" in out


def _forge(store: Store, log: ExecutionLog, genesis: str) -> None:
    """Re-seal every event of the run on a chain that starts from ``genesis``: each record hashes right and
    links to the one before, so only the first link can tell."""
    prev = genesis
    for event in log.events():
        fields = event.model_dump(mode="json", exclude={"hash"})
        forged = seal_event(**{**fields, "prev_hash": prev})
        store.put(key=event_key(log.run_id, event.seq), data=forged.to_bytes())
        prev = forged.hash


def test_a_chain_forged_from_another_genesis_is_broken_at_event_0(damaged: tuple[Store, Delete]) -> None:
    store, _ = damaged
    log = _run(store)
    _forge(store, log, genesis="sha256:" + "f" * 64)
    report = verify_log(store, "v")
    assert not report.ok
    chain = [(p.code, p.seq) for p in report.problems if p.code in ("broken_chain", "bad_hash")]
    assert chain == [("broken_chain", 0)]
    assert report.first_bad is not None and report.first_bad.seq == 0


def test_a_chain_resealed_from_the_genesis_value_verifies(damaged: tuple[Store, Delete]) -> None:
    """The control for the test above: the forging itself is faithful, so the genesis value is what differs."""
    store, _ = damaged
    log = _run(store)
    _forge(store, log, genesis=GENESIS_HASH)
    assert verify_log(store, "v").ok
