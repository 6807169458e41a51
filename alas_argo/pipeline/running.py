"""Running the ALAS workflow end to end on the local runtime, and what a run returns."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from alas_argo import metrics
from alas_argo.errors import InputError, first_error
from alas_argo.json_limits import load_json
from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.disruption import Disruption, DisruptionKind
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import ExecutionLog
from alas_argo.pipeline.blueprint import build_workflow
from alas_argo.pipeline.config import RunConfig
from alas_argo.pipeline.stages import Stages
from alas_argo.runtime import RunResult, RunStatus, Runtime, StateChange
from alas_argo.runtime.run_state import Listener

__all__ = ["PipelineResult", "load_disruptions", "run_pipeline"]


def load_disruptions(path: Path) -> list[Disruption]:
    """Read one disruption object, or a list of them, from a JSON file (reveal times must not decrease)."""
    try:
        doc = load_json(path.read_bytes(), where=str(path))
    except FileNotFoundError:
        raise InputError("disruption file not found", where=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read disruption file: {e.strerror or e}", where=str(path)) from None
    items = doc if isinstance(doc, list) else [doc]
    if not items or not all(isinstance(d, dict) for d in items):
        raise InputError("expected a disruption object or a non-empty list of them", where=str(path))
    try:
        found = TypeAdapter(list[Disruption]).validate_python(items)
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(f"{loc}: {msg}", where=str(path)) from None
    if any(b.time < a.time for a, b in itertools.pairwise(found)):
        raise InputError("disruption reveal times must not decrease", where=str(path))
    return found


@dataclass
class PipelineResult:
    """What one run of the pipeline produced."""

    config: RunConfig
    instance: Instance
    run: RunResult
    seconds: float
    baseline: Schedule | None = None
    final: Schedule | None = None
    final_version: int | None = None
    versions: list[int] = field(default_factory=list)
    disruptions: list[Disruption] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)
    final_valid: bool = False
    final_violations: list[str] = field(default_factory=list)

    @property
    def succeeded(self) -> bool:
        """The workflow succeeded and the final plan passed the independent validator."""
        return self.run.status is RunStatus.SUCCEEDED and self.final_valid

    def summary(self) -> dict[str, Any]:
        """The run summary as JSON data."""
        repair = self.repairs[-1] if self.repairs else {}
        return {
            "run_id": self.run.run_id,
            "status": str(self.run.status),
            "instance": self.instance.name,
            "size": self.instance.size,
            "planner": self.config.planner,
            "variant": str(self.config.variant),
            "makespan_before": self.baseline.makespan if self.baseline else None,
            "makespan_after": self.final.makespan if self.final else None,
            "upper_bound": self.instance.upper_bound,
            "disruptions": len(self.disruptions),
            "moved_operations": repair.get("moved_operations"),
            "total_start_shift": repair.get("total_start_shift"),
            "edit_radius": repair.get("edit_radius"),
            "repair_seconds": repair.get("seconds"),
            "repair_method": repair.get("method"),
            "fallback": repair.get("fallback"),
            "repairs": self.repairs,
            "versions_committed": len(self.versions),
            "final_version": self.final_version,
            "final_valid": self.final_valid,
            "final_violations": self.final_violations,
            "failed_node": self.run.failed_node,
            "errors": self.run.errors,
            "escalations": [list(e) for e in self.run.escalations],
            "compensated": self.run.compensated,
            "notes": list(self.run.outputs.get("agents", {}).get("notes", [])),
            "seconds": round(self.seconds, 3),
        }


def _disruption_plan(config: RunConfig) -> tuple[list[Disruption], int]:
    if config.disrupt is None:
        return [], 0
    if config.disrupt in {k.value for k in DisruptionKind}:
        return [], config.disruptions
    path = Path(config.disrupt)
    if not path.exists() and path.suffix != ".json":
        kinds = ", ".join(k.value for k in DisruptionKind)
        raise InputError(f"--disrupt must be one of {kinds} or a disruption JSON file", where=config.disrupt)
    found = load_disruptions(path)
    return found, len(found)


def run_pipeline(config: RunConfig, log: ExecutionLog, *, listener: Listener | None = None,
                 agent_spec: dict[str, Any] | None = None) -> PipelineResult:
    """Run the five ALAS layers for ``config``, writing through ``log`` (resumes when it has history).

    Args:
        config: What to run.
        log: The run's execution log; a run id that already has events resumes from its idempotent results.
        listener: Called with every node state change (for a live view).
        agent_spec: Extra spec for the agent factory (settings, LLM recorder, replay events).
    """
    started = time.perf_counter()
    versions_before = len(log.versions())  # a resumed run must not count its earlier commits again
    instance = load_instance(config.instance)
    from_file, count = _disruption_plan(config)
    workflow = build_workflow(config, disruptions=count)
    stages = Stages(config, instance, log, disruptions=from_file, agent_spec=agent_spec)

    def observe(change: StateChange) -> None:
        if change.new == "failed_retryable":
            metrics.count_policy_event(metrics.PolicyEvent.RETRY)
        if listener is not None:
            listener(change)

    runtime = Runtime(stages.handlers(), journal=log, max_workers=config.workers, timeout_mode="thread",
                      listener=observe, seed=config.seed, require_output_contracts=True)
    run = runtime.run(workflow, {"instance": instance.name, "config": config.model_dump(mode="json")},
                      run_id=log.run_id)
    result = PipelineResult(config=config, instance=instance, run=run, seconds=0.0)
    out = run.outputs
    if "commit_v1" in out:
        result.baseline = Schedule.model_validate(out["commit_v1"]["plan"])
    # The blueprint names commits commit_v1, commit_2, ..., commit_{count + 1}; the last one that ran is final.
    committed = [n for n in ["commit_v1", *(f"commit_{k}" for k in range(2, count + 2))] if n in out]
    if committed:
        result.final = Schedule.model_validate(out[committed[-1]]["plan"])
        result.final_version = int(out[committed[-1]]["version"])
    for k in range(1, count + 1):
        if f"disrupt_{k}" in out:
            result.disruptions.append(Disruption.model_validate(out[f"disrupt_{k}"]["disruption"]))
        if f"recheck_{k}" in out and "metrics" in out[f"recheck_{k}"]:
            result.repairs.append(out[f"recheck_{k}"]["metrics"])
    result.versions = log.versions()
    if result.final is not None:  # the verdict users see comes from the independent validator, not the run
        last_disruption = result.disruptions[-1] if result.disruptions else None
        baseline = None
        if last_disruption is not None and count:
            baseline = Schedule.model_validate(out[f"disrupt_{count}"]["baseline"])
        report = validate(instance, result.final, disruption=last_disruption, baseline=baseline)
        result.final_valid = report.valid
        result.final_violations = sorted({str(v.code) for v in report.violations})
    _observe(result, new_versions=len(result.versions) - versions_before)
    result.seconds = time.perf_counter() - started
    return result


def _observe(result: PipelineResult, *, new_versions: int) -> None:
    for _ in range(new_versions):
        metrics.count_plan_committed("plan")
    for r in result.repairs:
        if "moved_operations" in r:
            gap = (r["makespan"] - r["baseline_makespan"]) / max(1, r["baseline_makespan"])
            metrics.observe_repair(str(r["method"]), float(r["seconds"]), int(r["moved_operations"]),
                                   int(r["edit_radius"]), gap, fallback=bool(r.get("fallback")))
    for _ in result.run.compensated:
        metrics.count_policy_event(metrics.PolicyEvent.COMPENSATION)
    outcome = metrics.RunOutcome.SUCCEEDED if result.succeeded else (
        metrics.RunOutcome.COMPENSATED if result.run.compensated else metrics.RunOutcome.FAILED)
    metrics.count_run_outcome(outcome)
