"""Resuming a run: inputs recorded and checked, an interrupted run continues after its last finished node from
recorded outputs, and every reported figure is the log's."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from alas_argo import interrupts
from alas_argo.agents.roles import OptimizerRole, RepairerRole
from alas_argo.errors import InputError
from alas_argo.log import EventType, ExecutionLog, FsStore, list_runs
from alas_argo.pipeline import RunConfig, Stages, run_pipeline
from alas_argo.runtime.context import NodeContext


def _log(tmp_path: Path, run_id: str = "r1") -> ExecutionLog:
    return ExecutionLog(FsStore(tmp_path / "store"), run_id)



CONFIG = RunConfig(instance="la01", planner="cpsat", disrupt="mixed", disruptions=2, time_limit=0.5,
                   repair_budget=1, seed=4)


def _stop_when(monkeypatch: pytest.MonkeyPatch, role: str) -> None:
    """A stop request arrives while the handler of ``role`` runs (as SIGINT would: the handler goes on)."""
    original = getattr(Stages, role)

    def stopping(self: Stages, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.node_id.endswith("_2") or role != "disrupt":  # the second disruption, between the commits
            interrupts.request_stop(signal.SIGINT)
        return dict(original(self, ctx, inputs))

    monkeypatch.setattr(Stages, role, stopping)


def _counting(method: Any, counts: dict[str, int], name: str) -> Any:
    def counted(self: Any, *a: Any, **k: Any) -> Any:
        counts[name] += 1
        return method(self, *a, **k)
    return counted


def _count_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the optimizer and the repairer actually run (not replayed from the log)."""
    counts = {"optimizer": 0, "repair": 0}
    monkeypatch.setattr(OptimizerRole, "improve", _counting(OptimizerRole.improve, counts, "optimizer"))
    monkeypatch.setattr(RepairerRole, "repair_disruption",
                        _counting(RepairerRole.repair_disruption, counts, "repair"))
    return counts


@pytest.mark.parametrize("role", ["optimizer", "repairer", "disrupt"])
def test_an_interrupted_run_continues_after_its_last_finished_node(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, role: str) -> None:
    with pytest.MonkeyPatch.context() as first:
        _stop_when(first, role)
        before = _count_calls(first)
        with pytest.raises(interrupts.Interrupted) as stopped:
            run_pipeline(CONFIG, _log(tmp_path))
    assert stopped.value.exit_code == 130
    log = _log(tmp_path)
    last = log.events()[-1]
    assert last.type is EventType.RUN_INTERRUPTED and last.payload["signal"] == "SIGINT"
    assert [r.status for r in list_runs(log.store)] == ["interrupted"]
    kept = log.versions()
    interrupts.reset()  # the stop came once; the resumed run runs undisturbed
    counts = _count_calls(monkeypatch)
    result = run_pipeline(CONFIG, _log(tmp_path))
    assert result.succeeded and result.resumed and result.versions == [1, 2, 3]
    assert result.versions[:len(kept)] == kept
    # What finished before the stop came back from the log; only the rest ran.
    finished = {e.node_id for e in log.events() if e.type is EventType.NODE_IDEMPOTENT_HIT}
    assert {"propose", "merge", "check_plan"} <= finished
    if role == "optimizer":
        assert kept == [] and counts == {"optimizer": 1, "repair": 2}
    elif role == "repairer":
        assert kept == [1] and {"optimize", "commit_v1"} <= finished
        assert counts == {"optimizer": 0, "repair": 2}  # the stopped first repair again, then the second
        assert before["repair"] == 1
    else:
        assert kept == [1, 2] and {"optimize", "repair_1", "commit_2"} <= finished
        assert counts == {"optimizer": 0, "repair": 1}  # the second repair only
    assert log.verify().ok


def test_other_inputs_are_refused_naming_what_differs(tmp_path: Path) -> None:
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, repair_budget=1)
    run_pipeline(config, _log(tmp_path))
    events = len(_log(tmp_path).events())
    with pytest.raises(InputError, match=r"disrupt breakdown \(now shock\); seed 1 \(now 2\)"):
        run_pipeline(config.model_copy(update={"disrupt": "shock", "seed": 2}), _log(tmp_path))
    with pytest.raises(InputError, match=r"instance ft06 \(\w+\) \(now la01 \(\w+\)\)"):
        run_pipeline(config.model_copy(update={"instance": "la01"}), _log(tmp_path))
    with pytest.raises(InputError, match=r"deterministic True \(now False\)"):
        run_pipeline(config.model_copy(update={"deterministic": False}), _log(tmp_path))
    # A field added later is left out of the record at the value runs had before it (older runs resume), named
    # at that value when it differs.
    with pytest.raises(InputError, match=r"repair_tolerance 0\.0 \(now 0\.01\)"):
        run_pipeline(config.model_copy(update={"repair_tolerance": 0.01}), _log(tmp_path))
    assert len(_log(tmp_path).events()) == events  # nothing appended by a refused start


def test_an_edited_disruption_file_is_refused_and_a_renamed_copy_resumes(tmp_path: Path) -> None:
    doc: dict[str, Any] = {"time": 100,
                           "events": [{"kind": "machine_breakdown", "machine": 1, "start": 100, "duration": 60}]}
    first = tmp_path / "d.json"
    first.write_text(json.dumps(doc))
    config = RunConfig(instance="la01", planner="heuristic", disrupt=str(first), repair_budget=1)
    # Interrupted after the first commit: the run is unfinished.
    with pytest.MonkeyPatch.context() as patch:
        _stop_when(patch, "repairer")
        with pytest.raises(interrupts.Interrupted):
            run_pipeline(config, _log(tmp_path))
    interrupts.reset()
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps({**doc, "time": 101, "events": [{**doc["events"][0], "start": 101}]}))
    with pytest.raises(InputError, match="disrupt a disruption file"):
        run_pipeline(config.model_copy(update={"disrupt": str(edited)}), _log(tmp_path))
    renamed = tmp_path / "copy.json"
    renamed.write_text(first.read_text())
    # A path is not an input, its contents are.
    result = run_pipeline(config.model_copy(update={"disrupt": str(renamed)}), _log(tmp_path))
    assert result.succeeded and result.versions == [1, 2]


def test_every_reported_figure_is_the_logs(tmp_path: Path) -> None:
    result = run_pipeline(CONFIG, _log(tmp_path))
    assert result.succeeded
    log = _log(tmp_path)
    summary = result.summary()
    last = log.diff(2, 3)
    assert summary["moved_operations"] == len(last.moved_operations)
    assert summary["total_start_shift"] == last.total_start_shift
    assert summary["makespan_after"] == log.plan(3)["makespan"] and summary["final_version"] == 3
    assert summary["makespan_before"] == log.plan(1)["makespan"]
    assert [r["moved_operations"] for r in summary["repairs"]] == [len(log.diff(1, 2).moved_operations),
                                                                   len(last.moved_operations)]
    finished = [e for e in log.events() if e.type is EventType.REPAIR_FINISHED]
    assert [e.payload["metrics"]["edit_radius"] for e in finished] == [r["edit_radius"] for r in summary["repairs"]]
    recorded = next(e for e in log.events() if e.type is EventType.RUN_INPUTS)
    assert recorded.payload["inputs"]["seed"] == 4 and recorded.payload["digest"].startswith("sha256:")
