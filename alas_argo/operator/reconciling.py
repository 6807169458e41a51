"""The operator's logic as pure functions: (spec, status, observed state, now) -> actions.

Level-triggered: every call looks at the whole current state and returns what would move it toward the
desired one, so running it twice, or after a crash, is harmless. Status is patched only when it changes,
which keeps the reconcile loop from feeding itself with its own watch events.

PlanRun: submit one Workflow per spec generation (plan template for an instance, benchmark fan-out for a
suite), then mirror its phase, progress and result summary. Disruption: POST the events to the controller
once per generation with an idempotency key (a retried POST after a crash is deduplicated by the
controller), retry transient failures with capped exponential backoff, and record the committed plan version.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from alas_argo import json_limits
from alas_argo.errors import InputError
from alas_argo.operator.actions import (
    Action,
    CreateWorkflow,
    OperatorConfig,
    PatchStatus,
    PostDisruption,
    PostOutcome,
)
from alas_argo.operator.manifests import run_id, workflow_manifest, workflow_name
from alas_argo.operator.resources import (
    DISRUPTION_PLURAL,
    PLANRUN_PLURAL,
    DisruptionSpec,
    Phase,
    PlanRunSpec,
    Resource,
    parse_spec,
)

__all__ = ["argo_phase", "reconcile_disruption", "reconcile_planrun", "status_after_post", "workflow_summary"]

_ARGO_PHASES = {"": Phase.PENDING, "Pending": Phase.PENDING, "Running": Phase.RUNNING,
                "Succeeded": Phase.SUCCEEDED, "Failed": Phase.FAILED, "Error": Phase.FAILED}
#: Bounds on what is copied from a workflow's summary into .status (etcd objects must stay small).
_SUMMARY_KEYS, _SUMMARY_VALUE_CHARS = 24, 256
#: The PlanRun's .status fields copied from its workflow (the rest say which workflow and why).
_WORKFLOW_FIELDS = ("progress", "startedAt", "finishedAt", "summary")


def _phase(value: Any) -> Phase:
    """A stored phase; anything unrecognized (a hand-edited status) counts as Pending."""
    try:
        return Phase(value)
    except ValueError:
        return Phase.PENDING


def _patch_if_changed(resource: Resource, plural: str, desired: dict[str, Any]) -> list[Action]:
    if all(resource.status.get(k) == v for k, v in desired.items()):
        return []
    return [PatchStatus(plural=plural, namespace=resource.namespace, name=resource.name, status=desired)]


def argo_phase(workflow: dict[str, Any]) -> Phase:
    """The PlanRun phase matching an Argo Workflow's ``.status.phase`` (unknown phases count as Running)."""
    return _ARGO_PHASES.get(str((workflow.get("status") or {}).get("phase") or ""), Phase.RUNNING)


def workflow_summary(workflow: dict[str, Any]) -> dict[str, Any] | None:
    """The workflow's global output parameter ``summary`` (a JSON object), bounded in size; else None."""
    params = ((workflow.get("status") or {}).get("outputs") or {}).get("parameters") or []
    for p in params:
        if p.get("name") != "summary":
            continue
        try:
            doc = json_limits.loads(p.get("value") or "")
        except (TypeError, ValueError):
            return None
        if not isinstance(doc, dict):
            return None
        out: dict[str, Any] = {}
        for key in sorted(doc)[:_SUMMARY_KEYS]:
            value = doc[key]
            if isinstance(value, bool | int | float) or value is None:
                out[str(key)] = value
            else:  # a list or an object as compact JSON (str() gave Python's "['a']"), text as it is
                text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
                out[str(key)] = text[:_SUMMARY_VALUE_CHARS]
        return out
    return None


