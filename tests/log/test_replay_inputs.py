"""Replay rebuilds each recorded step's inputs as the payload contract says (alas_argo/log/replay.py): plans inline
or by committed version, the baseline a verdict depends on, a repair's options with their documented defaults
when a log predates them, and a step whose inputs cannot be rebuilt reported with the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import alas_argo.jssp.repair as repairing
from alas_argo.jssp.dispatching import DispatchingRule, dispatch
from alas_argo.jssp.disruption import Disruption, generate_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.replay import replay_log


def _case(tiny: Instance) -> tuple[Schedule, Disruption, Schedule]:
    """The plan in force, a breakdown at time 2 and right-shift's repair of it (tiny: 11 -> 13)."""
    plan = dispatch(tiny, DispatchingRule.MWKR)
    disruption = generate_disruption(tiny, plan, "breakdown", seed=1)
    repaired = repairing.repair(tiny, plan, disruption, "right-shift", 1.0, seed=0, workers=1).schedule
    return plan, disruption, repaired


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Record the options replay passes to the real repair (which still runs)."""
    calls: list[dict[str, Any]] = []
    real = repairing.repair

    def spy(*args: Any, **options: Any) -> Any:
        calls.append({"method": args[3], "budget": args[4], **options})
        return real(*args, **options)

    monkeypatch.setattr(repairing, "repair", spy)
    return calls


def _repair_payload(tiny: Instance, **fields: Any) -> dict[str, Any]:
    plan, disruption, repaired = _case(tiny)
    return {"instance": tiny.to_json(), "baseline": plan.to_json(), "disruption": disruption.to_json(),
            "method": "right-shift", "budget": 1.0, "plan": repaired.to_json(), **fields}


def test_a_repair_recorded_without_its_options_replays_with_the_documented_defaults(
        tmp_path: Path, tiny: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """The oldest form (before seeds, workers, effort, tolerance, deterministic limits, streams and first edits
    were recorded; the controller still records no seed): seed 0, one worker, effort 1, tolerance 0, wall time,
    one stream, the re-dispatch first edit."""
    log = ExecutionLog(FsStore(tmp_path), "old")
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload=_repair_payload(tiny))
    calls = _spy(monkeypatch)
    (step,) = replay_log(log).steps
    assert step.parity, step.detail
    assert calls == [{"method": "right-shift", "budget": 1.0, "seed": 0, "workers": 1, "effort": 1.0,
                      "tolerance": 0.0, "deterministic": False, "streams": 1, "first_edit": "redispatch"}]


def test_a_repairs_recorded_options_are_passed_back(tmp_path: Path, tiny: Instance,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """What the payload says at its top wins over its metrics' limits."""
    log = ExecutionLog(FsStore(tmp_path), "opts")
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload=_repair_payload(
        tiny, seed=3, workers=2, effort=1.5, tolerance=0.1, deterministic=False,
        limits={"search_streams": 2, "first_edit": "tabu"},
        metrics={"limits": {"deterministic": True, "search_streams": 1}}))
    calls = _spy(monkeypatch)
    (step,) = replay_log(log).steps
    assert step.parity, step.detail
    assert calls == [{"method": "right-shift", "budget": 1.0, "seed": 3, "workers": 2, "effort": 1.5,
                      "tolerance": 0.1, "deterministic": False, "streams": 2, "first_edit": "tabu"}]


@pytest.mark.parametrize(("fields", "deterministic", "streams"), [
    ({"deterministic": True}, True, 1),
    ({"metrics": {"limits": {"deterministic": True, "search_streams": 3}}}, True, 3),  # the controller's form
    ({"metrics": {"limits": {"deterministic": False}}}, False, 1),
    ({"metrics": {"limits": {}}}, False, 1),
    ({"deterministic": True, "limits": {}, "metrics": {"limits": {"search_streams": 2}}}, True, 2),
])
def test_deterministic_limits_and_streams_are_read_where_the_log_holds_them(
        tmp_path: Path, tiny: Instance, monkeypatch: pytest.MonkeyPatch, fields: dict[str, Any],
        deterministic: bool, streams: int) -> None:
    log = ExecutionLog(FsStore(tmp_path), "limits")
    log.append(EventType.REPAIR_FINISHED, payload=_repair_payload(tiny, **fields))
    calls = _spy(monkeypatch)
    assert replay_log(log).parity
    assert (calls[0]["deterministic"], calls[0]["streams"]) == (deterministic, streams)


def test_a_repair_recorded_by_committed_versions_replays_with_parity(tmp_path: Path, tiny: Instance) -> None:
    """The form the log benchmark writes: the plan in force and the result named by version, not inline."""
    plan, disruption, repaired = _case(tiny)
    log = ExecutionLog(FsStore(tmp_path), "versions")
    v1 = log.commit_plan(plan.to_json())
    v2 = log.commit_plan(repaired.to_json())
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload={
        "instance": tiny.to_json(), "baseline_version": v1,
        "disruption": disruption.to_json(), "method": "right-shift", "budget": 1.0, "result_version": v2})
    (step,) = replay_log(log).steps
    assert step.parity, step.detail
    assert (step.drift["makespan_recorded"], step.drift["makespan_replayed"]) == (repaired.makespan,) * 2


