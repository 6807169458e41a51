"""Replay: recorded validations and repairs are re-run from the log; parity and drift are reported."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.jssp.dispatching import DispatchingRule, dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.jssp.validate import validate
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.replay import replay_log
from alas_argo.log.store import Store


def _record_run(store: Store, tiny: Instance, run: str = "rp") -> ExecutionLog:
    """A run shaped like the pipeline's: plan, validate (by version), disrupt, repair, validate (inline)."""
    log = ExecutionLog(store, run)
    plan = dispatch(tiny, DispatchingRule.MWKR)
    v1 = log.commit_plan(plan.to_json())
    report = validate(tiny, plan)
    log.append(EventType.VALIDATION_PASSED, node_id="check", payload={
        "instance": tiny.to_json(), "plan_version": v1, "baseline_version": None, "disruption": None,
        "report": report.to_json()})
    disruption = generate_disruption(tiny, plan, "breakdown", seed=1)
    result = repair(tiny, plan, disruption, "right-shift", 1.0, seed=0, workers=1)
    v2 = log.commit_plan(result.schedule.to_json())
    log.append(EventType.REPAIR_FINISHED, node_id="repair", payload={
        "instance": tiny.to_json(), "baseline": plan.to_json(), "disruption": disruption.to_json(),
        "method": "right-shift", "budget": 1.0, "seed": 0, "workers": 1, "plan": result.schedule.to_json(),
        "metrics": result.metrics()})
    # the stale plan checked against the disruption: a recorded negative verdict must replay as negative
    stale = validate(tiny, plan, disruption=disruption, baseline=plan)
    log.append(EventType.VALIDATION_FAILED if not stale.valid else EventType.VALIDATION_PASSED, node_id="recheck",
               payload={"instance": tiny.to_json(), "plan": plan.to_json(), "baseline": plan.to_json(),
                        "disruption": disruption.to_json(), "report": stale.to_json()})
    log.append(EventType.VALIDATION_PASSED, node_id="recheck", payload={
        "instance": tiny.to_json(), "plan_version": v2, "baseline_version": v1,
        "disruption": disruption.to_json(), "report": validate(tiny, result.schedule, disruption=disruption,
                                                                baseline=plan).to_json()})
    return log


def test_faithful_log_replays_with_parity(store: Store, tiny: Instance) -> None:
    log = _record_run(store, tiny)
    report = replay_log(ExecutionLog(store, "rp"))
    assert report.parity, report.summary()
    assert [(s.kind, s.node_id) for s in report.steps] == [
        ("validation", "check"), ("repair", "repair"), ("validation", "recheck"), ("validation", "recheck")]
    assert report.steps[2].drift["valid_replayed"] is False  # the negative verdict was reproduced
    assert report.steps[1].drift["operations_differing"] == 0
    assert "parity" in report.summary() and report.to_json()["parity"] is True
    assert replay_log(log, repairs=False).skipped == 1


def _tampered(store: Store, tiny: Instance, edit: Any) -> ExecutionLog:
    """Re-record the faithful run into a second run with one payload edited by ``edit``."""
    source = _record_run(store, tiny, "src")
    log = ExecutionLog(store, "bad")
    plans = {v: source.plan(v) for v in source.versions()}
    for event in source.events():
        if event.type is EventType.PLAN_COMMITTED:
            log.commit_plan(plans[event.payload["version"]])
        else:
            payload = dict(event.payload)
            edit(event, payload)
            log.append(event.type, payload=payload, node_id=event.node_id)
    return log


def test_a_recorded_verdict_that_does_not_reproduce_is_drift(store: Store, tiny: Instance) -> None:
    def flip(event: Any, payload: dict[str, Any]) -> None:
        if event.node_id == "check":
            payload["report"] = {**payload["report"], "valid": False}

    report = replay_log(_tampered(store, tiny, flip))
    assert not report.parity
    bad = [s for s in report.steps if not s.parity]
    assert [s.node_id for s in bad] == ["check"] and "verdict False -> True" in bad[0].detail


def test_a_recorded_repair_plan_that_does_not_reproduce_is_drift(store: Store, tiny: Instance) -> None:
    def shift(event: Any, payload: dict[str, Any]) -> None:
        if event.type is EventType.REPAIR_FINISHED:
            ops = [dict(o) for o in payload["plan"]["operations"]]
            ops[-1]["start"] += 5
            ops[-1]["end"] += 5
            payload["plan"] = {**payload["plan"], "operations": ops, "makespan": payload["plan"]["makespan"] + 5}

    report = replay_log(_tampered(store, tiny, shift))
    (step,) = [s for s in report.steps if s.kind == "repair"]
    assert not step.parity and step.drift["operations_differing"] == 1
    assert step.drift["start_shift_vs_recorded"] == 5
    assert step.drift["makespan_recorded"] - step.drift["makespan_replayed"] == 5
    assert step.detail.endswith("replayed plan valid")  # deterministic limits: the drift is the log's


@pytest.mark.parametrize(("method", "said"), [("lcrp", True), ("right-shift", False)])
def test_drift_of_a_searching_repair_under_wall_clock_limits_says_so(store: Store, tiny: Instance, method: str,
                                                                       said: bool) -> None:
    # `alas run --wall-clock` records deterministic false; a repair that searches may then differ on a re-run,
    # and the replay said DRIFT without a word on why. Right-shift does not search: its drift is the log's.
    def wall_clock(event: Any, payload: dict[str, Any]) -> None:
        if event.type is EventType.REPAIR_FINISHED:
            payload["deterministic"], payload["method"] = False, method
            payload["plan"] = {**payload["plan"], "operations": payload["plan"]["operations"][:-1]}

    report = replay_log(_tampered(store, tiny, wall_clock))
    (step,) = [s for s in report.steps if s.kind == "repair"]
    assert not step.parity
    note = "; recorded under wall-clock limits, which a re-run need not reproduce"
    assert step.detail.endswith(note) is said and step.detail.startswith(f"{method}: makespan ")


