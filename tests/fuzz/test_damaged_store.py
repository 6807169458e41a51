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
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.log.head import LogHead
from alas_argo.log.layout import head_key, idempotency_key

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


@pytest.fixture(scope="module")
def interrupted(finished: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store of the finished run cut back to a run stopped right after its first repair (plan v1 in force,
    the disruption before it done, recheck_1 still to run): the later events removed and the head written for the
    events that remain."""
    root = tmp_path_factory.mktemp("interrupted") / "store"
    shutil.copytree(finished, root)
    store = FsStore(root)
    events = ExecutionLog(store, "r").events()
    cut = next(e.seq for e in events if e.type is EventType.REPAIR_FINISHED) + 1
    for event in events[cut:]:
        (_events(root) / f"{event.seq:08d}.json").unlink()
    store.put(key=head_key("r"), data=LogHead.fold("r", events[:cut]).to_bytes(None))
    return root


@pytest.mark.parametrize("damage", ["empty", "edit"])
def test_a_damaged_idempotency_record_stops_a_resumed_run_naming_it_and_compensates_nothing(
        interrupted: Path, tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]) -> None:
    # Found by the S3 damage sweep (h-s3dmg) on interrupted runs, on both backends: the journal's IntegrityError
    # failed the node that looked its record up, so the run failed and compensated: plan v1 was retracted, and
    # the run printed nothing (or, for a checking node's record, "human fallback: recheck_1 gave up: the plan still
    # had 0 violation(s)"). The record here is that of disrupt_1, a node the resumed run finds done.
    root = tmp_path / "store"
    shutil.copytree(interrupted, root)
    record = root / idempotency_key("r", "r:disrupt_1")
    if damage == "empty":
        record.write_bytes(b"")
    else:
        doc = json.loads(record.read_bytes())
        doc["result"]["edited"] = True
        record.write_text(json.dumps(doc))
    before = len(ExecutionLog(FsStore(root), "r").events())
    capsys.readouterr()
    assert main([*RUN, "--root", str(root)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"alas: error: fs:{record}: "), err
    log = ExecutionLog(FsStore(root), "r")
    added = [e.type for e in log.events()[before:]]
    assert EventType.NODE_FAILED not in added and EventType.PLAN_RETRACTED not in added, added
    assert log.current_version() == 1
