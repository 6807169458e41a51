"""The stages of `alas run` at their edges: a generated sequence of disruptions reproducible from (kind, seed,
plan in force) and revealed later each time, the replan rung re-solving with the full method and the run's
repair knobs, the patch rung, `alas-repair`'s disrupt step (the run's current version, none refused), a segment
past the run's last disruption, the commit's exactly-once key, and a compensation that has nothing to retract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from alas_argo.agents.registry import Role
from alas_argo.agents.roles import RepairerRole
from alas_argo.errors import ContractError, InfeasibleError, InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, carry_forward, generate_disruption
from alas_argo.jssp.faults import inject_faults
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.result import RepairResult
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType
from alas_argo.pipeline import RunConfig, Stages, Variant, run_pipeline
from alas_argo.pipeline.stages import retract_committed
from alas_argo.runtime.context import NodeContext
from tests.pipeline.pipeline_helpers import FT06, TWO_BREAKDOWNS, open_log, plan_of


def _ctx(node: str, **params: Any) -> NodeContext:
    return NodeContext(node_id=node, role=node.rstrip("_0123456789v"), attempt=1, run_id="r", workflow="w",
                       params=params)


def test_a_generated_sequence_is_reproducible_and_revealed_later_each_time(tmp_path: Path) -> None:
    """Disruption k is the kind's draw with seed + k - 1 on the plan in force, revealed 10 % of that plan's
    makespan after the one before (what lets `alas disrupt` and a benchmark reproduce it), earlier downtime
    carried forward; each is recorded by its node with its index and the version it disrupted."""
    log = open_log(tmp_path)
    assert run_pipeline(TWO_BREAKDOWNS, log).succeeded
    observed = [e for e in log.events() if e.type is EventType.DISRUPTION_OBSERVED]
    assert [(e.node_id, e.payload["index"], e.payload["baseline_version"]) for e in observed] == [
        ("disrupt_1", 1, 1), ("disrupt_2", 2, 2)]
    first, second = (Disruption.model_validate(e.payload["disruption"]) for e in observed)
    v1, v2 = plan_of(log, 1), plan_of(log, 2)
    assert first == generate_disruption(FT06, v1, "breakdown", seed=1)
    at = min(0.95, first.time / v2.makespan + 0.1)
    assert second == carry_forward(first, generate_disruption(FT06, v2, "breakdown", seed=2, at=at))
    assert second.time > first.time
    assert second != carry_forward(first, generate_disruption(FT06, v2, "breakdown", seed=2))  # `at` matters


def test_the_replan_rung_re_solves_with_the_full_method_and_the_runs_repair_knobs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LCRP and the patch both fail: the replan rung runs a global re-solve (``full``), with the run's budget,
    seed, workers, effort, tolerance and determinism (what replay re-runs it with), at level ``replan``."""
    real = RepairerRole.repair_disruption

    def only_full(self: RepairerRole, instance: Instance, baseline: Schedule, disruption: Disruption) -> RepairResult:
        if self.method != "full":
            raise InfeasibleError(f"no plan by {self.method} (injected by the test)")
        return real(self, instance, baseline, disruption)

    def no_patch(self: RepairerRole, *args: Any, **kwargs: Any) -> Schedule:
        raise InfeasibleError("no patch (injected by the test)")

    monkeypatch.setattr(RepairerRole, "repair_disruption", only_full)
    monkeypatch.setattr(RepairerRole, "patch", no_patch)
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, time_limit=1,
                       repair_budget=1.5, repair_effort=3, repair_tolerance=0.01, workers=1)
    log = open_log(tmp_path)
    result = run_pipeline(config, log)
    assert result.succeeded and result.escalations == [("repair_1", "patch"), ("repair_1", "replan")]
    started = [(e.payload["method"], e.payload["level"]) for e in log.events() if e.type is EventType.REPAIR_STARTED]
    assert started == [("lcrp", "run"), ("full", "replan")]
    [finished] = [e.payload for e in log.events() if e.type is EventType.REPAIR_FINISHED]
    assert {k: finished[k] for k in ("method", "level", "budget", "seed", "workers", "effort", "tolerance",
                                     "deterministic")} == {
        "method": "full", "level": "replan", "budget": 1.5, "seed": 1, "workers": 1, "effort": 3.0,
        "tolerance": 0.01, "deterministic": True}
    assert result.repairs[0]["method"] == "full" and result.versions == [1, 2]


