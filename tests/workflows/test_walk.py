"""The rendered plan-and-repair workflow really wires up: walk its DAG as Argo would, running every
container command against a loopback S3 server, and end with a valid repaired plan in the log."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.s3_store import S3Store
from alas_argo.metrics_outbox import OUTBOX, read_report, write_report
from tests.s3server import LoopbackS3
from tests.workflows.argo_walker import Walker

GOLDENS = Path(__file__).resolve().parents[2] / "workflows" / "argo"
#: A given disruption revealed long after any ft06 plan ends: well-formed, so the first step takes it, but
#: disrupt_1 refuses it for good (exit 2) once it sees the committed plan, the only step that can tell.
LATE = json.dumps({"time": 100_000, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 100_000,
                                                 "duration": 5}]})

# Each walk runs every step as a CLI call against S3: 6 to 27 s measured in the whole suite on a loaded 2-core
# machine, above the suite's default per-test limit.
pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def s3_env(s3_server: LoopbackS3, s3_bucket: str, monkeypatch: pytest.MonkeyPatch) -> S3Store:
    """Step processes find the store through the same environment the chart gives the pods."""
    kw = s3_server.store_kwargs(s3_bucket)
    for var, value in {"ALAS_STORE__KIND": "s3", "ALAS_STORE__S3_ENDPOINT": kw["endpoint"],
                       "ALAS_STORE__S3_BUCKET": s3_bucket, "AWS_ACCESS_KEY_ID": kw["access_key"],
                       "AWS_SECRET_ACCESS_KEY": kw["secret_key"], "AWS_DEFAULT_REGION": kw["region"]}.items():
        monkeypatch.setenv(var, value)
    return S3Store(**kw, backoff=0.01, max_retries=2)


def _run(argv: list[str]) -> int:
    assert argv[0] == "step"  # every template runs `alas step <kind> ...`
    return main(argv)


def _walk(name: str, workflow: str, args: dict[str, str]) -> Any:
    doc = yaml.safe_load((GOLDENS / f"{name}.yaml").read_text())
    return Walker(doc, _run, name=workflow, arguments=args).run()


def _handed_on(store: S3Store, after: str | None) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The sum of the metrics reports step pods wrote after key ``after``."""
    total: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for key in store.list(prefix=OUTBOX, start_after=after):
        for point in read_report(store.get(key=key), where=key):
            total[(point.name, point.labels)] = total.get((point.name, point.labels), 0.0) + point.value
    return total


def test_plan_and_repair_walk_ends_with_a_valid_repaired_plan(s3_env: S3Store) -> None:
    settled = write_report(s3_env, source="earlier tests")  # the walk's pods then report only the walk
    walk = _walk("alas-plan", "alas-plan-x7k2p", {"run-id": "walk-ft06", "instance": "ft06",
                                                  "planner": "heuristic", "time-limit": "2"})
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    agents = [p for p in walk.pods if p.template == "propose-item"]
    assert len(agents) == 6  # one pod per job, from the withParam list the blueprint wrote
    assert {p.argv[p.argv.index("--item") + 1] for p in agents} == {str(j) for j in range(6)}
    assert "compensate" not in {p.template for p in walk.pods}  # when: {{workflow.status}} != Succeeded

    log = ExecutionLog(s3_env, "walk-ft06")
    assert log.versions() == [1, 2]  # baseline, then the repair
    assert log.verify().ok
    events = log.events()
    disruption = Disruption.model_validate(next(e for e in events if e.type is EventType.DISRUPTION_OBSERVED
                                                 ).payload["disruption"])
    inst = get_instance("ft06")
    baseline, repaired = Schedule.model_validate(log.plan(1)), Schedule.model_validate(log.plan(2))
    assert validate(inst, baseline).valid
    report = validate(inst, repaired, disruption=disruption, baseline=baseline)
    assert report.valid, report.to_json()
    assert not any(e.type is EventType.COMPENSATION_STARTED for e in events)
    # Parameters carried log keys only: no pod argument is anywhere near a plan's size.
    assert max(len(a) for p in walk.pods for a in p.argv) < 2_000
    # What the pods counted is left in the store for the controller's /metrics (metrics_outbox).
    handed = _handed_on(s3_env, settled)
    assert handed[("alas_plans_committed_total", (("source", "plan"),))] == 1
    assert handed[("alas_plans_committed_total", (("source", "repair"),))] == 1
    assert handed[("alas_validations_total", (("verdict", "valid"),))] >= 2
    assert handed[("alas_log_append_duration_seconds_count", (("backend", "s3"),))] == len(events)
    assert handed[("alas_repairs_total", (("fallback", "false"), ("method", "lcrp")))] + handed.get(
        ("alas_repairs_total", (("fallback", "true"), ("method", "lcrp"))), 0) == 1


