"""The filesystem backend's own promises, beyond the contract both backends keep (test_store.py): what it
refuses and how it says so, the files it leaves, that the sweep of leftover temp files never harms a live
writer, and that a record is synced before it is published."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alas_argo.errors import StoreError, StoreUnavailable
from alas_argo.log import fs_store
from alas_argo.log.fs_store import FsStore
from alas_argo.log.store import RecordNotFound

KEY = "runs/r/events/00000000.json"


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".tmp-")]


@pytest.fixture
def live_writer() -> Iterator[subprocess.Popen[bytes]]:
    """A process that is alive for the whole test: the writer of an in-flight temp file."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield sleeper
    finally:
        sleeper.kill()
        sleeper.wait()


def test_the_default_root_and_the_location_errors_name(tmp_path: Path) -> None:
    assert FsStore().root == Path(".alas") and FsStore().location == "fs:.alas"
    store = FsStore(tmp_path)
    store.put(key="runs/r/head.json", data=b"{}")
    for missing in (KEY, "runs/r/head.json/00000000.json"):  # the second climbs through a file
        with pytest.raises(RecordNotFound) as info:
            store.get(key=missing)
        assert info.value.where == f"fs:{tmp_path}/{missing}"
        assert info.value.message == "no such record"


def test_records_are_plain_files_readable_by_other_readers(tmp_path: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    store = FsStore(tmp_path)
    store.put(key="runs/r/head.json", data=b"{}")
    assert store.put_if_absent(key=KEY, data=b"{}")
    for key in ("runs/r/head.json", KEY):
        mode = (tmp_path / key).stat().st_mode
        assert stat.S_ISREG(mode) and stat.S_IMODE(mode) == 0o644 & ~mask  # never executable


def test_reading_a_directory_is_a_store_error_that_names_the_path(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    store.put(key=KEY, data=b"{}")
    with pytest.raises(StoreError) as info:
        store.get(key="runs/r/events")
    assert not isinstance(info.value, RecordNotFound)  # it exists: the caller must not take it for absent
    assert info.value.where == str(tmp_path / "runs" / "r" / "events")
    assert info.value.message == f"cannot read record: {os.strerror(errno.EISDIR)}"


@pytest.mark.parametrize("create_only", [False, True])
def test_a_write_below_a_record_is_refused_with_its_path(tmp_path: Path, create_only: bool) -> None:
    store = FsStore(tmp_path)
    store.put(key="runs/r/head.json", data=b"{}")
    key = "runs/r/head.json/x.json"
    with pytest.raises(StoreError) as info:
        if create_only:
            store.put_if_absent(key=key, data=b"x")
        else:
            store.put(key=key, data=b"x")
    assert info.value.where == str(tmp_path / "runs" / "r" / "head.json" / "x.json")
    assert info.value.message.startswith("cannot write record: ")
    assert store.get(key="runs/r/head.json") == b"{}" and _temps(tmp_path) == []


def test_an_overwrite_that_cannot_be_published_leaves_no_temp_file(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    store.put(key=KEY, data=b"{}")
    with pytest.raises(StoreError) as info:
        store.put(key="runs/r/events", data=b"x")  # a directory holds the name
    assert info.value.where == str(tmp_path / "runs" / "r" / "events")
    assert info.value.message == f"cannot publish record: {os.strerror(errno.EISDIR)}"
    assert _temps(tmp_path) == [] and store.get(key=KEY) == b"{}"


def test_a_link_the_filesystem_refuses_is_a_store_error_not_a_lost_race(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # A filesystem without hard links answers EPERM: that is a failure to write, not "another writer won".
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(os, "link", no_links)
    store = FsStore(tmp_path)
    with pytest.raises(StoreError) as info:
        store.put_if_absent(key=KEY, data=b"{}")
    assert info.value.where == str(tmp_path / KEY)
    assert info.value.message == f"cannot publish record: {os.strerror(errno.EPERM)}"
    assert not store.exists(key=KEY) and _temps(tmp_path) == []


def test_children_are_the_visible_directories_only(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    for key in ("runs/a/head.json", "runs/b/head.json", "runs/notes.json"):
        store.put(key=key, data=b"{}")
    (tmp_path / "runs" / ".trash").mkdir()  # a hidden directory is no run
    assert store.children(prefix="runs/") == ["a", "b"]
    assert store.children(prefix="") == ["runs"]


def _swept_beside(root: Path, pid: int) -> Path:
    """A temp file of writer ``pid`` in a run's events, then a write there (which sweeps): the temp file's path."""
    events = root / "runs" / "r" / "events"
    events.mkdir(parents=True)
    in_flight = events / f".tmp-00000001.json.{pid}.feed"
    in_flight.write_bytes(b"in flight")
    FsStore(root).put_if_absent(key=KEY, data=b"{}")
    return in_flight


def test_the_sweep_only_probes_writers_and_never_signals_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, live_writer: subprocess.Popen[bytes]) -> None:
    signals: list[int] = []
    real_kill = os.kill

    def probe(pid: int, sig: int) -> None:
        signals.append(sig)
        real_kill(pid, sig)

    monkeypatch.setattr(os, "kill", probe)
    in_flight = _swept_beside(tmp_path, live_writer.pid)
    assert signals == [0]  # whether it exists, nothing more
    assert in_flight.exists() and live_writer.poll() is None


def test_a_writer_of_another_user_is_taken_for_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = 4_000_000  # a pid this user may not signal: the kernel answers EPERM, not ESRCH
    real_kill = os.kill

    def probe(pid: int, sig: int) -> None:
        if pid == other:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
        real_kill(pid, sig)

    monkeypatch.setattr(os, "kill", probe)
    assert _swept_beside(tmp_path, other).exists()


def test_a_leftover_another_sweeper_removed_first_does_not_fail_the_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two processes reopening one run both sweep it: the slower one finds the dead writer's temp file gone.
    events = tmp_path / "runs" / "r" / "events"
    events.mkdir(parents=True)
    (events / ".tmp-00000001.json.999999999.dead").write_bytes(b"half")
    real_stale = fs_store._stale

    def raced(entry: os.DirEntry[str]) -> bool:
        gone = real_stale(entry)
        if gone:
            os.unlink(entry.path)  # the other sweeper, between our check and our unlink
        return gone

    monkeypatch.setattr(fs_store, "_stale", raced)
    store = FsStore(tmp_path)
    assert store.put_if_absent(key=KEY, data=b"{}")
    assert store.get(key=KEY) == b"{}" and _temps(tmp_path) == []


def test_the_record_is_synced_before_it_is_published_and_a_directory_that_cannot_be_synced_is_no_failure(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Some filesystems answer EINVAL to fsync on a directory; the record itself is synced, so the write stands.
    synced: list[tuple[str, bytes | None]] = []  # what was synced, and what a reader saw under the key then
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        seen = (tmp_path / KEY).read_bytes() if (tmp_path / KEY).exists() else None
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            synced.append(("directory", seen))
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        synced.append(("file", seen))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store = FsStore(tmp_path)
    assert store.put_if_absent(key=KEY, data=b"{}")
    assert synced == [("file", None), ("directory", b"{}")]
    synced.clear()
    store.put(key=KEY, data=b"[]")
    assert synced == [("file", b"{}"), ("directory", b"[]")]  # the old version until the new one is synced
    assert store.get(key=KEY) == b"[]"


@pytest.mark.parametrize("listing", ["list", "children"])
def test_a_directory_the_store_cannot_read_is_a_store_error_not_a_shorter_listing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listing: str) -> None:
    # os.walk skips what it cannot read unless told otherwise: list() left those records out without a word,
    # and children() let the bare PermissionError out (root reads everything, so the refusal is injected).
    store = FsStore(tmp_path)
    store.put(key="runs/a/events/00000000.json", data=b"{}")
    store.put(key="runs/b/events/00000000.json", data=b"{}")
    locked = tmp_path / "runs" / ("b" if listing == "list" else "")
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(StoreError, match="cannot list records: Permission denied") as e:
        store.list(prefix="runs/") if listing == "list" else store.children(prefix="runs/")
    assert e.value.where == str(locked)
    monkeypatch.setattr(os, "scandir", real_scandir)
    assert store.list(prefix="runs/") == ["runs/a/events/00000000.json", "runs/b/events/00000000.json"]
    assert store.list(prefix="nothing/here/") == [] and store.children(prefix="nothing/") == []


def test_a_record_the_system_cannot_look_up_is_a_store_error_and_an_absent_one_is_not(tmp_path: Path) -> None:
    # Path.is_file() raises for a name past the 255-byte segment limit (and for a parent it may not search):
    # that is not an absent record, and a caller resuming a run must not take it for one or crash on it.
    long_root = tmp_path / ("x" * 300)
    with pytest.raises(StoreError, match="cannot look up record: File name too long") as caught:
        FsStore(long_root).exists(key="runs/a/head.json")
    assert caught.value.where == str(long_root / "runs" / "a" / "head.json")
    store = FsStore(tmp_path / "s")
    store.put(key="runs/a/head.json", data=b"{}")
    assert store.exists(key="runs/a/head.json")
    assert not store.exists(key="runs/b/head.json")  # no such directory
    assert not store.exists(key="runs/a/head.json/x")  # a record where a directory would be
    assert not store.exists(key="runs/a")  # a directory is not a record


@pytest.mark.parametrize("create_only", [True, False])
@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_is_a_store_that_is_unavailable_for_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             create_only: bool, code: int) -> None:
    """Guards the exit code: a full disk was a permanent StoreError (exit 2, "bad input"); freeing space lets
    the same run go on, as a full S3 store's 507 already did (exit 75). Nothing is left half-written."""
    def full(fd: int, data: object) -> int:
        raise OSError(code, os.strerror(code))

    store = FsStore(tmp_path)
    monkeypatch.setattr(os, "write", full)
    with pytest.raises(StoreUnavailable) as info:
        if create_only:
            store.put_if_absent(key=KEY, data=b"{}")
        else:
            store.put(key=KEY, data=b"{}")
    assert info.value.message == f"cannot write record: {os.strerror(code)} (free space there, then run it again)"
    assert info.value.where == str(tmp_path / KEY) and info.value.exit_code == 75
    monkeypatch.undo()
    assert not store.exists(key=KEY) and _temps(tmp_path) == []