def test_the_patch_rung_patches_the_plan_in_force_under_the_disruption(tmp_path: Path) -> None:
    """Recovery level 2 on its own: a priority decode of the plan in force that honours the disruption (the
    validator passes it against the disruption and that plan), recorded as the method ``patch``."""

    log = open_log(tmp_path)
    plan = run_pipeline(TWO_BREAKDOWNS.model_copy(update={"disrupt": None}), log).final
    assert plan is not None
    # A breakdown of the machine of an operation running at the reveal, from the operation's second time unit.
    hit = next(op for op in plan.operations if op.start > 0 and op.end - op.start >= 2)
    given = Disruption.model_validate({"time": hit.start + 1, "events": [
        {"kind": "machine_breakdown", "machine": hit.machine, "start": hit.start + 1, "duration": 5}]})
    stages = Stages(TWO_BREAKDOWNS, FT06, log, disruptions=[given])
    disrupted = stages.disrupt(_ctx("disrupt_1", index=1), {})
    assert disrupted["disruption"] == given.to_json()
    ctx = NodeContext(node_id="repair_1", role="repair_patch", attempt=1, run_id="r", workflow="w",
                      params={"index": 1}, deps={"disrupt_1": disrupted}, level="patch")
    out = stages.repair_patch(ctx, {})
    disruption = Disruption.model_validate(disrupted["disruption"])
    patched = Schedule.model_validate(out["plan"])
    assert out["metrics"] == {"method": "patch"} and out["disruption"] == disrupted["disruption"]
    assert out["baseline"] == plan.to_json() and out["makespan"] == patched.makespan
    assert validate(FT06, patched, disruption=disruption, baseline=plan).valid
    assert not validate(FT06, plan, disruption=disruption, baseline=plan).valid  # the disruption hits the plan


def test_alas_repairs_disrupt_step_disrupts_the_runs_current_version(tmp_path: Path) -> None:
    """Without ``plan_from`` (alas-repair) the plan in force is the run's current version; a run with none is
    refused, naming the run."""
    log = open_log(tmp_path)
    stages = Stages(TWO_BREAKDOWNS, FT06, log)
    with pytest.raises(InputError, match="no committed plan to disrupt") as e:
        stages.disrupt(_ctx("disrupt_1", index=1), {})
    assert e.value.where == "run r" and log.events() == []
    plan = run_pipeline(TWO_BREAKDOWNS.model_copy(update={"disrupt": None}), log).final
    assert plan is not None and log.current_version() == 1
    out = stages.disrupt(_ctx("disrupt_1", index=1), {})
    assert out["baseline"] == plan.to_json() and out["baseline_version"] == 1
    assert Disruption.model_validate(out["disruption"]) == generate_disruption(FT06, plan, "breakdown", seed=1)
    [event] = [e for e in log.events() if e.type is EventType.DISRUPTION_OBSERVED]
    assert (event.node_id, event.payload["index"], event.payload["baseline_version"]) == ("disrupt_1", 1, 1)
    # A segment past the run's last disruption passes the plan in force through, revealing and recording nothing.
    past = stages.disrupt(_ctx("disrupt_3", index=3), {})
    assert past == {"disruption": None, "baseline": plan.to_json(), "baseline_version": 1, "skipped": True}
    assert len([e for e in log.events() if e.type is EventType.DISRUPTION_OBSERVED]) == 1


