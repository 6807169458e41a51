"""Kubernetes operator: PlanRun and Disruption custom resources -> Argo Workflows and controller repairs.

The logic is pure (:mod:`alas_argo.operator.reconciling`); :mod:`alas_argo.operator.running` is the thin
I/O around it. See ``operators/README.md``.
"""

from __future__ import annotations

from alas_argo.operator.actions import (
    Action,
    CreateWorkflow,
    OperatorConfig,
    PatchStatus,
    PostDisruption,
    PostOutcome,
)
from alas_argo.operator.health import ProbeServer, serve_probes
from alas_argo.operator.manifests import PLANRUN_LABEL, run_id, workflow_manifest, workflow_name
from alas_argo.operator.reconciling import (
    argo_phase,
    reconcile_disruption,
    reconcile_planrun,
    status_after_post,
    workflow_summary,
)
from alas_argo.operator.resources import (
    API_VERSION,
    DISRUPTION_PLURAL,
    GROUP,
    PLANRUN_PLURAL,
    VERSION,
    DisruptionSpec,
    Phase,
    Planner,
    PlanRunSpec,
    Resource,
    parse_spec,
)
from alas_argo.operator.running import Operator, connect, post_disruption

__all__ = [
    "API_VERSION",
    "DISRUPTION_PLURAL",
    "GROUP",
    "PLANRUN_LABEL",
    "PLANRUN_PLURAL",
    "VERSION",
    "Action",
    "CreateWorkflow",
    "DisruptionSpec",
    "Operator",
    "OperatorConfig",
    "PatchStatus",
    "Phase",
    "PlanRunSpec",
    "Planner",
    "PostDisruption",
    "PostOutcome",
    "ProbeServer",
    "Resource",
    "argo_phase",
    "connect",
    "parse_spec",
    "post_disruption",
    "reconcile_disruption",
    "reconcile_planrun",
    "run_id",
    "serve_probes",
    "status_after_post",
    "workflow_manifest",
    "workflow_name",
    "workflow_summary",
]