def test_missing_inputs_are_reported_not_skipped(store: Store, tiny: Instance) -> None:
    log = ExecutionLog(store, "thin")
    log.append(EventType.VALIDATION_PASSED, payload={"instance": {"name": "ft06"}, "report": {"valid": True}})
    log.append(EventType.VALIDATION_PASSED, payload={"instance": {"name": "ft06"}, "plan_version": 7,
                                                     "report": {"valid": True}})
    (first, second) = replay_log(log).steps
    assert not first.parity and "payload lacks plan or plan_version" in first.detail
    assert not second.parity and "no plan version 7" in second.detail


def test_pipeline_run_replays_with_parity(tmp_path: Any) -> None:
    """The lead's pipeline writes the payload contract; a real `alas run` replays with parity."""
    from alas_argo.cli import main
    from alas_argo.log.fs_store import FsStore

    root = tmp_path / "store"
    rc = main(["run", "ft06", "--planner", "heuristic", "--disrupt", "breakdown", "--time-limit", "1",
               "--repair-budget", "1", "--workers", "1", "--root", str(root), "--run-id", "pipe", "--quiet"])
    assert rc == 0
    report = replay_log(ExecutionLog(FsStore(root), "pipe"))
    kinds = {s.kind for s in report.steps}
    assert kinds == {"validation", "repair"} and report.parity, report.summary()


def _lcrp_record(store: Store, run: str, **options: Any) -> ExecutionLog:
    """A log holding one LCRP repair, recorded as the controller records it: la21, a 1 s plan, breakdown seed 1
    (a case whose plan on one search stream differs from its plan on two)."""
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.cpsat import SolveRequest, optimize

    la21 = get_instance("la21")
    plan = optimize(SolveRequest(la21, time_limit=1.0, seed=1)).schedule
    disruption = generate_disruption(la21, plan, "breakdown", seed=1)
    options.setdefault("first_edit", "redispatch")  # the case was chosen for the re-dispatch's search streams
    result = repair(la21, plan, disruption, "lcrp", 2.0, seed=1, **options)
    log = ExecutionLog(store, run)
    log.append(EventType.REPAIR_FINISHED, node_id="controller", payload={
        "instance": {"name": "la21"}, "baseline": plan.to_json(), "disruption": disruption.to_json(),
        "method": "lcrp", "budget": 2.0, "seed": 1, "workers": 2, "plan": result.schedule.to_json(),
        "metrics": result.metrics()})
    return log


def test_a_repair_on_two_search_streams_replays_on_two(store: Store) -> None:
    log = _lcrp_record(store, "two", streams=2)
    (event,) = list(log.events())
    assert event.payload["metrics"]["limits"]["search_streams"] == 2
    (step,) = replay_log(log).steps
    assert step.parity, step.detail


def test_a_repair_recorded_before_search_streams_replays_on_one(store: Store) -> None:
    """Logs written before the streams hold no ``search_streams``: their repairs ran one stream, whatever
    ``workers`` said, and replay runs one. (The same record on two streams gives another plan here.)"""
    old = _lcrp_record(store, "one", streams=1)
    again = ExecutionLog(store, "old")
    for event in old.events():
        payload = dict(event.payload)
        del payload["metrics"]["limits"]["search_streams"]
        again.append(event.type, payload=payload, node_id=event.node_id)
    (step,) = replay_log(again).steps
    assert step.parity, step.detail
    # The case tells the two apart: on two streams this repair gives another plan, which replay would report.
    (on_two,) = list(_lcrp_record(store, "two", streams=2).events())
    assert on_two.payload["plan"] != next(iter(old.events())).payload["plan"]


@pytest.mark.skipif(tabu_kernel() is None, reason="the compiled tabu search is not built: `pip install -e .` with a "
                    "C compiler")
def test_a_repair_with_the_tabu_first_edit_replays_with_it(store: Store) -> None:
    """The first edit is read back from the recorded limits: replayed without it, this repair gives another plan."""
    from alas_argo.jssp.catalog import get_instance

    la21 = get_instance("la21")
    plan = dispatch(la21, "mwkr")
    disruption = generate_disruption(la21, plan, "shock", seed=4)
    result = repair(la21, plan, disruption, "lcrp", 2.0, seed=1, effort=0.5, first_edit="tabu")
    log = ExecutionLog(store, "tabu")
    log.append(EventType.REPAIR_FINISHED, node_id="controller", payload={
        "instance": {"name": "la21"}, "baseline": plan.to_json(), "disruption": disruption.to_json(),
        "method": "lcrp", "budget": 2.0, "seed": 1, "workers": 1, "effort": 0.5, "deterministic": True,
        "plan": result.schedule.to_json(), "metrics": result.metrics()})
    assert result.limits["first_edit"] == "tabu"
    (step,) = replay_log(log).steps
    assert step.parity, step.detail
    default = repair(la21, plan, disruption, "lcrp", 2.0, seed=1, effort=0.5, first_edit="redispatch")
    assert default.schedule != result.schedule
    # Replayed where the compiled search is not built, the drift says why: the installation, not the log.
    with pytest.MonkeyPatch.context() as m:
        m.setattr("alas_argo.jssp.repair.tabu.kernel", lambda: None)
        (step,) = replay_log(log).steps
    assert not step.parity
    assert step.detail.endswith("; recorded with the compiled tabu first edit, which this installation does not "
                                "have (built at install when a C compiler is there): replayed without it")