def test_failure_after_a_commit_is_compensated_by_the_exit_handler_once(s3_env: S3Store) -> None:
    # commit_v1 commits v1, then disrupt_1 fails permanently on a disruption after the plan (exit 2, not retried):
    # the exit handler must retract what this workflow committed, and only that, exactly once.
    args = {"run-id": "walk-saga", "instance": "ft06", "time-limit": "2", "disruption": LATE}
    settled = write_report(s3_env, source="earlier tests")
    walk = _walk("alas-plan", "alas-plan-saga1", args)
    assert walk.status == "Failed"
    assert [p.exit_code for p in walk.pods if p.template == "disrupt-1"] == [2]
    assert [p.template for p in walk.pods][-1] == "compensate"
    log = ExecutionLog(s3_env, "walk-saga")
    comp = [e for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]
    assert [(e.node_id, e.payload["compensates"], e.payload["ok"], e.payload["result"]) for e in comp] == [
        ("retract_v1", "commit_v1", True, {"retracted": 1, "restored": None})]  # nothing earlier to restore
    # The retraction is a logged transition: no plan is in force for any reader any more.
    assert [e.payload["version"] for e in log.events() if e.type is EventType.PLAN_RETRACTED] == [1]
    assert log.current_plan() is None and log.retracted() == [1]
    handed = _handed_on(s3_env, settled)
    assert handed[("alas_runs_total", (("outcome", "compensated"),))] == 1
    assert handed[("alas_policy_events_total", (("event", "compensation"),))] == 1
    assert ExecutionLog(s3_env, "walk-saga").verify().current_version is None

    # The exit handler re-run (a retried pod): nothing is compensated twice.
    doc = yaml.safe_load((GOLDENS / "alas-plan.yaml").read_text())
    walker = Walker(doc, _run, name="alas-plan-saga1", arguments=args)
    walker.globals["workflow.status"] = "Failed"
    assert walker.template(doc["spec"]["onExit"], {})[0] == "Succeeded"
    assert len([e for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]) == 1

    # Resubmitted on the same run: the baseline commit is idempotent per run (the log's idempotency record),
    # so the second workflow commits nothing, fails at the same step, and has nothing to compensate.
    again = _walk("alas-plan", "alas-plan-saga2", args)
    assert again.status == "Failed"
    assert log.versions() == [1]
    assert len([e for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]) == 1
    assert any(e.type is EventType.NODE_IDEMPOTENT_HIT and e.node_id == "commit_v1" for e in log.events())


def test_a_compensation_template_run_on_its_own_retracts_its_node_once(s3_env: S3Store) -> None:
    """The retract-v1 template (`alas step retract --compensates commit_v1`) undoes what its workflow
    committed, and shares the exit handler's record: whichever runs first compensates, the other does not."""
    args = {"run-id": "walk-retract", "instance": "ft06", "time-limit": "2", "disruption": LATE}
    doc = yaml.safe_load((GOLDENS / "alas-plan.yaml").read_text())
    walker = Walker(doc, _run, name="alas-plan-r1", arguments=args)
    assert walker.template(doc["spec"]["entrypoint"], {})[0] == "Failed"  # v1 committed, then disrupt failed
    log = ExecutionLog(s3_env, "walk-retract")
    assert log.versions() == [1]
    phase, outputs = walker.template("retract-v1", {})
    assert phase == "Succeeded"
    record = log.idempotency_get(outputs["key"])
    assert record is not None and record["doc"]["compensated"] == [
        {"node": "commit_v1", "retracted": 1, "restored": None}]
    finished = [e for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]
    assert [(e.node_id, e.payload["compensates"], e.payload["result"]) for e in finished] == [
        ("retract_v1", "commit_v1", {"retracted": 1, "restored": None})]
    assert walker.template("retract-2", {})[0] == "Succeeded"  # repair never committed: nothing to undo
    walker.globals["workflow.status"] = "Failed"
    assert walker.template(doc["spec"]["onExit"], {})[0] == "Succeeded"
    assert len([e for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]) == 1