def test_a_commit_is_keyed_by_run_and_node_locally_and_by_workflow_object_on_a_cluster(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    plan = run_pipeline(TWO_BREAKDOWNS.model_copy(update={"disrupt": None}), log).final
    assert plan is not None
    [local] = [e for e in log.events() if e.type is EventType.PLAN_COMMITTED]
    assert (local.node_id, local.payload["idempotency_key"]) == ("commit_v1", "r:commit_v1")
    assert local.payload["meta"] == {"valid": True, "checked": True, "makespan": plan.makespan}
    source = {"plan": plan.to_json(), "valid": True, "checked": True}
    ctx = NodeContext(node_id="commit_v1", role="commit", attempt=1, run_id="r", workflow="w",
                      params={"source": "check", "reason": "r"}, deps={"check": source})
    cluster = Stages(TWO_BREAKDOWNS, FT06, log, scope="wf-1")
    assert cluster.commit(ctx, {})["version"] == 2  # another workflow object's commit of the same node
    assert cluster.commit(ctx, {})["version"] == 2  # its own again: exactly once
    assert log.events()[-1].payload["idempotency_key"] == "step/wf-1/commit_v1"
    assert Stages(TWO_BREAKDOWNS, FT06, log).commit(ctx, {})["version"] == 1  # the local key's version
    skipped = {"plan": plan.to_json(), "skipped": True}
    assert cluster.commit(NodeContext(node_id="commit_3", role="commit", attempt=1, run_id="r", workflow="w",
                                      params={"source": "s", "reason": "r"}, deps={"s": skipped}), {}) == {
        "version": None, "skipped": True, "plan": plan.to_json()}
    assert log.versions() == [1, 2]


@pytest.mark.parametrize("committed", [None, "v1", {}, {"version": None}, {"version": True}, {"version": "1"}])
def test_a_compensation_of_a_commit_that_committed_nothing_retracts_nothing(tmp_path: Path, committed: Any) -> None:
    log = open_log(tmp_path)
    log.commit_plan({"instance": "ft06", "makespan": 0, "operations": []}, node_id="commit_v1")
    assert retract_committed(log, committed, node_id="retract_v1") == {"retracted": None}
    assert log.retracted() == [] and log.current_version() == 1
    assert retract_committed(log, {"version": 1}, node_id="retract_v1") == {"retracted": 1, "restored": None}
    assert retract_committed(log, {"version": 1}, node_id="retract_v1") == {"retracted": 1, "restored": None}
    assert log.retracted() == [1]


@pytest.mark.parametrize(("planner", "optimizer", "backend"), [
    ("heuristic", "auto", "heuristic"), ("cpsat", "auto", "cpsat"), ("simulated", "auto", "cpsat"),
    ("heuristic", "cpsat", "cpsat"), ("cpsat", "none", None)])
def test_every_role_gets_its_backend_and_the_runs_knobs(tmp_path: Path, planner: str, optimizer: str,
                                                       backend: str | None) -> None:
    """The agents node names each role's backend (no fallback note), and the repairer and the optimizer get the
    run's method, budget, effort, tolerance, seed, workers, time limit and determinism."""
    config = RunConfig(instance="ft06", planner=planner, optimizer=optimizer, seed=5, time_limit=2.5,
                       repair_method="aor", repair_budget=1.5, repair_effort=2, repair_tolerance=0.01, workers=1,
                       deterministic=False)
    stages = Stages(config, FT06, open_log(tmp_path))
    out = stages.agents(_ctx("agents"), {})
    assert out == {"job_agent": planner, "supervisor": planner, "validator": "independent", "repairer": "lcrp",
                   "optimizer": optimizer if backend is None else backend, "notes": []}
    repairer = stages.agent(Role.REPAIRER)
    assert (repairer.method, repairer.budget, repairer.effort, repairer.tolerance, repairer.seed, repairer.workers,
            repairer.deterministic) == ("aor", 1.5, 2, 0.01, 5, 1, False)
    if backend is not None:
        improver = stages.agent(Role.OPTIMIZER)
        assert (str(improver.backend), improver.time_limit, improver.seed, improver.workers,
                improver.deterministic) == (backend, 2.5, 5, 1, False)


def test_the_optimizer_records_what_makes_its_solve_reproducible(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    config = RunConfig(instance="ft06", planner="cpsat", seed=5, time_limit=0.5, workers=1)
    result = run_pipeline(config, log)
    assert result.succeeded and result.run is not None
    [event] = [e for e in log.events() if e.type is EventType.PLAN_PROPOSED and e.payload.get("role") == "optimizer"]
    merged, optimized = result.run.outputs["merge"], result.run.outputs["optimize"]
    assert event.node_id == "optimize" and {k: event.payload[k] for k in (
        "method", "makespan", "before", "time_limit", "seed", "workers")} == {
        "method": optimized["method"], "makespan": optimized["makespan"], "before": merged["makespan"],
        "time_limit": 0.5, "seed": 5, "workers": 1}
    assert event.payload["limits"]["deterministic"] is True and optimized["before"] == merged["makespan"]
    assert result.run.outputs["inject"] == {"plan": optimized["plan"], "makespan": optimized["makespan"],
                                            "faults": []}


def test_a_merge_over_a_missing_or_duplicated_proposal_is_refused(tmp_path: Path) -> None:
    stages = Stages(RunConfig(instance="ft06", planner="heuristic"), FT06, open_log(tmp_path))
    proposals = [stages.job_agent(NodeContext(node_id="propose", role="job_agent", attempt=1, run_id="r",
                                              workflow="w", item=j), {}) for j in range(6)]
    merge = NodeContext(node_id="merge", role="supervisor", attempt=1, run_id="r", workflow="w",
                        deps={"propose": [proposals[0], *proposals[:5]]})
    with pytest.raises(ContractError) as e:
        stages.supervisor(merge, {})
    assert e.value.message == "6 job proposals for 6 jobs (missing [5], duplicated [0])"
    assert e.value.where == "node merge"
    whole = stages.supervisor(NodeContext(node_id="merge", role="supervisor", attempt=1, run_id="r", workflow="w",
                                          deps={"propose": proposals}), {})
    assert Schedule.model_validate(whole["plan"]).makespan == whole["makespan"]


def test_a_revalidation_says_what_it_found_and_what_the_variant_does_with_it(tmp_path: Path) -> None:
    """A faulty plan: the full variant reports its violation codes and patches it (valid next time), no_repair
    reports them and patches nothing, no_validator passes it unchecked; a skipped segment passes through."""

    faulty = inject_faults(FT06, dispatch(FT06), count=3, seed=1).schedule
    codes = sorted({str(v.code) for v in validate(FT06, faulty).violations})
    assert codes

    def check(variant: Variant, source: dict[str, Any]) -> dict[str, Any]:
        stages = Stages(RunConfig(instance="ft06", planner="heuristic", variant=variant), FT06,
                        open_log(tmp_path, f"r-{variant}-{len(source)}"))
        ctx = NodeContext(node_id="check_optimized", role="revalidate", attempt=1, run_id="r", workflow="w",
                          params={"source": "inject"}, deps={"inject": source}, iteration=1)
        return stages.revalidate(ctx, {})

    out = check(Variant.FULL, {"plan": faulty.to_json()})
    assert (out["valid"], out["checked"], out["violations"], out["patched"]) == (False, True, codes, True)
    assert validate(FT06, Schedule.model_validate(out["plan"])).valid
    out = check(Variant.NO_REPAIR, {"plan": faulty.to_json()})
    assert (out["valid"], out["checked"], out["violations"], out["plan"]) == (False, True, codes, faulty.to_json())
    assert "patched" not in out
    out = check(Variant.NO_VALIDATOR, {"plan": faulty.to_json()})
    assert (out["valid"], out["checked"], out["plan"]) == (True, False, faulty.to_json())
    skipped = {"plan": faulty.to_json(), "makespan": faulty.makespan, "skipped": True}
    assert check(Variant.FULL, skipped) == {**skipped, "valid": True, "checked": False}
