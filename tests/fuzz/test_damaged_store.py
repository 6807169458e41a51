"""A run's store damaged behind the log's back, then the commands a user runs on it: found by a sweep that damaged
one record of a real run at random (230 trials). A swapped, copied or edited event was read as if it belonged: `alas
run --run-id` of a finished run gave its stored result back (exit 0) and `alas log show` showed it, while `alas log
verify` said the log was broken. Now every command that reads the log refuses the first such record in one line
naming it and `alas log verify`, and verify reports it among the run's problems."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from alas_argo.cli import main

RUN = ["run", "ft06", "--planner", "heuristic", "--disrupt", "breakdown", "--run-id", "r", "--quiet"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of one finished run (planned, disrupted, repaired), made once for the module."""
    root = tmp_path_factory.mktemp("finished") / "store"
    assert main([*RUN, "--root", str(root)]) == 0
    return root


def _events(root: Path) -> Path:
    return root / "runs" / "r" / "events"


def _swap(root: Path) -> str:
    a, b = _events(root) / "00000004.json", _events(root) / "00000009.json"
    data = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(data)
    return "the record of event 4 holds event 9 (copied or moved)"


def _copy(root: Path) -> str:
    shutil.copyfile(_events(root) / "00000003.json", _events(root) / "00000006.json")
    return "the record of event 6 holds event 3 (copied or moved)"


def _edit(root: Path) -> str:
    path = _events(root) / "00000005.json"
    doc = json.loads(path.read_bytes())
    doc["payload"]["edited"] = True
    path.write_text(json.dumps(doc))
    return "event 5's content does not match its hash (edited)"


@pytest.mark.parametrize("damage", [_swap, _copy, _edit], ids=["swap", "copy", "edit"])
# The commands that read the whole log. `log diff` opens the head and reads the two commit events and plans it
# needs (a bounded number of requests however long the log), each checked as it is read; it does not walk the rest.
@pytest.mark.parametrize("command", [RUN, ["log", "show", "r"], ["replay", "r"]], ids=["resume", "show", "replay"])
def test_a_damaged_record_is_refused_by_every_reader_in_one_line(
        finished: Path, tmp_path: Path, damage: object, command: list[str],
        capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    shutil.copytree(finished, root)
    said = damage(root)  # type: ignore[operator]
    capsys.readouterr()
    assert main([*command, "--root", str(root)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("alas: error: fs:") and err[0].endswith(
        f"{said}; run `alas log verify`"), err
    assert main(["log", "verify", "r", "--root", str(root)]) == 1  # and verify says broken
