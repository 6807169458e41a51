"""What replay reports of each step and of the run (alas_argo/log/replay.py): the drift figures and the one-line
detail of validations and repairs, the plan in force and the retractions, the summary `alas replay` prints."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from alas_argo.jssp.dispatching import DispatchingRule, dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.validate import validate
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.replay import ReplayReport, StepParity, replay_log


def _validations(tmp_path: Path, tiny: Instance) -> ExecutionLog:
    """Four recorded verdicts on tiny's plan under a breakdown that its first operation on machine 1 runs into:
    one faithful valid, one faithful invalid, one with a message reworded, one claiming the invalid plan valid."""
    plan = dispatch(tiny, DispatchingRule.MWKR)
    disruption = generate_disruption(tiny, plan, "breakdown", seed=1)
    valid = validate(tiny, plan).to_json()
    invalid = validate(tiny, plan, disruption=disruption).to_json()
    reworded = {**invalid, "violations": [{**v, "message": "reworded"} for v in invalid["violations"]]}
    log = ExecutionLog(FsStore(tmp_path), "verdicts")
    base = {"instance": tiny.to_json(), "plan": plan.to_json()}
    hit = {**base, "disruption": disruption.to_json()}
    log.append(EventType.VALIDATION_PASSED, node_id="valid", payload={**base, "report": valid})
    log.append(EventType.VALIDATION_FAILED, node_id="invalid", payload={**hit, "report": invalid})
    log.append(EventType.VALIDATION_FAILED, node_id="reworded", payload={**hit, "report": reworded})
    log.append(EventType.VALIDATION_PASSED, node_id="forged", payload={**hit, "report": valid})
    log.append(EventType.VALIDATION_FAILED, node_id="bare", payload={**hit, "report": {"valid": False}})
    return log


def test_each_validation_step_reports_its_verdicts_counts_and_what_differs(tmp_path: Path, tiny: Instance
                                                                           ) -> None:
    log = _validations(tmp_path, tiny)
    (failed,) = [e for e in log.events() if e.node_id == "invalid"]
    codes = [v["code"] for v in failed.payload["report"]["violations"]]
    assert codes == ["downtime_overlap"]  # the case: one violation under the breakdown, none without it
    steps = {s.node_id: s for s in replay_log(log).steps}
    assert {k: (s.parity, s.detail) for k, s in steps.items()} == {
        "valid": (True, "verdict valid, 0 violations, identical"),
        "invalid": (True, "verdict invalid, 1 violations, identical"),
        "reworded": (False, "same verdict and violation codes; messages or scopes differ"),
        "forged": (False, "verdict True -> False, codes [] -> ['downtime_overlap']"),
        # a recorded report without its violations is compared as having none
        "bare": (False, "verdict False -> False, codes [] -> ['downtime_overlap']")}
    assert steps["valid"].drift == {"valid_recorded": True, "valid_replayed": True, "violations_recorded": 0,
                                    "violations_replayed": 0}
    assert steps["reworded"].drift == {"valid_recorded": False, "valid_replayed": False, "violations_recorded": 1,
                                       "violations_replayed": 1}
    assert steps["forged"].drift == {"valid_recorded": True, "valid_replayed": False, "violations_recorded": 0,
                                     "violations_replayed": 1}


def _repair_log(tmp_path: Path, tiny: Instance, edit: Any = None) -> tuple[ExecutionLog, dict[str, Any]]:
    """A right-shift repair of tiny recorded inline, its recorded plan passed through ``edit``."""
    plan = dispatch(tiny, DispatchingRule.MWKR)
    disruption = generate_disruption(tiny, plan, "breakdown", seed=1)
    result = repair(tiny, plan, disruption, "right-shift", 1.0, seed=0, workers=1)
    recorded = result.schedule.to_json()
    if edit is not None:
        edit(recorded)
    log = ExecutionLog(FsStore(tmp_path), "repair")
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload={
        "instance": tiny.to_json(), "baseline": plan.to_json(), "disruption": disruption.to_json(),
        "method": "right-shift", "budget": 1.0, "seed": 0, "workers": 1, "plan": recorded})
    return log, result.schedule.to_json()


def test_a_reproduced_repair_reports_its_makespan_and_no_drift(tmp_path: Path, tiny: Instance) -> None:
    log, replayed = _repair_log(tmp_path, tiny)
    (step,) = replay_log(log).steps
    assert step.parity and step.detail == f"right-shift: same plan, makespan {replayed['makespan']}"
    assert step.drift == {"makespan_recorded": replayed["makespan"], "makespan_replayed": replayed["makespan"],
                          "operations_differing": 0, "start_shift_vs_recorded": 0, "valid": True}


def test_a_repair_that_drifts_counts_every_operation_placed_differently_and_the_absolute_shift(
        tmp_path: Path, tiny: Instance) -> None:
    """Recorded: one operation 3 later, one 2 earlier, one missing, the makespan claimed 1 longer: three
    operations differ; the shift (3 + 2) is over the operations both plans hold."""
    def edit(doc: dict[str, Any]) -> None:
        later, earlier, gone = doc["operations"][-1], doc["operations"][-2], doc["operations"][0]
        later["start"], later["end"] = later["start"] + 3, later["end"] + 3
        earlier["start"], earlier["end"] = earlier["start"] - 2, earlier["end"] - 2
        doc["operations"].remove(gone)
        doc["makespan"] += 1

    log, replayed = _repair_log(tmp_path, tiny, edit)
    (step,) = replay_log(log).steps
    made = replayed["makespan"]
    assert not step.parity
    assert step.detail == (f"right-shift: makespan {made + 1} -> {made}, 3 operations placed differently "
                           f"(shift 5), replayed plan valid")
    assert step.drift == {"makespan_recorded": made + 1, "makespan_replayed": made, "operations_differing": 3,
                          "start_shift_vs_recorded": 5, "valid": True}


def test_the_report_holds_the_plan_in_force_and_marks_steps_of_a_retracted_version(tmp_path: Path,
                                                                                  tiny: Instance) -> None:
    plan = dispatch(tiny, DispatchingRule.MWKR)
    other = dispatch(tiny, DispatchingRule.SPT)
    log = ExecutionLog(FsStore(tmp_path), "retracted")
    v1, v2 = log.commit_plan(plan.to_json()), log.commit_plan(other.to_json())
    for version, schedule in ((v1, plan), (v2, other)):
        log.append(EventType.VALIDATION_PASSED, node_id=f"v{version}", payload={
            "instance": tiny.to_json(), "plan_version": version, "report": validate(tiny, schedule).to_json()})
    retraction = log.retract(v2)
    seen: list[StepParity] = []
    report = replay_log(ExecutionLog(FsStore(tmp_path), "retracted"), on_step=seen.append)
    assert seen == report.steps and [s.node_id for s in seen] == ["v1", "v2"]
    assert [s.detail for s in report.steps] == [
        "verdict valid, 0 violations, identical",
        f"verdict valid, 0 violations, identical (v2 since retracted by event {retraction.seq})"]
    assert report.parity and (report.current_version, report.retracted) == (v1, [v2])


def _step(kind: str, parity: bool) -> StepParity:
    return StepParity(seq=1, kind=kind, node_id=None, parity=parity, detail="", seconds=0.0)


def test_the_summary_counts_each_kind_and_names_the_state() -> None:
    steps = [_step("validation", True), _step("validation", False), _step("repair", True)]
    drift = ReplayReport(run_id="r", steps=steps, skipped=2, seconds=1.234, current_version=3, retracted=[1, 2])
    assert drift.summary() == ("run r: DRIFT: 1/2 validations identical, 1/1 repairs identical, 2 repairs skipped; "
                               "current v3, retracted v1, v2 (1.23 s)")
    assert drift.to_json()["parity"] is False and drift.to_json()["current_version"] == 3
    clean = ReplayReport(run_id="s", steps=steps[:1], seconds=0.5)
    assert clean.summary() == "run s: parity: 1/1 validations identical, 0/0 repairs identical; no plan in force " \
                              "(0.50 s)"


def test_skipped_repairs_are_counted_and_the_steps_after_them_still_replay(tmp_path: Path, tiny: Instance) -> None:
    log, _ = _repair_log(tmp_path, tiny)
    (event,) = log.events()
    plan = dispatch(tiny, DispatchingRule.MWKR)
    check = {"instance": tiny.to_json(), "plan": plan.to_json(), "report": validate(tiny, plan).to_json()}
    log.append(EventType.VALIDATION_PASSED, node_id="between", payload=check)
    log.append(EventType.REPAIR_FINISHED, node_id="again", payload=event.payload)
    log.append(EventType.VALIDATION_PASSED, node_id="after", payload=check)
    report = replay_log(log, repairs=False)
    assert report.skipped == 2 and [s.node_id for s in report.steps] == ["between", "after"]
    assert report.summary().startswith("run repair: parity: 2/2 validations identical, 0/0 repairs identical, "
                                       "2 repairs skipped; ")


def test_a_repair_whose_result_was_retracted_is_marked(tmp_path: Path, tiny: Instance) -> None:
    """A repair recorded by version (``result_version``), its result withdrawn by a compensation."""
    plan = dispatch(tiny, DispatchingRule.MWKR)
    disruption = generate_disruption(tiny, plan, "breakdown", seed=1)
    result = repair(tiny, plan, disruption, "right-shift", 1.0, seed=0, workers=1)
    log = ExecutionLog(FsStore(tmp_path), "compensated")
    v1, v2 = log.commit_plan(plan.to_json()), log.commit_plan(result.schedule.to_json())
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload={
        "instance": tiny.to_json(), "baseline_version": v1, "disruption": disruption.to_json(),
        "method": "right-shift", "budget": 1.0, "result_version": v2})
    retraction = log.retract(v2)
    report = replay_log(log)
    (step,) = report.steps
    assert step.parity and step.detail == (f"right-shift: same plan, makespan {result.makespan} "
                                           f"(v2 since retracted by event {retraction.seq})")
    assert (report.current_version, report.retracted) == (v1, [v2])


def test_the_seconds_reported_lie_inside_the_call(tmp_path: Path, tiny: Instance) -> None:
    """Each step's time within the whole replay's, and that within the time the call took as seen from outside
    (rounding is monotonic, so neither comparison depends on how fast the machine is)."""
    log = _validations(tmp_path, tiny)
    started = time.perf_counter()
    report = replay_log(log)
    outside = round(time.perf_counter() - started, 4)
    assert all(0 <= s.seconds <= report.seconds for s in report.steps)
    assert 0 <= report.seconds <= outside