def test_repair_on_disruption_walk_commits_a_valid_repair_of_the_given_disruption(s3_env: S3Store) -> None:
    assert _walk("alas-plan", "alas-plan-base", {"run-id": "walk-c", "instance": "ft06", "scenarios": '["none"]',
                                                 "time-limit": "2"}).status == "Succeeded"
    log = ExecutionLog(s3_env, "walk-c")
    assert log.versions() == [1]  # scenario none: no disruption, the repair step skips
    given = {"time": 10, "events": [{"kind": "machine_breakdown", "machine": 2, "start": 10, "duration": 15}]}
    walk = _walk("alas-repair", "alas-repair-q9z", {"run-id": "walk-c", "disruption": json.dumps(given),
                                                    "time-limit": "2"})
    assert walk.status == "Succeeded"
    assert log.versions() == [1, 2]
    inst, baseline = get_instance("ft06"), Schedule.model_validate(log.plan(1))
    report = validate(inst, Schedule.model_validate(log.plan(2)), disruption=Disruption.model_validate(given),
                      baseline=baseline)
    assert report.valid, report.to_json()


def test_a_run_planned_by_alas_run_is_repaired_by_the_repair_workflow(s3_env: S3Store) -> None:
    """Planned on one machine into the cluster's store (`alas run --store s3`), repaired on the cluster
    (`alas-repair`): its steps find the instance as the controller does; the steps failed before with "the run
    has no blueprint", since only the alas-plan workflow's blueprint step records the instance in full."""
    assert main(["run", "ft06", "--planner", "heuristic", "--time-limit", "1", "--store", "s3", "--run-id",
                 "walk-local", "--quiet"]) == 0
    log = ExecutionLog(s3_env, "walk-local")
    assert log.versions() == [1]
    given = {"time": 10, "events": [{"kind": "machine_breakdown", "machine": 2, "start": 10, "duration": 15}]}
    walk = _walk("alas-repair", "alas-repair-loc", {"run-id": "walk-local", "disruption": json.dumps(given),
                                                    "time-limit": "2"})
    assert walk.status == "Succeeded"
    assert log.versions() == [1, 2]
    report = validate(get_instance("ft06"), Schedule.model_validate(log.plan(2)),
                      disruption=Disruption.model_validate(given), baseline=Schedule.model_validate(log.plan(1)))
    assert report.valid, report.to_json()


