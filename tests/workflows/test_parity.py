"""One IR, two engines, one result: the same inputs run by the local runtime (`alas run`) and walked through
the rendered `alas-plan` WorkflowTemplate as Argo would run it commit identical plan versions and the same
sequence of domain events (tests/parity.py says what is compared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.jssp.repair import FirstEdit
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.pipeline import RunConfig, run_pipeline
from alas_argo.pipeline.parameters import parameters_for
from alas_argo.workflows.plan import MAX_DISRUPTIONS
from tests.parity import trace
from tests.workflows.argo_walker import Walker

GOLDEN = Path(__file__).resolve().parents[2] / "workflows" / "argo" / "alas-plan.yaml"

# A local run and a walk of ~16 pods per case: 3-12 s measured on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(120)

#: Three instances, both planners, two disruption kinds, two seeds. One CP-SAT worker, as in a pod (with
#: deterministic solves the plans do not depend on it; the events record it).
CASES = [
    RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=0, time_limit=2, repair_budget=2,
              workers=1),
    RunConfig(instance="la01", planner="heuristic", disrupt="shock", seed=1, time_limit=2, repair_budget=2,
              workers=1),
    RunConfig(instance="ft10", planner="cpsat", disrupt="breakdown", seed=2, time_limit=2, repair_budget=2,
              workers=1),
]


def _both(config: RunConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, ok: bool = True
          ) -> tuple[ExecutionLog, ExecutionLog, Any]:
    local = ExecutionLog(FsStore(tmp_path / "local"), "parity")
    assert run_pipeline(config, local).succeeded is ok
    # The pods read the store from the environment the chart gives them; here a directory.
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path / "argo"))
    doc = yaml.safe_load(GOLDEN.read_text())
    walk = Walker(doc, main, name="alas-plan-parity", arguments=parameters_for(config, run_id="parity")).run()
    return local, ExecutionLog(FsStore(tmp_path / "argo"), "parity"), walk


def test_the_repair_knobs_reach_the_repair_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ft06, breakdown seed 1: allowed 2 % of makespan, LCRP moves none of the 13 operations it moves without
    # (tests/pipeline/test_pipeline.py); a pod that dropped the parameters would commit the other plan.
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, time_limit=2,
                       repair_budget=2, repair_effort=2, repair_tolerance=0.02, workers=1)
    local, argo, walk = _both(config, tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert local.plan(2) == argo.plan(2)
    [repaired] = [e.payload for e in argo.events() if e.type is EventType.REPAIR_FINISHED]
    assert (repaired["effort"], repaired["tolerance"], repaired["metrics"]["moved_operations"]) == (2.0, 0.02, 0)


@pytest.mark.parametrize("edit", list(FirstEdit))
def test_the_first_edit_reaches_the_repair_pod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               edit: FirstEdit) -> None:
    """The workflow parameter repair-first-edit is on the repair step's command line, and the pod repairs with
    it: the same plans and the same recorded first edit as the local run."""
    doc = yaml.safe_load(GOLDEN.read_text())
    [repair] = [t for t in doc["spec"]["templates"] if t["name"] == "repair-1"]
    assert "repair-first-edit={{workflow.parameters.repair-first-edit}}" in repair["container"]["args"]
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, time_limit=2,
                       repair_budget=2, workers=1, repair_first_edit=edit)
    local, argo, walk = _both(config, tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert local.plan(2) == argo.plan(2)
    [repaired] = [e.payload for e in argo.events() if e.type is EventType.REPAIR_FINISHED]
    ran = edit if edit is FirstEdit.REDISPATCH or tabu_kernel() is not None else FirstEdit.REDISPATCH
    assert (repaired["first_edit"], repaired["limits"].get("first_edit", "redispatch")) == (edit.value, ran.value)


@pytest.mark.parametrize("config", CASES, ids=lambda c: f"{c.instance}-{c.planner}-{c.disrupt}-{c.seed}")
def test_local_and_argo_commit_the_same_versions_and_events(config: RunConfig, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    local, argo, walk = _both(config, tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert local.versions() == argo.versions() == [1, 2]
    for version in local.versions():
        assert local.plan(version) == argo.plan(version), f"v{version} differs"
    local_trace = trace(e.to_json() for e in local.events())
    assert [e["type"] for e in local_trace][:1] == ["plan.proposed"] and len(local_trace) >= 10
    assert trace(e.to_json() for e in argo.events()) == local_trace
    assert argo.verify().ok and local.verify().ok


#: Sequences of disruptions, up to the rendered maximum: each segment reveals one against the plan the segment
#: before committed.
SEQUENCES = [
    RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", disruptions=2, seed=0, time_limit=2,
              repair_budget=2, workers=1),
    RunConfig(instance="la01", planner="heuristic", disrupt="mixed", disruptions=3, seed=1, time_limit=2,
              repair_budget=2, workers=1),
]


@pytest.mark.parametrize("config", SEQUENCES, ids=lambda c: f"{c.instance}-{c.disrupt}-x{c.disruptions}")
def test_a_sequence_of_disruptions_commits_the_same_versions_and_events(config: RunConfig, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``disruptions`` N: the first N segments of alas-plan reveal, repair and commit one disruption each, the rest
    are skipped by their gates, on the walk as in `alas run --disruptions N`."""
    local, argo, walk = _both(config, tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    n = config.disruptions
    assert local.versions() == argo.versions() == list(range(1, n + 2))
    for version in local.versions():
        assert local.plan(version) == argo.plan(version), f"v{version} differs"
    local_trace = trace(e.to_json() for e in local.events())
    observed = [e["payload"]["index"] for e in local_trace if e["type"] == "disruption.observed"]
    assert observed == list(range(1, n + 1))
    # Each disruption is revealed against the version the segment before committed.
    assert [e["payload"]["baseline_version"] for e in local_trace if e["type"] == "disruption.observed"] == \
        list(range(1, n + 1))
    assert trace(e.to_json() for e in argo.events()) == local_trace
    assert argo.verify().ok and local.verify().ok
    _unused_segments_never_ran(walk, argo, n, "alas-plan-parity")


def _unused_segments_never_ran(walk: Any, argo: ExecutionLog, n: int, name: str) -> None:
    """The segments after the run's last disruption: every task Skipped by its gate (`when`), the ladder's rungs
    Omitted (their `.Failed` term is false), no pod, no output recorded; the segments before it all ran."""
    ran = {p.template for p in walk.pods}
    for k in range(1, MAX_DISRUPTIONS + 1):
        tasks = [f"disrupt-{k}", f"repair-{k}", f"recheck-{k}", f"commit-{k + 1}"]
        if k <= n:
            assert all(walk.phases[t] == "Succeeded" for t in tasks) and set(tasks) <= ran
            continue
        assert {t: walk.phases[t] for t in tasks} == dict.fromkeys(tasks, "Skipped")
        assert walk.phases[f"repair-{k}-patch"] == walk.phases[f"repair-{k}-replan"] == "Omitted"
        assert not ran & {*tasks, f"repair-{k}-patch", f"repair-{k}-replan"}
        assert argo.idempotency_get(f"output/{name}/commit_{k + 1}") is None
    assert walk.phases["finish"] == "Succeeded"


def test_the_template_default_reveals_one_disruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Submitted without ``disruptions``, alas-plan reveals one disruption, as `alas run --disrupt KIND` does."""
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path / "argo"))
    arguments = parameters_for(CASES[0], run_id="default")
    assert arguments.pop("disruptions") == "1"
    walk = Walker(yaml.safe_load(GOLDEN.read_text()), main, name="alas-plan-default", arguments=arguments).run()
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    log = ExecutionLog(FsStore(tmp_path / "argo"), "default")
    assert log.versions() == [1, 2]
    assert [e.payload["index"] for e in log.events() if e.type.value == "disruption.observed"] == [1]
    _unused_segments_never_ran(walk, log, 1, "alas-plan-default")
    # ft06 has 6 jobs: 8 single steps up to commit_v1, 6 job agents, one segment of 4 pods, finish.
    assert len(walk.pods) == 8 + 6 + 4 + 1


def test_zero_disruptions_plans_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``disruptions`` 0 (what `alas run` without --disrupt does): every segment is skipped by its gate."""
    config = CASES[0].model_copy(update={"disrupt": None})
    assert parameters_for(config, run_id="parity")["disruptions"] == "0"
    local, argo, walk = _both(config, tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert local.versions() == argo.versions() == [1]
    assert local.plan(1) == argo.plan(1)
    local_trace = trace(e.to_json() for e in local.events())
    assert "disruption.observed" not in {e["type"] for e in local_trace}
    assert trace(e.to_json() for e in argo.events()) == local_trace
    _unused_segments_never_ran(walk, argo, 0, "alas-plan-parity")


def test_more_disruptions_than_rendered_segments_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A count above the rendered maximum fails the workflow in its first step, before anything is committed,
    with a message that says the maximum; `parameters_for` refuses it too. Nothing is truncated."""
    from alas_argo.errors import InputError

    too_many = CASES[0].model_copy(update={"disruptions": MAX_DISRUPTIONS + 1})
    with pytest.raises(InputError, match=f"at most {MAX_DISRUPTIONS} disruptions"):
        parameters_for(too_many, run_id="refused")
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path / "argo"))
    arguments = {**parameters_for(CASES[0], run_id="refused"), "disruptions": str(MAX_DISRUPTIONS + 1)}
    errors: list[str] = []

    def run(argv: list[str]) -> int:
        import contextlib
        import io

        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(argv)
        errors.append(err.getvalue())
        return code

    walk = Walker(yaml.safe_load(GOLDEN.read_text()), run, name="alas-plan-refused", arguments=arguments).run()
    assert walk.status == "Failed"
    # The exit handler runs (the workflow failed) and finds nothing to compensate.
    assert [(p.template, p.exit_code) for p in walk.pods] == [("blueprint", 2), ("compensate", 0)]
    assert f"between 0 and {MAX_DISRUPTIONS}" in errors[0] and "got 4" in errors[0]
    assert ExecutionLog(FsStore(tmp_path / "argo"), "refused").versions() == []


def test_every_pipeline_node_is_a_step_on_argo() -> None:
    """The pipeline `alas run` executes (one disruption) and alas-plan have the same nodes: each a template."""
    from alas_argo.pipeline import build_workflow

    local = build_workflow(CASES[0], disruptions=1)
    templates = {t["name"] for t in yaml.safe_load(GOLDEN.read_text())["spec"]["templates"]}
    assert {n.id.replace("_", "-") for n in local.nodes} <= templates
    from alas_argo.workflows import WORKFLOWS

    cluster = WORKFLOWS["alas-plan"]()
    assert [(n.id, n.role, n.kind, n.params) for n in cluster.nodes] == [
        (n.id, n.role, n.kind, n.params) for n in local.nodes]
    assert cluster.edges == local.edges


def _fail(monkeypatch: pytest.MonkeyPatch, *roles: str, index: int | None = None) -> None:
    """Make the pipeline's ``roles`` fail for good (a permanent error, as an infeasible repair raises), in this
    process: the local runtime's handlers and every walked pod's; with ``index``, only in that disruption's
    segment. A segment past the run's last disruption repairs nothing, so it still passes the plan through."""
    from alas_argo.errors import InfeasibleError
    from alas_argo.pipeline.stages import Stages

    def failing(role: str) -> Any:
        original = getattr(Stages, role)

        def infeasible(self: Stages, ctx: Any, inputs: dict[str, Any]) -> dict[str, Any]:
            k = ctx.params["index"]
            if ctx.deps[f"disrupt_{k}"].get("skipped") or index not in (None, k):
                return original(self, ctx, inputs)
            raise InfeasibleError(f"no {ctx.level} repair fits", where={"machine": 2})
        return infeasible

    for role in roles:
        monkeypatch.setattr(Stages, role, failing(role))


def _escalations(log: ExecutionLog) -> list[tuple[str, str]]:
    return [(e.payload["from"], e.payload["to"]) for e in log.events() if e.type.value == "recovery.escalated"]


def test_the_escalation_ladder_climbs_the_same_way_on_both_engines(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """LCRP fails for good: on Argo its task fails, the patch rung (a task of its own) runs and succeeds, the
    replan rung is omitted, and recheck revalidates the patch's output; the workflow succeeds, and both engines
    commit the same patched repair and log the same domain events."""
    _fail(monkeypatch, "repairer")
    local, argo, walk = _both(CASES[0], tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert {t: walk.phases[t] for t in ("repair-1", "repair-1-patch", "repair-1-replan", "recheck-1", "commit-2")} == {
        "repair-1": "Failed", "repair-1-patch": "Succeeded", "repair-1-replan": "Omitted", "recheck-1": "Succeeded",
        "commit-2": "Succeeded"}
    assert [p.exit_code for p in walk.pods if p.template == "repair-1"] == [2]  # permanent: not retried
    assert [p.exit_code for p in walk.pods if p.template == "repair-1-patch"] == [0]
    assert "repair-1-replan" not in {p.template for p in walk.pods}
    # recheck read the one output recorded under the node, which the patch rung wrote.
    recheck = next(p for p in walk.pods if p.template == "recheck-1")
    assert recheck.argv[recheck.argv.index("--recorded") + 1] == "repair_1"
    recorded = argo.idempotency_get("output/alas-plan-parity/repair_1")
    assert recorded is not None and recorded["doc"]["metrics"] == {"method": "patch"}
    assert argo.plan(2) == recorded["doc"]["plan"]
    assert _escalations(argo) == _escalations(local) == [("retry", "patch")]
    assert local.versions() == argo.versions() == [1, 2]
    assert local.plan(2) == argo.plan(2)
    local_trace = trace(e.to_json() for e in local.events())
    assert trace(e.to_json() for e in argo.events()) == local_trace


def test_when_the_patch_fails_too_the_replan_rung_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fail(monkeypatch, "repairer", "repair_patch")
    local, argo, walk = _both(CASES[0], tmp_path, monkeypatch)
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert {t: walk.phases[t] for t in ("repair-1", "repair-1-patch", "repair-1-replan", "recheck-1")} == {
        "repair-1": "Failed", "repair-1-patch": "Failed", "repair-1-replan": "Succeeded", "recheck-1": "Succeeded"}
    assert [p.exit_code for p in walk.pods if p.template.startswith("repair-1")] == [2, 2, 0]
    recorded = argo.idempotency_get("output/alas-plan-parity/repair_1")
    assert recorded is not None and recorded["doc"]["metrics"]["method"] == "full"  # the replan's global re-solve
    assert argo.plan(2) == recorded["doc"]["plan"]
    assert _escalations(argo) == _escalations(local) == [("retry", "patch"), ("patch", "replan")]
    assert local.versions() == argo.versions() == [1, 2]
    assert local.plan(2) == argo.plan(2)
    local_trace = trace(e.to_json() for e in local.events())
    assert [e["payload"] for e in local_trace if e["type"] == "plan.proposed" and e["payload"].get("reason")] == [
        {"version": 2, "reason": "replan"}]
    assert trace(e.to_json() for e in argo.events()) == local_trace


def test_when_every_rung_fails_the_workflow_fails_and_is_compensated(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _fail(monkeypatch, "repairer", "repair_patch", "replan")
    local, argo, walk = _both(CASES[0], tmp_path, monkeypatch, ok=False)
    assert walk.status == "Failed"
    assert {t: walk.phases[t] for t in ("repair-1", "repair-1-patch", "repair-1-replan", "recheck-1", "commit-2",
                                        "finish")} == {
        "repair-1": "Failed", "repair-1-patch": "Failed", "repair-1-replan": "Failed", "recheck-1": "Omitted",
        "commit-2": "Omitted", "finish": "Omitted"}
    assert [p.template for p in walk.pods][-1] == "compensate"
    assert argo.idempotency_get("output/alas-plan-parity/repair_1") is None
    assert _escalations(argo) == _escalations(local) == [("retry", "patch"), ("patch", "replan")]
    # The baseline this workflow committed is retracted on exit; no plan is in force.
    assert [e.payload["version"] for e in argo.events() if e.type.value == "plan.retracted"] == [1]
    assert argo.current_plan() is None and argo.verify().ok
    assert local.versions() == argo.versions() == [1]
    assert local.retracted() == argo.retracted() == [1]
    # The same domain events, the compensation included: the local saga and the exit handler word it alike
    # (the exit handler adds only the workflow object, which is plumbing).
    local_trace = trace(e.to_json() for e in local.events())
    assert [(e["type"], e["node_id"], e["payload"]) for e in local_trace if e["type"].startswith("compensation.")
            or e["type"] == "plan.retracted"] == [
        ("compensation.started", "retract_v1", {"compensates": "commit_v1"}),
        ("plan.retracted", "retract_v1", {"version": 1, "reason": "compensation of v1"}),
        ("compensation.finished", "retract_v1", {"compensates": "commit_v1", "ok": True,
                                                 "result": {"retracted": 1, "restored": None}})]
    assert trace(e.to_json() for e in argo.events()) == local_trace


def test_a_sequence_failing_in_its_second_disruption_is_compensated_newest_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two disruptions; every rung of the second repair fails: the workflow fails after committing v1 and v2, and
    on exit v2 then v1 are retracted (the pass-through segment after it never ran), the same on both engines."""
    _fail(monkeypatch, "repairer", "repair_patch", "replan", index=2)
    local, argo, walk = _both(SEQUENCES[0], tmp_path, monkeypatch, ok=False)
    assert walk.status == "Failed"
    assert {t: walk.phases[t] for t in ("commit-2", "repair-2", "repair-2-replan", "commit-3", "disrupt-3",
                                        "finish")} == {
        "commit-2": "Succeeded", "repair-2": "Failed", "repair-2-replan": "Failed", "commit-3": "Omitted",
        "disrupt-3": "Omitted", "finish": "Omitted"}
    assert local.versions() == argo.versions() == [1, 2]
    assert [e.payload["version"] for e in argo.events() if e.type.value == "plan.retracted"] == [2, 1]
    assert local.retracted() == argo.retracted() == [1, 2] and argo.current_plan() is None
    local_trace = trace(e.to_json() for e in local.events())
    assert [e["payload"]["compensates"] for e in local_trace if e["type"] == "compensation.finished"] == [
        "commit_2", "commit_v1"]
    assert trace(e.to_json() for e in argo.events()) == local_trace
    assert argo.verify().ok and local.verify().ok


def test_a_rung_failing_transiently_is_retried_by_its_retry_strategy(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit 75 is retried by the rung's own retryStrategy before the rung counts as Failed: the patch rung's
    first pod fails transiently, its retry succeeds, and the escalation is logged once."""
    from alas_argo.errors import TransientError
    from alas_argo.pipeline.stages import Stages

    _fail(monkeypatch, "repairer")
    patch = Stages.repair_patch
    calls: list[int] = []

    def flaky(self: Stages, ctx: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        calls.append(1)
        if len(calls) == 1:
            raise TransientError("the store blinked")
        return patch(self, ctx, inputs)

    monkeypatch.setattr(Stages, "repair_patch", flaky)
    monkeypatch.setenv("ALAS_STORE__KIND", "fs")
    monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path / "argo"))
    doc = yaml.safe_load(GOLDEN.read_text())
    walk = Walker(doc, main, name="alas-plan-flaky", arguments=parameters_for(CASES[0], run_id="flaky")).run()
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert [p.exit_code for p in walk.pods if p.template == "repair-1-patch"] == [75, 0]
    assert (walk.phases["repair-1-patch"], walk.phases["repair-1-replan"]) == ("Succeeded", "Omitted")
    log = ExecutionLog(FsStore(tmp_path / "argo"), "flaky")
    assert _escalations(log) == [("retry", "patch")]
    assert log.versions() == [1, 2] and log.verify().ok


def test_a_submission_carrying_the_enum_is_refused_before_any_pod(tmp_path: Path) -> None:
    """`alas submit` sends each parameter with the template's enum, so Argo's validation (mirrored by the walk)
    refuses ``disruptions`` 4 before the workflow exists: no pod runs, nothing is committed. A bare ``argo submit
    -p disruptions=4`` is not checked against the enum by Argo v3.6.5; the first pod refuses it (test above)."""
    from alas_argo.engines.submitting import as_submission

    doc = yaml.safe_load(GOLDEN.read_text())
    declared = {p["name"]: p for p in doc["spec"]["arguments"]["parameters"]}
    assert declared["disruptions"]["enum"] == [str(k) for k in range(MAX_DISRUPTIONS + 1)]
    pods: list[list[str]] = []

    def run(argv: list[str]) -> int:
        pods.append(argv)
        return 0

    for value in declared["disruptions"]["enum"]:
        ok = as_submission(doc, {"run-id": "enum", "disruptions": value}, namespace="alas")
        Walker(doc, run, name="alas-plan-enum", submitted=ok["spec"]["arguments"]["parameters"]).validate()
    bad = as_submission(doc, {"run-id": "enum", "disruptions": str(MAX_DISRUPTIONS + 1)}, namespace="alas")
    walker = Walker(doc, run, name="alas-plan-enum", submitted=bad["spec"]["arguments"]["parameters"])
    with pytest.raises(ValueError, match=r"^spec\.arguments\.disruptions\.value should be present in "
                                         r"spec\.arguments\.disruptions\.enum list$"):
        walker.run()
    assert pods == [] and walker.walk.pods == []
