"""The report of ``alas log verify``: the one-line verdict for people (counts in the singular and the plural,
the version in force, the retracted versions, whether seals were checked), the JSON for machines (an intact
run's ``first_bad`` is null, not a crash), every damaged record named on its own line, and the exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.log.event import Event
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.fs_store import FsStore
from alas_argo.log.layout import idempotency_key
from alas_argo.log.verify_report import Problem, VerifyReport
from alas_argo.steps import StepInput, StepOutput, output_key, run_step

KEY = "a-test-key-of-32-bytes-0123456789"
PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}


def _step(store: FsStore, run: str) -> None:
    """Events ``node.started`` and ``node.succeeded``, the latter naming the one idempotency record it relies on."""
    run_step(StepInput(kind="noop", node="n", run_id=run, scope="wf"), store,
             {"noop": lambda ctx: StepOutput({"x": 1})})


def _args(root: Path, run: str) -> list[str]:
    return ["log", "verify", run, "--store", "fs", "--root", str(root)]


def test_an_intact_run_in_json_has_no_first_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FsStore(tmp_path / "s")
    _step(store, "r")
    assert main([*_args(tmp_path / "s", "r"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"run_id": "r", "ok": True, "events": 2, "versions": 0, "problems": [], "warnings": [],
                   "keyed": False, "anchored": 2, "current_version": None, "retracted": [], "records": 1,
                   "first_bad": None}


def test_one_of_each_is_said_in_the_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = FsStore(tmp_path / "s")
    _step(store, "r")
    ExecutionLog(store, "r").commit_plan(PLAN)
    assert main(_args(tmp_path / "s", "r")) == 0
    assert capsys.readouterr().out == ("run r: intact (3 events, 1 plan version, current v1, 1 idempotency record; "
                                       "no key: seals not checked)\n")
    log = ExecutionLog(FsStore(tmp_path / "t"), "one")
    log.append("run.started")
    assert log.verify().summary() == ("run one: intact (1 event, 0 plan versions, no plan in force, "
                                      "0 idempotency records; no key: seals not checked)")


def test_two_events_and_two_records_are_said_in_the_plural(tmp_path: Path) -> None:
    store = FsStore(tmp_path / "s")
    _step(store, "r")
    run_step(StepInput(kind="noop", node="m", run_id="r", scope="wf"), store, {"noop": lambda ctx: StepOutput({})})
    assert ExecutionLog(store, "r").verify().summary() == (
        "run r: intact (4 events, 0 plan versions, no plan in force, 2 idempotency records; "
        "no key: seals not checked)")


def test_the_version_in_force_and_every_retracted_version_are_named(tmp_path: Path) -> None:
    log = ExecutionLog(FsStore(tmp_path / "s"), "r")
    log.append("run.started")
    for makespan in (3, 4, 5):
        log.commit_plan({**PLAN, "makespan": makespan})
    log.retract(3)
    log.retract(1)
    report = log.verify()
    assert (report.current_version, report.retracted) == (2, [1, 3])
    assert report.summary() == ("run r: intact (6 events, 3 plan versions, current v2, retracted v1, v3, "
                                "0 idempotency records; no key: seals not checked)")


def test_a_keyed_run_verified_with_its_key_says_seals_were_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store = FsStore(tmp_path / "s")
    store.seal_key = KEY.encode()
    ExecutionLog(store, "r").append("run.started")
    monkeypatch.setenv("ALAS_STORE__LOG_KEY", KEY)
    assert main(_args(tmp_path / "s", "r")) == 0
    assert capsys.readouterr().out == ("run r: intact (1 event, 0 plan versions, no plan in force, "
                                       "0 idempotency records; seals checked)\n")


def test_every_damaged_record_is_named_on_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A lost plan object, an edited event and an edited idempotency record: the verdict names the first in
    sequence order and counts all three, each has its line with code and place, and the exit code is 1."""
    root = tmp_path / "s"
    store = FsStore(root)
    _step(store, "r")  # 0, 1 (names record output/wf/n)
    log = ExecutionLog(store, "r")
    log.commit_plan(PLAN)  # 2
    log.append("run.succeeded", payload={"i": 0})  # 3
    plan = str(log.plan_event(1).payload["key"])
    store.root.joinpath(*plan.split("/")).unlink()
    doc = Event.model_validate_json(store.get(key=event_key("r", 3))).model_dump(mode="json")
    store.put(key=event_key("r", 3), data=Event.model_validate({**doc, "payload": {"i": 1}}).to_bytes())
    record_key = idempotency_key("r", output_key("wf", "n"))
    record = json.loads(store.get(key=record_key))
    store.put(key=record_key, data=json.dumps({**record, "result": {"x": 2}}).encode())

    report = log.verify()
    # Events' problems first in sequence order, then the record's, which has no event and is placed by its key.
    assert [(p.code, p.seq, p.key) for p in report.problems] == [("plan_missing", 2, plan),
                                                                 ("bad_hash", 3, event_key("r", 3)),
                                                                 ("record_bad_hash", None, record_key)]
    assert main(_args(root, "r")) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"run r: BROKEN at event 2: plan v1 referenced by event 2 is missing (3 problem(s); {plan})"
    shown = len(report.problems) + 1
    assert lines[1:shown] == [f"  {p.code} at {'event ' + str(p.seq) if p.seq is not None else p.key}: {p.message}"
                              for p in report.problems]
    # Then what a person can do about it (nothing in ALAS mends a log), however the console wraps it.
    assert " ".join(lines[shown:]).startswith("what to do: nothing in ALAS rewrites a log (it is append-only)")
    assert lines[1] == "  plan_missing at event 2: plan v1 referenced by event 2 is missing"
    assert lines[3] == (f"  record_bad_hash at {record_key}: the record for 'output/wf/n' does not match its hash "
                        "(edited)")
    assert main([*_args(root, "r"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["first_bad"] == out["problems"][0] == report.problems[0].model_dump(mode="json")


def test_a_problem_with_no_event_is_placed_by_its_key() -> None:
    problem = Problem(code="head_missing", seq=None, key="runs/r/head.json", message="the head is missing")
    report = VerifyReport(run_id="r", ok=False, events=0, versions=0, problems=[problem])
    assert report.summary() == "run r: BROKEN at runs/r/head.json: the head is missing (1 problem(s); runs/r/head.json)"
    assert report.first_bad == problem and VerifyReport(run_id="r", ok=True, events=0, versions=0).first_bad is None
