"""The row-by-row benchmark table's edges: a directory made however deep, the refusals' exact texts and places,
each row fsynced before the next case, a write that fails mid-run named, the file closed when the run ends
(mutation survivors of alas_argo/benchmarks/partial_table.py)."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from alas_argo.benchmarks import partial_table
from alas_argo.benchmarks.partial_table import PartialTable
from alas_argo.errors import InputError, TransientError


@dataclass
class Row:
    name: str
    value: float


def test_the_directory_is_made_however_deep_before_any_row(tmp_path: Path) -> None:
    path = tmp_path / "bench" / "results" / "today" / "t.csv"
    with PartialTable(path, ["name", "value"]) as table:
        assert path.parent.is_dir() and not path.exists()
        table.add(Row("é", 0.5))  # not ASCII: the file is UTF-8 whatever the locale
    assert path.read_bytes() == "name,value\né,0.5\n".encode()


def test_each_row_is_fsynced_before_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    path = tmp_path / "t.csv"

    def fsync(fd: int) -> None:
        synced.append(path.read_text(encoding="utf-8"))  # what is on disk when the row is made durable

    monkeypatch.setattr(partial_table.os, "fsync", fsync)
    with PartialTable(path, ["name"]) as table:
        table.add(Row("a", 1.0))
        table.add(Row("b", 2.0))
    assert synced == ["name\na\n", "name\na\nb\n"]


@pytest.mark.parametrize("place", ["directory", "under a file"])
def test_a_refusal_says_what_the_system_said(tmp_path: Path, place: str) -> None:
    if place == "directory":
        path = tmp_path / "t.csv"
        path.mkdir()
        reason = "Is a directory"
    else:
        (tmp_path / "f").write_text("x")
        path = tmp_path / "f" / "t.csv"
        reason = "File exists"  # the directory to make is a file
    with pytest.raises(InputError) as e:
        PartialTable(path, ["name"])
    assert (e.value.message, e.value.where) == (f"cannot write: {reason}", str(path))


def test_a_directory_that_takes_no_file_is_refused_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The probe is a temporary file in the table's own directory (root may write anywhere, so a refusal is
    # simulated where the probe is made): a table that could not be written would fail only after the first
    # case, minutes in.
    probed: list[object] = []

    def refuse(*, dir: object) -> object:  # tempfile's own keyword
        probed.append(dir)
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(partial_table.tempfile, "TemporaryFile", refuse)
    path = tmp_path / "ro" / "t.csv"
    with pytest.raises(InputError) as e:
        PartialTable(path, ["name"])
    assert (e.value.message, e.value.where) == ("cannot write: Permission denied", str(path))
    assert probed == [path.parent]


def test_a_write_that_fails_mid_run_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    path = tmp_path / "t.csv"
    with PartialTable(path, ["name"]) as table:
        monkeypatch.setattr(partial_table.os, "fsync", full)
        with pytest.raises(TransientError) as e:  # a full disk: space can be freed and the bench run again
            table.add(Row("a", 1.0))
    assert (e.value.message, e.value.where) == (
        "cannot write: No space left on device (free space there, then run it again)", str(path))
    assert e.value.exit_code == 75
    assert table.rows == 0  # the row did not count


def test_the_file_is_closed_when_the_run_ends(tmp_path: Path) -> None:
    with PartialTable(tmp_path / "t.csv", ["name"]) as table:
        table.add(Row("a", 1.0))
        file = table._file
        assert file is not None and not file.closed
    assert file.closed