def _frozen_moved(tiny: Instance) -> tuple[Schedule, Disruption, Schedule]:
    """The plan in force, the disruption, and the repair with its first operation (started at 0, before the
    disruption at 2) one unit later: wrong only against the plan in force, which tells what had started."""
    plan, disruption, repaired = _case(tiny)
    doc = repaired.to_json()
    first = next(o for o in doc["operations"] if (o["job"], o["step"]) == (0, 0))
    first["start"], first["end"] = first["start"] + 1, first["end"] + 1
    return plan, disruption, Schedule.model_validate(doc)


def test_a_verdict_that_depends_on_the_baseline_replays_with_it_inline_or_by_version(
        tmp_path: Path, tiny: Instance) -> None:
    plan, disruption, moved = _frozen_moved(tiny)
    report = validate(tiny, moved, disruption=disruption, baseline=plan)
    assert [v.code.value for v in report.violations] == ["frozen_moved"]
    assert validate(tiny, moved, disruption=disruption).valid  # without the baseline the move is not seen
    log = ExecutionLog(FsStore(tmp_path), "base")
    v1 = log.commit_plan(plan.to_json())
    common = {"instance": tiny.to_json(), "plan": moved.to_json(), "disruption": disruption.to_json(),
              "report": report.to_json()}
    log.append(EventType.VALIDATION_FAILED, node_id="inline", payload={**common, "baseline": plan.to_json()})
    log.append(EventType.VALIDATION_FAILED, node_id="version", payload={**common, "baseline_version": v1})
    steps = replay_log(log).steps
    assert [(s.node_id, s.parity, s.drift["valid_replayed"]) for s in steps] == [("inline", True, False),
                                                                                  ("version", True, False)]


def test_inputs_that_cannot_be_rebuilt_are_named(tmp_path: Path, tiny: Instance) -> None:
    payload = _repair_payload(tiny)
    log = ExecutionLog(FsStore(tmp_path), "broken")
    log.append(EventType.VALIDATION_PASSED, node_id="a", payload={"instance": "tiny", "plan": payload["plan"],
                                                                  "report": {"valid": True}})
    log.append(EventType.REPAIR_FINISHED, node_id="b", payload={**payload, "disruption": None})
    log.append(EventType.REPAIR_FINISHED, node_id="c", payload={k: v for k, v in payload.items() if k != "plan"})
    log.append(EventType.REPAIR_FINISHED, node_id="d", payload={**payload, "method": "nope"})
    steps = replay_log(log).steps
    assert [(s.node_id, s.parity, s.detail, s.drift) for s in steps[:3]] == [
        ("a", False, "cannot rebuild inputs: payload lacks instance", {}),
        ("b", False, "cannot rebuild inputs: payload lacks disruption", {}),
        ("c", False, "cannot rebuild inputs: payload lacks plan or result_version", {})]
    last = steps[3]
    assert not last.parity and last.drift == {"error": "InputError"}
    assert last.detail.startswith("re-run failed: ") and "nope" in last.detail


def test_each_instance_of_a_log_is_rebuilt_for_its_own_steps(tmp_path: Path, tiny: Instance, ft06: Instance) -> None:
    """Instances are read once per distinct reference, one bundled by name, one inline."""
    log = ExecutionLog(FsStore(tmp_path), "two")
    for ref, instance in (({"name": "ft06"}, ft06), (tiny.to_json(), tiny), ({"name": "ft06"}, ft06)):
        plan = dispatch(instance)
        log.append(EventType.VALIDATION_PASSED, node_id=instance.name, payload={
            "instance": ref, "plan": plan.to_json(), "report": validate(instance, plan).to_json()})
    steps = replay_log(log).steps
    assert [(s.node_id, s.parity, s.detail) for s in steps] == [
        (name, True, "verdict valid, 0 violations, identical") for name in ("ft06", "tiny", "ft06")]


def test_a_malformed_field_is_reported_as_drift_and_the_other_steps_still_replay(tmp_path: Path,
                                                                                 tiny: Instance) -> None:
    """A field present but not of its contract's form (a plan that is no schedule, a seed of null) is that step's
    drift with the reason; it used to end the whole replay with a traceback, hiding every other step's parity."""
    payload = _repair_payload(tiny)
    log = ExecutionLog(FsStore(tmp_path), "malformed")
    log.append(EventType.VALIDATION_PASSED, node_id="plan", payload={
        "instance": tiny.to_json(), "plan": {"operations": "garbage"}, "report": {"valid": True}})
    log.append(EventType.REPAIR_FINISHED, node_id="seed", payload={**payload, "seed": None})
    log.append(EventType.REPAIR_FINISHED, node_id="good", payload=payload)
    steps = replay_log(log).steps
    assert [(s.node_id, s.parity, s.drift.get("error")) for s in steps] == [
        ("plan", False, "ValidationError"), ("seed", False, "TypeError"), ("good", True, None)]
    plan, seed = steps[0].detail, steps[1].detail
    assert plan.startswith("re-run failed: ValidationError: ") and "Schedule" in plan and "\n" not in plan
    assert seed.startswith("re-run failed: TypeError: ") and "NoneType" in seed
