"""What a run produced, read back from its execution log.

Every figure a run reports comes from the log, never from what the process happens to hold in memory: the
plans are the committed versions, the operations a repair moved and its start shift are the difference
between the version it repaired and the version it committed (what ``alas log diff`` shows), the final
verdict is the independent validator's on the current version. So a run that is resumed, or a finished run
asked again, reports exactly what its log holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import Event, EventType, ExecutionLog
from alas_argo.pipeline.config import RunConfig
from alas_argo.pipeline.feedback_stage import feedback_trace
from alas_argo.pipeline.handoff import handoff
from alas_argo.runtime import RunResult, RunStatus

__all__ = ["PipelineResult", "is_finished", "read_result"]

_RUN_EVENTS = {EventType.RUN_STARTED, EventType.RUN_SUCCEEDED, EventType.RUN_FAILED, EventType.RUN_INTERRUPTED}


@dataclass
class PipelineResult:
    """What one run of the pipeline produced, as its log records it.

    Attributes:
        run: The runtime's result when this call ran the workflow; None when it returned the stored result of
            a finished run without running anything.
        resumed: The run id had history before this call.
    """

    config: RunConfig
    instance: Instance
    run_id: str
    status: RunStatus
    seconds: float
    run: RunResult | None = None
    resumed: bool = False
    baseline: Schedule | None = None
    final: Schedule | None = None
    final_version: int | None = None
    versions: list[int] = field(default_factory=list)
    disruptions: list[Disruption] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)
    final_valid: bool = False
    final_violations: list[str] = field(default_factory=list)
    failed_node: str | None = None
    errors: dict[str, str] = field(default_factory=dict)
    escalations: list[tuple[str, str]] = field(default_factory=list)
    compensated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    feedback: list[dict[str, Any]] = field(default_factory=list)
    handoff: dict[str, Any] | None = None

    @property
    def succeeded(self) -> bool:
        """The workflow succeeded and the final plan passed the independent validator."""
        return self.status is RunStatus.SUCCEEDED and self.final_valid

    def summary(self) -> dict[str, Any]:
        """The run summary as JSON data."""
        repair = self.repairs[-1] if self.repairs else {}
        return {
            "run_id": self.run_id,
            "status": str(self.status),
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
            "failed_node": self.failed_node,
            "errors": self.errors,
            "escalations": [list(e) for e in self.escalations],
            "compensated": self.compensated,
            "notes": self.notes,
            "feedback_trace": [int(r["violations"]) for r in self.feedback],
            "feedback_rounds": self.feedback,
            "human_fallback": None if self.handoff is None else {
                "node": self.handoff["node"], "reason": self.handoff["reason"],
                "best_plan": self.handoff["best"]["source"],
                "best_plan_violations": self.handoff["best"]["violations"]},
            "deterministic": self.config.deterministic,
            "ran": self.run is not None,
            "seconds": round(self.seconds, 3),
        }


def _latest_attempt(events: list[Event]) -> list[Event]:
    """The events since the last ``run.started`` (this run id's latest invocation)."""
    starts = [i for i, e in enumerate(events) if e.type is EventType.RUN_STARTED]
    return events[starts[-1]:] if starts else events


def is_finished(log: ExecutionLog) -> bool:
    """Whether the run's latest invocation succeeded (a failed or interrupted one may be resumed)."""
    last = [e for e in log.events() if e.type in _RUN_EVENTS]
    return bool(last) and last[-1].type is EventType.RUN_SUCCEEDED


def _commits(events: list[Event]) -> dict[str, Event]:
    """The ``plan.committed`` event of each commit node of the blueprint (commit_v1, commit_2, ...)."""
    return {str(e.node_id): e for e in events if e.type is EventType.PLAN_COMMITTED and e.node_id
            and e.node_id.startswith("commit_")}


def _repairs(log: ExecutionLog, commits: dict[str, Event], count: int) -> list[dict[str, Any]]:
    """Per committed repair: its recorded metrics, with every figure about the plan taken from the log."""
    out = []
    for k in range(1, count + 1):
        before, after = commits.get("commit_v1" if k == 1 else f"commit_{k}"), commits.get(f"commit_{k + 1}")
        if before is None or after is None:
            break
        a, b = int(before.payload["version"]), int(after.payload["version"])
        diff = log.diff(a, b)
        metrics = dict((after.payload.get("meta") or {}).get("repair") or {})
        out.append({**metrics, "version": b, "baseline_version": a, "makespan": diff.makespan_b,
                    "baseline_makespan": diff.makespan_a, "moved_operations": len(diff.moved_operations),
                    "total_start_shift": diff.total_start_shift})
    return out


def _disruptions(events: list[Event], count: int) -> list[Disruption]:
    found: dict[int, Disruption] = {}
    for e in events:
        if e.type is EventType.DISRUPTION_OBSERVED and "index" in e.payload and int(e.payload["index"]) <= count:
            found[int(e.payload["index"])] = Disruption.model_validate(e.payload["disruption"])
    return [found[k] for k in sorted(found)]


def read_result(log: ExecutionLog, config: RunConfig, instance: Instance, *, disruptions: int, seconds: float,
                run: RunResult | None = None, resumed: bool = False,
                events: list[Event] | None = None) -> PipelineResult:
    """The result of the run in ``log`` (its latest invocation for status and errors).

    Args:
        log: The run's execution log.
        config: The run's configuration (its inputs were checked against the log's).
        instance: The run's instance.
        disruptions: How many disruptions the blueprint reveals.
        seconds: Wall time of this call.
        run: The runtime's result, when this call ran the workflow.
        resumed: The run id had history before this call.
        events: The run's events when the caller has just read them (each read is a request per event on S3).
    """
    events = log.events() if events is None else events
    attempt = _latest_attempt(events)
    terminal = next((e for e in reversed(attempt) if e.type in (EventType.RUN_SUCCEEDED, EventType.RUN_FAILED)),
                    None)
    status = RunStatus.SUCCEEDED if terminal is not None and terminal.type is EventType.RUN_SUCCEEDED \
        else RunStatus.FAILED
    result = PipelineResult(config=config, instance=instance, run_id=log.run_id, status=status, seconds=seconds,
                            run=run, resumed=resumed)
    if terminal is not None:
        result.failed_node = terminal.payload.get("failed_node")
        result.compensated = list(terminal.payload.get("compensated") or [])
    result.errors = {str(e.node_id): str(e.payload["error"]) for e in attempt
                     if e.type is EventType.NODE_FAILED and "error" in e.payload}
    result.escalations = [(str(e.node_id), str(e.payload.get("to"))) for e in attempt
                          if e.type is EventType.RECOVERY_ESCALATED]
    agents = log.idempotency_get(f"{log.run_id}:agents")
    result.notes = list(((agents or {}).get("output") or {}).get("notes") or [])
    result.feedback = feedback_trace(events)
    if status is RunStatus.FAILED:
        result.handoff = handoff(log, result.failed_node)
    commits = _commits(events)
    result.versions = log.versions()
    if "commit_v1" in commits:
        result.baseline = Schedule.model_validate(log.plan(int(commits["commit_v1"].payload["version"])))
    result.disruptions = _disruptions(events, disruptions)
    result.repairs = _repairs(log, commits, disruptions)
    current = log.current_plan()
    if current is not None:  # the verdict users see comes from the independent validator, not the run
        result.final_version, doc = current
        result.final = Schedule.model_validate(doc)
        by_version = {int(e.payload["version"]): node for node, e in commits.items()}
        node = by_version.get(result.final_version, "")
        disruption = baseline = None
        if node.startswith("commit_") and node != "commit_v1":  # a repair's commit: judged against its disruption
            k = int(node.removeprefix("commit_")) - 1
            if k <= len(result.disruptions):
                disruption = result.disruptions[k - 1]
                previous = commits["commit_v1" if k == 1 else f"commit_{k}"]
                baseline = Schedule.model_validate(log.plan(int(previous.payload["version"])))
        report = validate(instance, result.final, disruption=disruption, baseline=baseline)
        result.final_valid = report.valid
        result.final_violations = sorted({str(v.code) for v in report.violations})
    return result
