"""The store's record bound (``backend.MAX_RECORD_BYTES``): a record past it is never written, and an object
past it (an upload into the bucket that is not the log's, a device file under the root) is refused by name
instead of read into memory whole. The limit is lowered to a few bytes here so the tests stay small; the
stores read it where they check, so the same code paths run as at 256 MiB."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import main
from alas_argo.errors import StoreError
from alas_argo.log import backend
from alas_argo.log.backend import check_record_size, read_record
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store
from tests.s3server import LoopbackS3

KEY = "runs/r/plans/big.json"
LIMIT = 16


@pytest.fixture
def small_limit(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(backend, "MAX_RECORD_BYTES", LIMIT)
    return LIMIT


def test_the_default_limit_is_twice_the_largest_input_a_command_reads() -> None:
    from alas_argo.file_names import MAX_FILE_BYTES

    assert backend.MAX_RECORD_BYTES == 2 * MAX_FILE_BYTES == 256 * 2**20


def test_the_check_and_the_bounded_read_name_the_record(small_limit: int) -> None:
    check_record_size(small_limit, "here")  # at the limit: a record
    with pytest.raises(StoreError) as info:
        check_record_size(small_limit + 1, "here")
    assert info.value.message == "record larger than the store's limit of 0 MiB (17 bytes): not a record of the log"
    assert info.value.where == "here" and info.value.exit_code == 2
    assert read_record(io.BytesIO(b"x" * small_limit), "here") == b"x" * small_limit
    stream = io.BytesIO(b"x" * 100)
    with pytest.raises(StoreError) as info:
        read_record(stream, "there")
    assert "(at least 17 bytes)" in info.value.message and info.value.where == "there"
    assert stream.tell() == small_limit + 1  # read one byte past the limit, no more


@pytest.mark.parametrize("conditional", [True, False])
def test_a_record_past_the_limit_is_never_written(store: Store, small_limit: int, conditional: bool) -> None:
    with pytest.raises(StoreError) as info:
        if conditional:
            store.put_if_absent(key=KEY, data=b"x" * (small_limit + 1))
        else:
            store.put(key=KEY, data=b"x" * (small_limit + 1))
    assert "(17 bytes)" in info.value.message and KEY in str(info.value.where)
    assert store.kind != "s3" or info.value.where == store.where(KEY)  # the object's address, then the endpoint
    assert not store.exists(key=KEY) and store.list(prefix="runs/") == []
    if isinstance(store, FsStore):  # nor a temp file left behind
        assert not store.root.exists() or not any(p.is_file() for p in store.root.rglob("*"))
    # the largest record that fits is written and read back whole
    assert store.put_if_absent(key=KEY, data=b"y" * small_limit)
    assert store.get(key=KEY) == b"y" * small_limit


def test_an_s3_object_past_the_limit_is_refused_before_it_is_read(
        s3_server: LoopbackS3, s3_bucket: str, s3_store: S3Store, small_limit: int) -> None:
    # Put there by someone else (the bucket is shared), so the store's write check never saw it.
    s3_server.client().put_object(Bucket=s3_bucket, Key=KEY, Body=b"z" * 1000)
    with pytest.raises(StoreError) as info:
        s3_store.get(key=KEY)
    assert info.value.message == ("record larger than the store's limit of 0 MiB (1000 bytes): "
                                  "not a record of the log")
    assert info.value.where == s3_store.where(KEY)


def test_a_file_under_the_root_that_never_ends_is_refused(tmp_path: Path, small_limit: int) -> None:
    store = FsStore(tmp_path)
    path = tmp_path / KEY
    path.parent.mkdir(parents=True)
    os.symlink("/dev/zero", path)
    with pytest.raises(StoreError) as info:
        store.get(key=KEY)
    assert "(at least 17 bytes)" in info.value.message and info.value.where == str(path)


@pytest.mark.parametrize("damage", ["endless", "directory"])
def test_log_verify_reports_a_record_it_cannot_read_and_judges_the_rest(
        tmp_path: Path, damage: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # It stopped at the record with the store's error (exit 2) instead of reporting it among the run's problems.
    log = ExecutionLog(FsStore(tmp_path), "r1")
    for _ in range(3):
        log.append("run.started", payload={"instance": "ft06"})
    monkeypatch.setattr(backend, "MAX_RECORD_BYTES", max(p.stat().st_size for p in tmp_path.rglob("*.json")))
    event = tmp_path / "runs" / "r1" / "events" / "00000001.json"
    event.unlink()
    if damage == "endless":
        os.symlink("/dev/zero", event)
    else:
        event.mkdir()
    report = log.verify()
    # A directory is no record (the listing walks into it): the event is missing. The endless file is one, unread.
    assert [(p.code, p.seq) for p in report.problems] == (
        [("unreadable", 1)] if damage == "endless" else [("gap", 1)])
    assert main(["log", "verify", "r1", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("run r1: BROKEN at event 1: ")
    said = "record larger than the store's limit" if damage == "endless" else "events 1..1 are missing"
    assert said in out


def test_log_verify_reports_a_plan_object_it_cannot_read(tmp_path: Path) -> None:
    log = ExecutionLog(FsStore(tmp_path), "r1")
    log.commit_plan({"instance": "t", "makespan": 3,
                     "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]})
    (plan,) = (tmp_path / "runs" / "r1" / "plans").iterdir()
    plan.unlink()
    plan.mkdir()  # the key names a directory: the store cannot hand it out
    report = log.verify()
    assert [(p.code, p.seq) for p in report.problems] == [("plan_unreadable", 0)]
    assert report.problems[0].message == "cannot read record: Is a directory"


def test_each_backend_sizes_its_read_by_the_record(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards memory: a read sized by the 256 MiB bound reserved that much for every record (a MemoryError from
    `alas run` under `ulimit -v 800000`); the fs store passes the file's size, S3 the announced length."""
    seen: list[int | None] = []
    real = backend.read_at_most

    def spy(stream: Any, limit: int, *, expected: int | None = None) -> bytes:
        seen.append(expected)
        return real(stream, limit, expected=expected)

    monkeypatch.setattr(backend, "read_at_most", spy)
    store.put(key=KEY, data=b"z" * 1234)
    assert store.get(key=KEY) == b"z" * 1234
    assert seen == [1234]