def test_bench_walk_fans_out_over_cases_and_exports_the_summary(s3_env: S3Store, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    walk = _walk("alas-bench", "alas-bench-k2", {"run-id": "walk-bench", "suite": "ft06", "planner": "heuristic",
                                                 "scenarios": '["none", "breakdown"]', "seeds": "[0]",
                                                 "time-limit": "1"})
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    assert len([p for p in walk.pods if p.template == "run-case-item"]) == 2
    summary = json.loads(walk.outputs["summary"])  # the global output the operator mirrors
    assert summary["cases"] == 2 and summary["valid"] == 2
    runs = {f"walk-bench.ft06.{s}.0" for s in ("none", "breakdown")}
    for run in runs:  # every case ran the whole local pipeline in its own run of the same store
        assert ExecutionLog(s3_env, run).versions()
    # The per-case table the summary leaves out, read back from those runs (`alas bench report`).
    assert main(["bench", "report", "walk-bench", "--store", "s3", "--out", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {r["run_id"] for r in report["rows"]} == runs and all(r["final_valid"] for r in report["rows"])
    assert report["summary"][-1]["valid"] == summary["valid"]
    assert sum(r["makespan_after"] for r in report["rows"]) / 2 == pytest.approx(summary["mean_makespan"])


def test_a_template_command_runs_as_a_real_process(s3_env: S3Store, tmp_path: Path) -> None:
    """The container's command and args, exactly as rendered, run the installed `alas` console script."""
    import subprocess

    doc = yaml.safe_load((GOLDENS / "alas-plan.yaml").read_text())
    template = next(t for t in doc["spec"]["templates"] if t["name"] == "blueprint")

    def run(argv: list[str]) -> int:
        return subprocess.run([*template["container"]["command"], *argv], check=False).returncode

    walker = Walker(doc, run, name="alas-plan-proc", arguments={"run-id": "walk-proc", "instance": "ft06"})
    phase, outputs = walker.template("blueprint", {})
    assert phase == "Succeeded" and json.loads(outputs["jobs"]) == list(range(6))
    assert ExecutionLog(s3_env, "walk-proc").idempotency_get(outputs["key"]) is not None


def test_injected_faults_are_caught_before_the_commit(s3_env: S3Store) -> None:
    """The `faults` parameter corrupts the supervisor's plan (the ablation's protocol): the validator step
    rejects it, the plan is patched, and only the valid plan is committed (the cluster test does the same)."""
    walk = _walk("alas-plan", "alas-plan-faults", {"run-id": "walk-faults", "instance": "ft06", "time-limit": "2",
                                                     "faults": "5", "scenarios": '["none"]'})
    assert walk.status == "Succeeded", [(p.template, p.exit_code) for p in walk.pods]
    events = ExecutionLog(s3_env, "walk-faults").events()
    types = [e.type for e in events]
    assert EventType.VALIDATION_FAILED in types
    assert types.index(EventType.VALIDATION_FAILED) < types.index(EventType.PLAN_COMMITTED)
    committed = [e for e in events if e.type is EventType.PLAN_COMMITTED]
    assert len(committed) == 1 and committed[0].payload["meta"]["valid"] is True


def test_resubmitting_a_compensated_run_id_commits_no_second_baseline(s3_env: S3Store) -> None:
    """Issue 14's failure path continued: after the exit handler retracted v1, the same run id submitted again
    (same inputs, so it fails the same way) commits nothing new; the run stays with no plan in force."""
    args = {"run-id": "walk-resubmit", "instance": "ft06", "time-limit": "2", "disruption": LATE}
    assert _walk("alas-plan", "alas-plan-again1", args).status == "Failed"
    assert _walk("alas-plan", "alas-plan-again2", args).status == "Failed"
    log = ExecutionLog(s3_env, "walk-resubmit")
    commits = [e.payload["version"] for e in log.events() if e.type is EventType.PLAN_COMMITTED]
    assert commits == [1] and log.retracted() == [1] and log.current_version() is None
    assert log.verify().ok


def test_the_walker_leaves_no_pod_files_behind() -> None:
    """The walker's pods write their outputs under a scratch directory: gone after a walk, and when a walker
    driven template by template is collected (every suite run used to leave 31 of them in /tmp)."""
    doc = {"spec": {"entrypoint": "main", "templates": [{
        "name": "main", "container": {"args": ["step", "echo", "/tmp/outputs/v"]},
        "outputs": {"parameters": [{"name": "v", "valueFrom": {"path": "/tmp/outputs/v"}}]}}]}}
    written: list[Path] = []

    def run(argv: list[str]) -> int:
        path = Path(argv[2])
        path.parent.mkdir(parents=True)
        path.write_text("1")
        written.append(path)
        return 0

    walker = Walker(doc, run, name="scratch")
    walk = walker.run()
    assert walk.status == "Succeeded" and walk.pods[0].outputs == {"v": "1"}
    assert written[0].is_relative_to(walker.scratch) and not walker.scratch.exists()

    stepped = Walker(doc, run, name="scratch-stepped")
    scratch = stepped.scratch
    assert stepped.template("main", {})[0] == "Succeeded" and written[1].is_file()
    del stepped
    gc.collect()
    assert not scratch.exists()
