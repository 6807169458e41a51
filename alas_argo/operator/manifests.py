"""The Argo Workflow a PlanRun submits: a ``workflowTemplateRef`` to the plan or benchmark template.

Contract with the WorkflowTemplates (rendered by the engines into ``charts/alas/workflows/``): the plan
template ``alas-plan`` takes the parameters ``run-id``, ``instance``, ``planner``, ``scenarios`` (JSON
list), ``seeds`` (JSON list) and ``time-limit``; the benchmark template ``alas-bench`` takes the same with
``suite`` instead of ``instance``. Either may export a global output parameter ``summary`` (a JSON object)
which the operator mirrors into the PlanRun's ``.status.summary``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from alas_argo.operator.actions import OperatorConfig
from alas_argo.operator.resources import API_VERSION, PlanRunSpec, Resource

__all__ = ["PLANRUN_LABEL", "label_value", "run_id", "workflow_manifest", "workflow_name"]

#: Label on every Workflow the operator creates, naming its PlanRun.
PLANRUN_LABEL = "alas.dev/planrun"
_MAX_NAME = 63


def _bounded(base: str, suffix: str) -> str:
    """``base-suffix`` cut to a valid 63-character name, a short hash keeping long names distinct."""
    name = f"{base}-{suffix}"
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(base.encode()).hexdigest()[:8]
    keep = _MAX_NAME - len(suffix) - len(digest) - 2
    return f"{base[:keep].rstrip('-.')}-{digest}-{suffix}"


def label_value(name: str) -> str:
    """``name`` as a label value (at most 63 characters; long names keep a distinguishing hash)."""
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[:_MAX_NAME - 9].rstrip('-.')}-{digest}"


def workflow_name(resource: Resource) -> str:
    """The Workflow of this generation of the PlanRun: a new spec gets a new workflow, deterministically
    (so a crashed operator that retries creates the same object and gets AlreadyExists)."""
    return _bounded(resource.name, f"g{resource.generation}")


def run_id(resource: Resource) -> str:
    """The execution-log run id of this generation of the PlanRun (stable, namespace-qualified)."""
    return f"{resource.namespace}.{workflow_name(resource)}"


def workflow_manifest(resource: Resource, spec: PlanRunSpec, config: OperatorConfig) -> dict[str, Any]:
    """The Workflow object to create for one generation of a PlanRun."""
    target = ("suite", spec.suite) if spec.fan_out else ("instance", spec.instance)
    parameters = [
        {"name": "run-id", "value": run_id(resource)},
        {"name": target[0], "value": target[1]},
        {"name": "planner", "value": spec.planner.value},
        {"name": "scenarios", "value": json.dumps(spec.scenarios)},
        {"name": "seeds", "value": json.dumps(spec.seeds)},
        {"name": "time-limit", "value": str(spec.time_limit)},
    ]
    workflow_spec: dict[str, Any] = {
        "workflowTemplateRef": {"name": config.bench_template if spec.fan_out else config.plan_template},
        "serviceAccountName": config.service_account,
        "arguments": {"parameters": parameters},
    }
    if spec.fan_out:
        workflow_spec["parallelism"] = spec.parallelism
    # Set here too, so Workflows stay cleaned up whichever templates they reference.
    if config.pod_gc is not None:
        workflow_spec["podGC"] = {"strategy": config.pod_gc}
    ttl = {key: value for key, value in (("secondsAfterSuccess", config.ttl_after_success),
                                         ("secondsAfterFailure", config.ttl_after_failure)) if value is not None}
    if ttl:
        workflow_spec["ttlStrategy"] = ttl
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Workflow",
        "metadata": {
            "name": workflow_name(resource),
            "namespace": resource.namespace,
            "labels": {PLANRUN_LABEL: label_value(resource.name), "app.kubernetes.io/managed-by": "alas-operator"},
            # Owned by the PlanRun: deleting the PlanRun garbage-collects its workflows.
            "ownerReferences": [{"apiVersion": API_VERSION, "kind": "PlanRun", "name": resource.name,
                                 "uid": resource.uid, "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": workflow_spec,
    }