def reconcile_planrun(resource: Resource, workflow: dict[str, Any] | None,
                      config: OperatorConfig) -> list[Action]:
    """Actions for one PlanRun.

    Args:
        resource: The PlanRun as read from the API.
        workflow: The Workflow named :func:`workflow_name` for the current generation, if it exists.
        config: Templates and ServiceAccount to use.
    """
    gen = resource.generation
    try:
        spec = parse_spec(PlanRunSpec, resource, "PlanRun")
    except InputError as e:
        # This generation has no workflow and no run: null removes an earlier generation's, which a Disruption
        # naming the PlanRun would otherwise still be posted to (it waits for a valid spec instead).
        return _patch_if_changed(resource, PLANRUN_PLURAL, {
            "phase": Phase.INVALID.value, "message": str(e), "observedGeneration": gen,
            "workflow": None, "runId": None, **dict.fromkeys(_WORKFLOW_FIELDS)})
    name = workflow_name(resource)
    status = resource.status
    if workflow is None:
        if status.get("observedGeneration") == gen and status.get("workflow") == name \
                and _phase(status.get("phase")).terminal:
            return []  # finished, and someone cleaned the workflow up: do not run it again
        return [CreateWorkflow(namespace=resource.namespace, manifest=workflow_manifest(resource, spec, config)),
                *_patch_if_changed(resource, PLANRUN_PLURAL, {
                    "phase": Phase.PENDING.value, "workflow": name, "runId": run_id(resource),
                    "observedGeneration": gen, "message": "workflow submitted",
                    # The previous generation's workflow is not this one: null removes what it left.
                    **dict.fromkeys(_WORKFLOW_FIELDS)})]
    wf_status = workflow.get("status") or {}
    phase = argo_phase(workflow)
    desired: dict[str, Any] = {
        "phase": phase.value,
        "workflow": name,
        "runId": run_id(resource),
        "observedGeneration": gen,
        # Argo sets no message while a workflow is queued; keep ours so the first look is not a change.
        "message": str(wf_status.get("message") or ("workflow submitted" if phase is Phase.PENDING else "")),
        "progress": wf_status.get("progress"),
        "startedAt": wf_status.get("startedAt"),
        "finishedAt": wf_status.get("finishedAt"),
        # Null when this workflow has none, so that no summary of an earlier generation's workflow stays.
        "summary": workflow_summary(workflow),
    }
    return _patch_if_changed(resource, PLANRUN_PLURAL, desired)


def reconcile_disruption(resource: Resource, now: float, config: OperatorConfig,
                         planruns: Mapping[str, Resource] | None = None) -> list[Action]:
    """Actions for one Disruption at time ``now`` (seconds since the epoch; injected for tests).

    Args:
        planruns: The PlanRuns of the namespace by name, to resolve ``spec.planRun`` to a run id.
    """
    gen = resource.generation
    try:
        spec = parse_spec(DisruptionSpec, resource, "Disruption")
    except InputError as e:
        return _patch_if_changed(resource, DISRUPTION_PLURAL, {
            "phase": Phase.INVALID.value, "message": str(e), "observedGeneration": gen})
    status = resource.status
    run = spec.run or ""
    if spec.plan_run is not None:
        planrun = (planruns or {}).get(spec.plan_run)
        run = str(planrun.status.get("runId") or "") if planrun is not None else ""
        if not run:  # the PlanRun does not exist yet, or has not submitted its workflow: wait for it
            what = "to exist" if planrun is None else "to start its run"
            return _patch_if_changed(resource, DISRUPTION_PLURAL, {
                "phase": Phase.PENDING.value, "observedGeneration": gen,
                "message": f"waiting for PlanRun {spec.plan_run} {what}"})
    same_generation = status.get("observedGeneration") == gen
    phase = _phase(status.get("phase")) if same_generation else Phase.PENDING
    if phase.terminal:
        return []
    if same_generation and float(status.get("nextAttemptAt") or 0) > now:
        return []  # backing off after a transient failure
    return [PostDisruption(namespace=resource.namespace, name=resource.name, run=run, body=spec.body(),
                           idempotency_key=f"{resource.uid}-g{gen}")]


def status_after_post(resource: Resource, outcome: PostOutcome, now: float,
                      config: OperatorConfig) -> dict[str, Any]:
    """The Disruption's new ``.status`` after the controller answered (or failed to)."""
    gen = resource.generation
    prior = resource.status.get("attempts", 0) if resource.status.get("observedGeneration") == gen else 0
    attempts = int(prior) + 1
    # A generation's repair results are written only by its own success (which ends it): any earlier
    # generation's are nulled, so a failed or retried edit never shows a plan version it did not commit.
    base = {"observedGeneration": gen, "attempts": attempts, "lastAttemptAt": now,
            "planVersion": None, "makespan": None, "movedOperations": None, "method": None}
    if outcome.ok:
        body = outcome.body
        return {**base, "phase": Phase.SUCCEEDED.value, "message": "repaired",
                "planVersion": body.get("version"), "makespan": body.get("makespan"),
                "movedOperations": body.get("moved_operations"), "method": body.get("method"),
                "nextAttemptAt": None}
    if outcome.transient and attempts < config.max_attempts:
        delay = min(config.retry_max_seconds, config.retry_base_seconds * 2 ** (attempts - 1))
        return {**base, "phase": Phase.PENDING.value, "nextAttemptAt": now + delay,
                "message": f"attempt {attempts} failed ({outcome.status_code}): {outcome.message}; "
                           f"retrying in {delay:g}s"}
    return {**base, "phase": Phase.FAILED.value, "nextAttemptAt": None,
            "message": f"repair failed ({outcome.status_code}): {outcome.message}"}
