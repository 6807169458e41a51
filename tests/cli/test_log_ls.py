"""`alas log ls` prints run ids whole, in pipes and in an 80-column terminal; a missing store is an error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console

from alas_argo.cli import logs, main
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.fs_store import FsStore

IDS = ["ta01-20260101-120000-a1b2-with-a-long-suffix", "ft06-20260102-130000-c3d4"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = FsStore(tmp_path / "store")
    for run_id in IDS:
        ExecutionLog(store, run_id).append(EventType.RUN_STARTED, payload={"instance": {"name": "ft06"}})
    return tmp_path / "store"


def test_ids_are_whole_in_a_pipe(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "ls", "--root", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["run_id", "status"]
    assert sorted(line.split()[0] for line in lines[1:]) == sorted(IDS)  # cut -f1 style: whole ids


def test_ids_are_whole_in_an_80_column_terminal(root: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(logs, "_console", lambda: Console(force_terminal=True, width=80, highlight=False,
                                                          color_system=None))
    assert main(["log", "ls", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    for run_id in IDS:
        assert re.search(rf"\b{re.escape(run_id)}\b", out), out


def test_a_store_that_does_not_exist_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nonexistent"
    for argv in (["log", "ls"], ["log", "verify", "r1"], ["log", "show", "r1"]):
        assert main([*argv, "--root", str(missing)]) == 2
        err = capsys.readouterr().err
        assert f"{missing}: no execution log store here" in err and err.count("\n") == 1
    assert not missing.exists()


def test_a_store_root_that_is_a_file_is_named_as_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # It said "the directory does not exist" of a path that exists.
    a_file = tmp_path / "notes.txt"
    a_file.write_text("not a store\n")
    assert main(["log", "ls", "--root", str(a_file)]) == 2
    assert f"{a_file}: no execution log store here: a file, not a directory (see --root)" in capsys.readouterr().err
    assert a_file.read_text() == "not a store\n"
