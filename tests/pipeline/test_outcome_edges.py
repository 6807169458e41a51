"""What a run reports is its log's: every figure of the summary (`alas run --json`) read back from the log, a
failed run's node, errors and human fallback, a resumed run's latest invocation, and the final verdict of the
independent validator judged against the disruption the final plan repaired."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alas_argo.agents.feedback import patch_plan
from alas_argo.agents.roles import RepairerRole
from alas_argo.errors import InfeasibleError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.result import RepairResult
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType, ExecutionLog
from alas_argo.pipeline import RunConfig, Variant, run_pipeline
from alas_argo.pipeline.handoff import handoff
from alas_argo.pipeline.inputs import run_inputs
from alas_argo.pipeline.outcome import is_finished, read_result
from tests.pipeline.pipeline_helpers import FT06, TWO_BREAKDOWNS, open_log, plan_of


def _observed(log: ExecutionLog) -> list[Disruption]:
    return [Disruption.model_validate(e.payload["disruption"]) for e in log.events()
            if e.type is EventType.DISRUPTION_OBSERVED]



def _later_repairs_return(monkeypatch: pytest.MonkeyPatch, plan: Callable[[Schedule], Schedule]) -> None:
    """Every repair after the first returns ``plan(its baseline)`` as its schedule, whatever it repaired."""
    real = RepairerRole.repair_disruption
    calls = [0]

    def repair(self: RepairerRole, instance: Instance, baseline: Schedule, disruption: Disruption) -> RepairResult:
        calls[0] += 1
        result = real(self, instance, baseline, disruption)
        return result if calls[0] == 1 else result.model_copy(update={"schedule": plan(baseline)})

    monkeypatch.setattr(RepairerRole, "repair_disruption", repair)

def test_every_figure_of_the_summary_is_the_logs(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    result = run_pipeline(TWO_BREAKDOWNS, log)
    assert result.succeeded and result.run is not None
    finished = [e.payload["metrics"] for e in log.events() if e.type is EventType.REPAIR_FINISHED]
    repairs: list[dict[str, Any]] = []
    for (a, b), metrics in zip(((1, 2), (2, 3)), finished, strict=True):
        diff = log.diff(a, b)
        repairs.append({**metrics, "version": b, "baseline_version": a, "makespan": log.plan(b)["makespan"],
                        "baseline_makespan": log.plan(a)["makespan"], "moved_operations": len(diff.moved_operations),
                        "total_start_shift": diff.total_start_shift})
    last = repairs[-1]
    assert result.summary() == {
        "run_id": "r", "status": "succeeded", "instance": "ft06", "size": "6x6", "planner": "heuristic",
        "variant": "full", "makespan_before": log.plan(1)["makespan"], "makespan_after": log.plan(3)["makespan"],
        "upper_bound": 55, "disruptions": 2, "moved_operations": last["moved_operations"],
        "total_start_shift": last["total_start_shift"], "edit_radius": finished[1]["edit_radius"],
        "repair_seconds": finished[1]["seconds"], "repair_method": "lcrp", "fallback": False, "repairs": repairs,
        "versions_committed": 3, "final_version": 3, "final_valid": True, "final_violations": [],
        "failed_node": None, "errors": {}, "escalations": [], "compensated": [], "notes": [],
        "feedback_trace": [], "feedback_rounds": [], "human_fallback": None, "deterministic": True, "ran": True,
        "seconds": round(result.seconds, 3)}
    # The two repairs moved something, with different figures: the summary's are the last one's.
    assert repairs[0]["version"] == 2 and repairs[1]["baseline_version"] == 2
    assert last["moved_operations"] > 0 and result.disruptions == _observed(log)
    assert result.baseline == plan_of(log, 1) and result.final == plan_of(log, 3) and result.versions == [1, 2, 3]
    # Read again from the log alone (no runtime result): the same figures, nothing ran.
    again = read_result(open_log(tmp_path), TWO_BREAKDOWNS, FT06, disruptions=2, seconds=result.seconds)
    assert again.summary() == {**result.summary(), "ran": False} and (again.run, again.resumed) == (None, False)
    # Fewer disruptions asked for than the log holds: the reader reports as many, no more.
    one = read_result(open_log(tmp_path), TWO_BREAKDOWNS, FT06, disruptions=1, seconds=0.0)
    assert one.disruptions == _observed(log)[:1] and [r["version"] for r in one.repairs] == [2]


def test_a_failed_run_reports_its_node_errors_and_fallback_from_the_log(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    config = RunConfig(instance="ft06", planner="heuristic", faults=3, seed=2, variant=Variant.NO_REPAIR,
                       max_revalidations=2)
    result = run_pipeline(config, log)
    assert result.run is not None and not result.succeeded
    summary = result.summary()
    assert (summary["status"], summary["failed_node"], summary["ran"]) == ("failed", "check_optimized", True)
    assert list(summary["errors"]) == ["check_optimized"] and "LoopGuardTripped" in summary["errors"]["check_optimized"]
    assert summary["errors"] == {
        str(e.node_id): e.payload["error"] for e in log.events() if e.type is EventType.NODE_FAILED}
    assert (summary["makespan_before"], summary["makespan_after"], summary["final_version"]) == (None, None, None)
    assert (summary["versions_committed"], summary["final_valid"], summary["final_violations"]) == (0, False, [])
    assert summary["compensated"] == [] and summary["repairs"] == [] and summary["moved_operations"] is None
    expected = handoff(log, "check_optimized")
    assert expected is not None and result.handoff == expected
    assert summary["human_fallback"] == {"node": "check_optimized", "reason": expected["reason"],
                                         "best_plan": expected["best"]["source"],
                                         "best_plan_violations": expected["best"]["violations"]}
    # The plan check_plan passed (before the faults) is the best so far; the reason is the faulty one's.
    assert (expected["best"]["source"], expected["best"]["violations"]) == (
        "the plan check_plan checked (iteration 1)", 0)
    assert expected["reason"].startswith("check_optimized gave up: the plan still had 4 violation(s)")
    assert not is_finished(log)


def test_a_resumed_run_reports_its_latest_invocation_and_once_finished_is_not_run_again(tmp_path: Path) -> None:
    """A run that gave up (human fallback) and was resumed with an edited plan: the result is the latest
    invocation's (no error, no failed node of the first one); asked again, the finished run is not run again."""
    config = RunConfig(instance="ft06", planner="simulated", optimizer="none", variant=Variant.NO_REPAIR,
                       feedback_rounds=0, seed=3, time_limit=1, repair_budget=1)
    log = open_log(tmp_path)
    failed = run_pipeline(config, log)
    assert failed.failed_node == "check_plan" and list(failed.errors) == ["check_plan"]
    assert failed.handoff is not None and not is_finished(log)
    edited = patch_plan(FT06, Schedule.model_validate(failed.handoff["best"]["plan"]))
    resumed = run_pipeline(config, open_log(tmp_path), agent_spec={"manual_plan": edited.to_json()})
    assert resumed.succeeded and resumed.resumed and resumed.run is not None
    assert (resumed.failed_node, resumed.errors, resumed.handoff, resumed.compensated) == (None, {}, None, [])
    assert resumed.final == edited and resumed.final_version == 1
    assert is_finished(open_log(tmp_path))
    events = len(open_log(tmp_path).events())
    again = run_pipeline(config, open_log(tmp_path))
    assert again.run is None and len(open_log(tmp_path).events()) == events
    assert {**again.summary(), "seconds": 0} == {**resumed.summary(), "seconds": 0, "ran": False}


