"""`alas log show|diff|verify` and `alas replay`, the lines people read: what each names, and where it stops.

Found by mutation testing (scripts/mutation.py on alas_argo/cli/logs.py): test_log_cli.py checks the exit codes,
the JSON and one or two phrases of each command, so a plan version's provenance (the committing event, its node,
its parent), the versions line, the diff's singular, its `--limit` and the cut-off line, the run list of a
mistyped id past five runs, an empty store, a truncated payload cell, the problem and warning lines of a broken
log with what to do next, and the replay's per-event lines were all free to change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from alas_argo.cli import logs, main
from alas_argo.log.event import Event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.fs_store import FsStore


def _ops(starts: list[int], makespan: bool = True) -> dict[str, Any]:
    ops = [{"job": j, "step": 0, "machine": j, "start": s, "end": s + 2} for j, s in enumerate(starts)]
    doc: dict[str, Any] = {"instance": "t", "operations": ops}
    if makespan:
        doc["makespan"] = max(s + 2 for s in starts)
    return doc


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rich wraps at 80 columns when not on a terminal; a wide console keeps each line whole for the asserts.
    monkeypatch.setattr(logs, "_console", lambda: Console(highlight=False, soft_wrap=True, width=400))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    store = FsStore(tmp_path / "s")
    log = ExecutionLog(store, "alpha")
    log.append(EventType.RUN_STARTED, payload={"instance": "t", "note": "x" * 100})
    log.commit_plan(_ops([0, 0, 0]), node_id="commit")
    log.commit_plan(_ops([0, 3, 1]), node_id="fix", parent_version=1, reason="repair")
    return tmp_path / "s"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_plan_version_names_the_event_node_reason_and_parent_that_committed_it(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(root), "alpha")
    first, second = log.plan_event(1), log.plan_event(2)
    code, out, _ = _run(capsys, "log", "show", "alpha", "--root", str(root), "--version", "1")
    assert code == 0
    assert (f"run alpha plan v1: makespan 2, 3 operations, committed by event {first.seq} at {first.timestamp} "
            f"(node commit, reason {first.payload.get('reason', '-')}, no parent), ") in out, out
    assert out.rstrip().endswith(f"{first.payload['bytes']} bytes stored")
    code, out, _ = _run(capsys, "log", "show", "alpha", "--root", str(root), "--version", "2")
    assert (f"committed by event {second.seq} at {second.timestamp} (node fix, reason repair, parent v1), "
            f"{second.payload['bytes']} bytes stored") in out, out


def test_the_event_table_cuts_a_long_payload_and_the_versions_line_names_retractions(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "log", "show", "alpha", "--root", str(root))
    assert code == 0
    lines = out.splitlines()
    assert lines[-1] == "versions: [1, 2]  current: v2"
    started = next(line for line in lines if "run.started" in line)
    # 69 characters of the compact JSON and an ellipsis, no more.
    assert '{"instance":"t","note":"' + "x" * 45 + "…" in started and "x" * 46 not in started
    ExecutionLog(FsStore(root), "alpha").retract(2)
    ExecutionLog(FsStore(root), "alpha").retract(1)
    code, out, _ = _run(capsys, "log", "show", "alpha", "--root", str(root))
    assert out.splitlines()[-1] == "versions: [1, 2]  current: none  retracted: v1, v2"


def test_diff_singular_limit_and_the_cut_off_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "log", "diff", "alpha", "1", "2", "--root", str(root), "--limit", "1")
    assert code == 0
    assert out.splitlines() == [
        "v1 -> v2: makespan 2 -> 5 (+3), 2 operations moved (total shift 4), 0 on another machine, 0 added, "
        "0 removed",
        "  job 1 step 0: start 0 -> 3 (+3)",
        "  ... 1 more (use --json for all)"]
    code, out, _ = _run(capsys, "log", "diff", "alpha", "2", "1", "--root", str(root), "--limit", "2")
    assert out.splitlines()[1:] == ["  job 1 step 0: start 3 -> 0 (-3)", "  job 2 step 0: start 1 -> 0 (-1)"]
    log = ExecutionLog(FsStore(root), "alpha")
    log.commit_plan(_ops([0, 3, 2]), node_id="fix", parent_version=2)
    code, out, _ = _run(capsys, "log", "diff", "alpha", "2", "3", "--root", str(root))
    assert out.splitlines()[0].startswith("v2 -> v3: makespan 5 -> 5 (+0), 1 operation moved (total shift 1),")
    code, out, _ = _run(capsys, "log", "diff", "alpha", "2", "3", "--root", str(root), "--limit", "0")
    assert out.splitlines()[1:] == ["  ... 1 more (use --json for all)"]


def test_diff_of_plans_without_a_makespan_says_only_what_moved(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(tmp_path / "s"), "nomk")
    log.commit_plan(_ops([0, 0], makespan=False))
    log.commit_plan(_ops([0, 4], makespan=False))
    code, out, _ = _run(capsys, "log", "diff", "nomk", "1", "2", "--root", str(tmp_path / "s"))
    assert code == 0
    assert out.splitlines() == ["v1 -> v2: 1 operation moved", "  job 1 step 0: start 0 -> 4 (+4)"]


def test_a_mistyped_run_lists_five_runs_then_dots_and_an_empty_store_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FsStore(tmp_path / "s")
    (tmp_path / "s").mkdir()
    code, _, err = _run(capsys, "log", "show", "r9", "--root", str(tmp_path / "s"))
    assert code == 2 and "no run 'r9' in the log; the store holds no runs" in err, err
    for i in range(5):
        ExecutionLog(store, f"r{i}").append(EventType.RUN_STARTED)
    code, _, err = _run(capsys, "log", "verify", "r9", "--root", str(tmp_path / "s"))
    assert "runs here: r0, r1, r2, r3, r4 (`alas log ls`)" in err, err
    ExecutionLog(store, "r5").append(EventType.RUN_STARTED)
    code, _, err = _run(capsys, "replay", "r9", "--root", str(tmp_path / "s"))
    assert code == 2 and "runs here: r0, r1, r2, r3, r4, ... (`alas log ls`)" in err, err


def test_a_broken_log_names_each_problem_where_it_is_and_what_to_do(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FsStore(root)
    key = event_key("alpha", 1)
    doc = Event.model_validate_json(store.get(key=key)).model_dump(mode="json")
    doc["node_id"] = "forged"
    store.put(key=key, data=Event.model_validate(doc).to_bytes())
    code, out, _ = _run(capsys, "log", "verify", "alpha", "--root", str(root))
    assert code == 1
    lines = out.splitlines()
    assert any(line.startswith("  bad_hash at event 1: ") for line in lines), out
    assert lines[-1] == logs._AFTER_BROKEN
    assert lines[-1].startswith("what to do: nothing in ALAS rewrites a log (it is append-only)")
    code, out, _ = _run(capsys, "log", "verify", "alpha", "--root", str(root), "--json")
    assert code == 1 and logs._AFTER_BROKEN not in out


def test_an_intact_log_prints_its_warnings_and_no_advice(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A run without its head object is still intact, with a warning that tail removals cannot be seen.
    (root / "runs" / "alpha" / "head.json").unlink()
    code, out, _ = _run(capsys, "log", "verify", "alpha", "--root", str(root))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("run alpha: intact (3 events, 2 plan versions")
    assert lines[1:] == ["  warning: no head object (a run written before heads existed, or the head was deleted): "
                         "events removed from the tail cannot be detected"]


def test_replay_prints_one_line_per_event_then_the_summary(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import dispatch
    from alas_argo.jssp.validate import validate

    ft06 = get_instance("ft06")
    log = ExecutionLog(FsStore(tmp_path / "r"), "rep")
    plan = dispatch(ft06)
    version = log.commit_plan(plan.to_json())
    event = log.append(EventType.VALIDATION_PASSED, node_id="check", payload={
        "instance": {"name": "ft06"}, "plan_version": version, "report": validate(ft06, plan).to_json()})
    # A recorded repair that could not be re-run: --skip-repairs leaves it alone and says so.
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload={"method": "unknown"})
    code, out, _ = _run(capsys, "replay", "rep", "--root", str(tmp_path / "r"), "--skip-repairs")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"  event {event.seq:>4} validation check            same  "), lines
    assert lines[-1].startswith("run rep: parity: 1/1 validations identical, 0/0 repairs identical, 1 repairs "
                                "skipped; current v1 (")


def test_ls_in_a_pipe_prints_every_column_of_each_run(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(root), "alpha")
    last = log.events()[-1]
    code, out, _ = _run(capsys, "log", "ls", "--root", str(root))
    assert code == 0
    # Left-aligned columns two spaces apart, each as wide as its widest cell, the header's included.
    assert out.splitlines()[:2] == [
        "run_id  status   events  plans  last event      at",
        f"alpha   running  3       2      plan.committed  {last.timestamp}"]


def test_show_names_the_run_in_json_and_each_event_by_number_and_attempt(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(root), "alpha")
    log.retract(1)
    log.append(EventType.NODE_FAILED, node_id="solve", attempt=2)
    code, out, _ = _run(capsys, "log", "show", "alpha", "--root", str(root), "--json")
    doc = json.loads(out)
    assert (doc["run_id"], doc["versions"], doc["current_version"], doc["retracted"]) == ("alpha", [1, 2], 2, [1])
    code, out, _ = _run(capsys, "log", "show", "alpha", "--root", str(root))
    assert code == 0
    lines = out.splitlines()
    header = next(line for line in lines if "payload" in line)
    assert [c.strip() for c in header.split("┃")[1:-1]] == ["seq", "time", "type", "node", "try", "payload"]
    failed = next(line for line in lines if "node.failed" in line).split("│")[1:-1]
    # The numbers are right-aligned, the words left-aligned.
    assert failed[5].strip() == "{}"  # a short payload is shown whole, without an ellipsis
    assert failed[:5] == ["   4 ", f" {log.events()[4].timestamp[11:23]} ", " node.failed    ", " solve  ", "   2 "]


def test_diff_lists_twenty_moves_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(tmp_path / "s"), "many")
    log.commit_plan(_ops([0] * 22))
    log.commit_plan(_ops([1] * 22))
    code, out, _ = _run(capsys, "log", "diff", "many", "1", "2", "--root", str(tmp_path / "s"))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 22 and lines[20] == "  job 19 step 0: start 0 -> 1 (+1)"
    assert lines[-1] == "  ... 2 more (use --json for all)"


def test_an_unknown_run_is_reported_at_the_store(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "log", "show", "alhpa", "--root", str(root))
    assert code == 2 and f"{root}: no run 'alhpa' in the log; runs here: alpha (`alas log ls`)" in err, err


def test_replay_stops_cleanly_on_a_signal() -> None:
    from alas_argo.cli import build_parser

    argv = ["replay", "r"]
    args, _ = build_parser(argv).parse_known_args(argv)
    assert args.stoppable is True


def test_replay_marks_the_event_that_drifted_and_a_missing_store_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import dispatch
    from alas_argo.jssp.validate import validate

    ft06 = get_instance("ft06")
    log = ExecutionLog(FsStore(tmp_path / "r"), "rep")
    plan = dispatch(ft06)
    version = log.commit_plan(plan.to_json())
    good = validate(ft06, plan).to_json()
    forged = log.append(EventType.VALIDATION_FAILED, payload={
        "instance": {"name": "ft06"}, "plan_version": version, "report": {**good, "valid": False}})
    code, out, _ = _run(capsys, "replay", "rep", "--root", str(tmp_path / "r"))
    assert code == 1
    assert out.splitlines()[0].startswith(f"  event {forged.seq:>4} validation -                DRIFT "), out
    code, _, err = _run(capsys, "log", "ls", "--root", str(tmp_path / "none"))
    assert code == 2 and "no execution log store here: the directory does not exist (see --root)" in err


def test_a_store_root_the_system_cannot_look_up_is_refused_naming_it(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # ALAS_STORE__ROOT or --root past the name length limit: one line naming the root and why, not a traceback.
    long_root = tmp_path / ("x" * 300)
    code, _, err = _run(capsys, "log", "ls", "--root", str(long_root))
    assert code == 2
    assert err.strip() == (f"alas: error: {long_root}: no execution log store here: cannot look the directory up: "
                           "File name too long (see --root)")
