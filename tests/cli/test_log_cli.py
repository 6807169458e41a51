"""`alas log ls|show|diff|verify` and `alas replay`: output, --json, exit codes, both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import main
from alas_argo.log.event import Event
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.fs_store import FsStore
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store
from tests.s3server import s3_bucket, s3_server

__all__ = ["s3_bucket", "s3_server"]  # fixtures, re-exported so pytest sees them here


def _ops(starts: list[int]) -> dict[str, Any]:
    ops = [{"job": j, "step": 0, "machine": j, "start": s, "end": s + 2} for j, s in enumerate(starts)]
    return {"instance": "t", "makespan": max(s + 2 for s in starts), "operations": ops}


def _populate(store: Store) -> None:
    log = ExecutionLog(store, "alpha")
    log.append(EventType.RUN_STARTED, payload={"instance": "t"})
    log.commit_plan(_ops([0, 0, 0]), node_id="commit")
    log.commit_plan(_ops([0, 3, 1]), node_id="commit", parent_version=1)
    log.append(EventType.RUN_SUCCEEDED)
    ExecutionLog(store, "beta").append(EventType.RUN_STARTED)


def _json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def fs_args(tmp_path: Path) -> list[str]:
    _populate(FsStore(tmp_path / "s"))
    return ["--store", "fs", "--root", str(tmp_path / "s")]


def test_ls(fs_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "ls", *fs_args, "--json"]) == 0
    runs = _json(capsys)
    assert [(r["run_id"], r["status"], r["events"], r["plans"]) for r in runs] == [
        ("alpha", "succeeded", 4, 2), ("beta", "running", 1, 0)]
    assert main(["log", "ls", *fs_args]) == 0
    out = capsys.readouterr().out
    assert "alpha" in out and "succeeded" in out and "beta" in out


def test_show_run_and_version(fs_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "show", "alpha", *fs_args, "--json"]) == 0
    doc = _json(capsys)
    assert doc["versions"] == [1, 2] and doc["current_version"] == 2
    assert [e["type"] for e in doc["events"]] == ["run.started", "plan.committed", "plan.committed",
                                                   "run.succeeded"]
    assert main(["log", "show", "alpha", *fs_args, "--version", "1", "--json"]) == 0
    assert _json(capsys) == _ops([0, 0, 0])
    assert main(["log", "show", "alpha", *fs_args, "--version", "2"]) == 0
    assert "plan v2: makespan 5, 3 operations" in capsys.readouterr().out
    assert main(["log", "show", "alpha", *fs_args]) == 0
    assert "plan.committed" in capsys.readouterr().out


def test_diff(fs_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "diff", "alpha", "1", "2", *fs_args, "--json"]) == 0
    diff = _json(capsys)
    assert diff["moved_operations"] == [[1, 0, 0, 3], [2, 0, 0, 1]] and diff["makespan_change"] == 3
    assert main(["log", "diff", "alpha", "1", "2", *fs_args]) == 0
    out = capsys.readouterr().out
    assert "v1 -> v2: makespan 2 -> 5 (+3), 2 operations moved (total shift 4), 0 on another machine, 0 added, " \
           "0 removed" in out and "job 1 step 0: start 0 -> 3 (+3)" in out
    assert main(["log", "diff", "alpha", "2", "2", *fs_args]) == 0
    assert "v2 -> v2: makespan 5 -> 5 (+0), 0 operations moved (total shift 0), 0 on another machine" \
        in capsys.readouterr().out


def test_a_version_is_taken_as_the_log_prints_it(fs_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # `log show` prints "current: v2" and `log diff` "v1 -> v2": both forms name a version.
    assert main(["log", "show", "alpha", *fs_args, "--version", "v2"]) == 0
    assert "plan v2: makespan 5, 3 operations" in capsys.readouterr().out
    assert main(["log", "diff", "alpha", "V1", "v2", *fs_args]) == 0
    assert "makespan 2 -> 5 (+3)" in capsys.readouterr().out
    for bad in ("two", "v", "v-1", "1.5", "v²", "٣"):
        with pytest.raises(SystemExit) as info:
            main(["log", "show", "alpha", *fs_args, "--version", bad])
        assert info.value.code == 2
        assert f"not a plan version (a number, or v and a number, as in v2): {bad!r}" in capsys.readouterr().err


def test_verify_exit_codes(tmp_path: Path, fs_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log", "verify", "alpha", *fs_args]) == 0
    assert "intact" in capsys.readouterr().out
    store = FsStore(tmp_path / "s")
    key = event_key("alpha", 3)
    doc = Event.model_validate_json(store.get(key=key)).model_dump(mode="json")
    doc["type"] = "run.failed"
    store.put(key=key, data=Event.model_validate(doc).to_bytes())
    assert main(["log", "verify", "alpha", *fs_args, "--json"]) == 1
    report = _json(capsys)
    assert report["ok"] is False and report["first_bad"]["seq"] == 3 and report["first_bad"]["code"] == "bad_hash"
    assert main(["log", "verify", "alpha", *fs_args]) == 1
    assert "BROKEN at event 3" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["log", "verify", "nope"], ["log", "show", "nope"],
                                  ["log", "show", "alpha", "--version", "9"], ["log", "diff", "alpha", "1", "7"],
                                  ["log", "verify", "../etc"], ["replay", "nope"]])
def test_bad_input_exits_2_with_one_line(argv: list[str], fs_args: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, *fs_args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("alas: error:")


def test_replay_parity_and_drift_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import dispatch
    from alas_argo.jssp.validate import validate

    store = FsStore(tmp_path / "r")
    ft06 = get_instance("ft06")
    log = ExecutionLog(store, "rep")
    plan = dispatch(ft06)
    version = log.commit_plan(plan.to_json())
    good = validate(ft06, plan).to_json()
    log.append(EventType.VALIDATION_PASSED, node_id="check",
               payload={"instance": {"name": "ft06"}, "plan_version": version, "report": good})
    args = ["--root", str(tmp_path / "r")]
    assert main(["replay", "rep", *args, "--json"]) == 0
    assert _json(capsys)["parity"] is True
    log.append(EventType.VALIDATION_FAILED, node_id="forged",
               payload={"instance": {"name": "ft06"}, "plan_version": version, "report": {**good, "valid": False}})
    assert main(["replay", "rep", *args]) == 1
    out = capsys.readouterr().out
    assert "DRIFT" in out and "forged" in out


def test_s3_backend_from_settings(s3_server: Any, s3_bucket: str, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    kwargs = s3_server.store_kwargs(s3_bucket)
    _populate(S3Store(**kwargs))
    monkeypatch.setenv("ALAS_STORE__S3_ENDPOINT", kwargs["endpoint"])
    monkeypatch.setenv("ALAS_STORE__S3_BUCKET", s3_bucket)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", kwargs["access_key"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", kwargs["secret_key"])
    assert main(["log", "ls", "--store", "s3", "--json"]) == 0
    assert [r["run_id"] for r in _json(capsys)] == ["alpha", "beta"]
    assert main(["log", "verify", "alpha", "--store", "s3"]) == 0
    assert "intact" in capsys.readouterr().out
    assert main(["log", "diff", "alpha", "1", "2", "--store", "s3", "--json"]) == 0
    assert _json(capsys)["makespan_change"] == 3
    assert main(["log", "show", "alpah", "--store", "s3"]) == 2
    assert "no run 'alpah' in the log; runs here: alpha, beta (`alas log ls`)" in capsys.readouterr().err
    monkeypatch.setenv("ALAS_STORE__S3_BUCKET", "missing-bucket")
    assert main(["log", "ls", "--store", "s3"]) == 2
    assert "missing-bucket" in capsys.readouterr().err
    # A HEAD's 404 does not say which is missing, the object or the bucket: `log show` said "no run 'alpha'".
    for argv in (["log", "show", "alpha"], ["replay", "alpha"], ["log", "verify", "alpha"]):
        assert main([*argv, "--store", "s3"]) == 2
        err = capsys.readouterr().err
        assert "missing-bucket" in err and "no run" not in err, err


@pytest.mark.parametrize("argv", [["replay", "alpha"], ["log", "show", "alpha"]])
def test_a_hole_in_the_chain_fails_replay_and_show_instead_of_reading_a_prefix(
        argv: list[str], tmp_path: Path, fs_args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # Before: both read events 0..1 and stopped; replay reported parity over them with exit 0.
    (tmp_path / "s" / "runs" / "alpha" / "events" / "00000002.json").unlink()
    assert main([*argv, *fs_args]) == 1
    assert "event 2 is missing, but the head counts 4 events" in capsys.readouterr().err
