"""Compensation leaves a trace: a retraction is a logged transition that changes the version in force for
every reader (the log, `alas log show`, verify, replay, the controller, the metrics), locally through the
pipeline's saga and through `alas step compensate` (the workflows' onExit path is walked in
tests/workflows/test_walk.py)."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.controller import RepairService, serve
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.replay import replay_log
from alas_argo.log.store import Store
from alas_argo.metrics import REGISTRY
from alas_argo.steps import StepInput, output_key, run_step

PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}


def _retracted_total() -> float:
    return REGISTRY.get_sample_value("alas_plans_retracted_total") or 0.0


def test_retraction_changes_the_version_in_force(store: Store) -> None:
    log = ExecutionLog(store, "r")
    log.commit_plan(PLAN)
    log.commit_plan({**PLAN, "makespan": 4})
    before = _retracted_total()
    first = log.retract(2, reason="compensation")
    assert first.type is EventType.PLAN_RETRACTED and first.payload == {"version": 2, "reason": "compensation"}
    assert log.current_version() == 1 and log.current_plan() == (1, PLAN)
    log.retract(1)
    assert log.current_plan() is None and log.retracted() == [1, 2] and log.versions() == [1, 2]
    assert log.retract(2).seq == first.seq  # retracting again is the same transition, not a new one
    assert _retracted_total() == before + 2
    with pytest.raises(InputError, match="no plan version 7"):
        log.retract(7)
    fresh = ExecutionLog(store, "r")  # another reader sees the same state through the head
    assert fresh.current_version() is None and fresh.retracted() == [1, 2]
    assert fresh.plan(2)["makespan"] == 4  # a retracted version stays readable
    log.commit_plan({**PLAN, "makespan": 6})
    assert fresh.current_version() == 3  # a later commit is in force again
    report = fresh.verify()
    assert report.ok and report.current_version == 3 and report.retracted == [1, 2]


def test_log_show_verify_and_replay_read_the_retraction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(tmp_path), "shown")
    log.commit_plan(PLAN)
    log.retract(1)
    args = ["--store", "fs", "--root", str(tmp_path)]
    assert main(["log", "show", "shown", *args]) == 0
    assert "versions: [1]  current: none  retracted: v1" in capsys.readouterr().out
    assert main(["log", "show", "shown", *args, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["current_version"], doc["retracted"], doc["events"][-1]["type"]) == (None, [1], "plan.retracted")
    assert main(["log", "verify", "shown", *args]) == 0
    assert "no plan in force, retracted v1" in capsys.readouterr().out
    report = replay_log(ExecutionLog(FsStore(tmp_path), "shown"))
    assert report.current_version is None and report.retracted == [1] and "retracted v1" in report.summary()


def test_the_controller_reads_the_retraction(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    inst = get_instance("ft06")
    log = ExecutionLog(store, "ctl")
    log.append(EventType.RUN_STARTED, payload={"instance": inst.to_json()})
    log.commit_plan(dispatch(inst).to_json())
    log.retract(1)
    server = serve(RepairService(store), "127.0.0.1", 0, token=None)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
        conn.request("GET", "/runs/ctl")
        resp = conn.getresponse()
        assert resp.status == 404 and "retracted: v1" in json.loads(resp.read())["error"]
        body = {"time": 0, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 0, "duration": 2}],
                "method": "right-shift"}
        conn.request("POST", "/runs/ctl/disruptions", body=json.dumps(body),
                     headers={"Content-Type": "application/json", "Idempotency-Key": "k"})
        resp = conn.getresponse()
        assert resp.status == 404 and "no committed plan in force" in json.loads(resp.read())["error"]
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
    assert log.versions() == [1]  # nothing was repaired from a withdrawn plan


def test_compensate_step_retracts_what_its_workflow_committed(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    log = ExecutionLog(store, "saga")
    version = log.commit_plan(PLAN, node_id="commit-plan")
    key = output_key("wf-1", "commit-plan")
    log.idempotency_put(key, {"doc": {"version": version}, "params": {}})
    log.append(EventType.NODE_SUCCEEDED, node_id="commit-plan", payload={"key": key, "scope": "wf-1"})
    comps = {"commit-plan": {"node": "retract-plan", "role": "retract", "params": {}}}
    out = run_step(StepInput(kind="compensate", node="compensate", run_id="saga", scope="wf-1",
                             compensations=comps, status="Failed"), store)
    assert out.doc == {"compensated": [{"node": "commit-plan", "retracted": 1, "restored": None}]}
    assert ExecutionLog(store, "saga").current_plan() is None


def test_a_failed_local_run_retracts_its_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The disruption is revealed after the plan's end: the disrupt node fails for good after commit_v1,
    # and the saga compensates the commit.
    bad = tmp_path / "late.json"
    bad.write_text(json.dumps({"time": 99_999, "events": [{"kind": "machine_breakdown", "machine": 1,
                                                            "start": 99_999, "duration": 5}]}))
    root = tmp_path / "store"
    code = main(["run", "ft06", "--disrupt", str(bad), "--root", str(root), "--run-id", "failed",
                 "--time-limit", "1", "--json"])
    assert code != 0 and json.loads(capsys.readouterr().out)["compensated"] == ["commit_v1"]
    log = ExecutionLog(FsStore(root), "failed")
    assert log.versions() == [1] and log.retracted() == [1] and log.current_plan() is None
    assert main(["log", "show", "failed", "--root", str(root)]) == 0
    assert "current: none  retracted: v1" in capsys.readouterr().out