def test_the_final_verdict_judges_the_last_repair_against_its_own_disruption(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the validator in the loop, a second repair that ignores its disruption is committed; the verdict
    users see is the independent validator's on that plan, against the second disruption and the plan it
    repaired (v2), not the first one's nor no disruption at all (against those the plan is valid)."""
    _later_repairs_return(monkeypatch, lambda baseline: baseline)  # the second ignores its disruption
    log = open_log(tmp_path)
    result = run_pipeline(TWO_BREAKDOWNS.model_copy(update={"variant": Variant.NO_VALIDATOR}), log)
    assert result.run is not None and result.status.value == "succeeded" and not result.succeeded
    first, second = _observed(log)
    v1, v2, v3 = (plan_of(log, v) for v in (1, 2, 3))
    assert v3 == v2 and result.final_version == 3
    report = validate(FT06, v3, disruption=second, baseline=v2)
    assert not report.valid and result.final_violations == sorted({str(v.code) for v in report.violations})
    assert result.final_valid is False and result.summary()["final_valid"] is False
    assert validate(FT06, v3, disruption=first, baseline=v1).valid and validate(FT06, v3).valid


def test_a_repair_the_recovery_patched_is_summarized_from_the_log(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The second repair fails for good, so recovery patches it: the escalation is reported, and its moved
    operations and start shift come from the log's versions (the patch records its method only)."""
    real = RepairerRole.repair_disruption
    calls = [0]

    def first_only(self: RepairerRole, instance: Instance, baseline: Schedule,
                   disruption: Disruption) -> RepairResult:
        calls[0] += 1
        if calls[0] > 1:
            raise InfeasibleError("no plan for this one (injected by the test)")
        return real(self, instance, baseline, disruption)

    monkeypatch.setattr(RepairerRole, "repair_disruption", first_only)
    log = open_log(tmp_path)
    result = run_pipeline(TWO_BREAKDOWNS, log)
    assert result.succeeded and result.run is not None
    summary = result.summary()
    assert summary["escalations"] == [["repair_2", "patch"]] and result.escalations == [("repair_2", "patch")]
    # A node that failed and was recovered is no error of the run (its retry and escalation events name one).
    assert summary["errors"] == {} and summary["failed_node"] is None
    diff = log.diff(2, 3)
    assert diff.moved_operations and summary["repairs"][1] == {
        "method": "patch", "version": 3, "baseline_version": 2, "makespan": log.plan(3)["makespan"],
        "baseline_makespan": log.plan(2)["makespan"], "moved_operations": len(diff.moved_operations),
        "total_start_shift": diff.total_start_shift}
    assert (summary["repair_method"], summary["edit_radius"], summary["repair_seconds"], summary["fallback"]) == (
        "patch", None, None, None)
    assert summary["moved_operations"] == len(diff.moved_operations) and summary["final_valid"] is True


def test_a_run_that_never_started_reads_as_failed_with_nothing(tmp_path: Path) -> None:
    """Its inputs recorded and no more (a process killed before the runtime's first event): nothing to report,
    no crash."""
    log = open_log(tmp_path)
    log.append(EventType.RUN_INPUTS, payload=run_inputs(TWO_BREAKDOWNS, FT06, []))
    result = read_result(log, TWO_BREAKDOWNS, FT06, disruptions=2, seconds=0.0)
    assert (str(result.status), result.failed_node, result.errors, result.versions) == ("failed", None, {}, [])
    assert result.final is None and result.baseline is None and result.handoff is None
    assert not is_finished(log)


def test_the_final_verdict_holds_the_last_repair_to_the_past_of_the_plan_it_repaired(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every machine breaks down at 10, then machine 0 at 40; the second repair hands back the baseline (v1)
    instead of a repair of v2. Operations that had started by 40 in v2 are no longer where v2 had them: judged
    against v2 (the plan that repair repaired) a frozen operation moved; against v1, or without a baseline, not."""
    given = tmp_path / "d.json"
    given.write_text(json.dumps([
        {"time": 10, "events": [{"kind": "machine_breakdown", "machine": m, "start": 10, "duration": 5}
                                for m in range(6)]},
        {"time": 40, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 40, "duration": 1}]}]))
    _later_repairs_return(monkeypatch, lambda baseline: plan_of(log, 1))
    log = open_log(tmp_path)
    # The codes below are those of the re-dispatch's first repair (v2) of this case.
    config = RunConfig(instance="ft06", planner="heuristic", disrupt=str(given), repair_budget=1,
                       variant=Variant.NO_VALIDATOR, repair_first_edit="redispatch")
    result = run_pipeline(config, log)
    second = _observed(log)[1]
    v1, v2, v3 = (plan_of(log, v) for v in (1, 2, 3))
    assert v3 == v1 and result.final_version == 3

    def codes(baseline: Schedule | None) -> list[str]:
        return sorted({str(v.code) for v in validate(FT06, v3, disruption=second, baseline=baseline).violations})

    assert result.final_violations == codes(v2) == ["downtime_overlap", "frozen_moved"] and not result.final_valid
    assert codes(v1) == codes(None) == ["downtime_overlap"]


def test_a_version_committed_outside_the_blueprint_is_judged_on_its_own(tmp_path: Path) -> None:
    """A finished run whose log got another version later (a restore, or the controller's commit): the result
    is that version's, validated without a disruption (no blueprint commit node names it)."""
    log = open_log(tmp_path)
    assert run_pipeline(TWO_BREAKDOWNS, log).succeeded
    assert log.restore(1) == 4
    again = run_pipeline(TWO_BREAKDOWNS, open_log(tmp_path))
    assert again.run is None and again.final_version == 4 and again.final == plan_of(log, 1)
    assert again.final_valid and again.succeeded and again.summary()["makespan_after"] == log.plan(1)["makespan"]
    assert [r["version"] for r in again.repairs] == [2, 3] and again.versions == [1, 2, 3, 4]


def test_the_agents_notes_are_the_runs(tmp_path: Path) -> None:
    """Which role fell back to what, as the agents node recorded it: an LLM planner without an endpoint."""
    log = open_log(tmp_path)
    result = run_pipeline(RunConfig(instance="ft06", planner="llm", time_limit=1), log)
    assert result.succeeded
    recorded = log.idempotency_get("r:agents")
    assert recorded is not None and result.notes == recorded["output"]["notes"]
    assert result.notes and all("'llm' unavailable" in n for n in result.notes)
    assert result.summary()["notes"] == result.notes
