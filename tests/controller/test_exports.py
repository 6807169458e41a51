"""The public APIs of alas_argo.controller, alas_argo.operator and alas_argo.metrics are pinned."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

EXPECTED = {
    "alas_argo.controller": {"ControllerServer", "DisruptionRequest", "RepairResponse", "RepairService",
                             "RunNotFound", "carry_forward", "create_bucket", "create_bucket_when_reachable",
                             "parse_request", "serve"},
    "alas_argo.operator": {
        "API_VERSION", "DISRUPTION_PLURAL", "GROUP", "PLANRUN_LABEL", "PLANRUN_PLURAL", "VERSION", "Action",
        "CreateWorkflow", "DisruptionSpec", "Operator", "OperatorConfig", "PatchStatus", "Phase", "PlanRunSpec",
        "Planner", "PostDisruption", "PostOutcome", "ProbeServer", "Resource", "argo_phase", "connect", "parse_spec",
        "post_disruption", "reconcile_disruption", "reconcile_planrun", "run_id", "serve_probes", "status_after_post",
        "workflow_manifest", "workflow_name", "workflow_summary"},
    "alas_argo.metrics": {
        "MAX_LABEL_VALUES", "REGISTRY", "PolicyEvent", "RunOutcome", "count_http_request", "count_operator_action",
        "count_operator_failure", "observe_operator_pass",
        "count_plan_committed", "count_plan_retracted", "count_policy_event",
        "count_run_outcome", "exposition", "fold_samples", "label_value", "observe_llm_exchange", "observe_log_append",
        "observe_repair", "observe_repair_record", "samples", "Point",
        "observe_validation", "serve"},
}
MODULES = ["alas_argo.controller.bucket", "alas_argo.controller.contracts", "alas_argo.controller.http_server",
           "alas_argo.controller.repair_service", "alas_argo.operator.actions", "alas_argo.operator.health",
           "alas_argo.operator.manifests",
           "alas_argo.operator.reconciling", "alas_argo.operator.resources", "alas_argo.operator.running",
           "alas_argo.cli.serving"]


@pytest.mark.parametrize("package", sorted(EXPECTED))
def test_package_exports(package: str) -> None:
    module = importlib.import_module(package)
    assert set(module.__all__) == EXPECTED[package]
    for name in module.__all__:
        assert getattr(module, name) is not None


@pytest.mark.parametrize("name", MODULES)
def test_every_module_declares_all(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__
    for exported in module.__all__:
        assert hasattr(module, exported), f"{name}.{exported}"


def test_reconciler_is_pure() -> None:
    """The reconcile module does no I/O: it imports neither the kubernetes client nor the HTTP layer."""
    source = importlib.import_module("alas_argo.operator.reconciling").__file__
    assert source is not None
    text = Path(source).read_text(encoding="utf-8")
    for forbidden in ("kubernetes", "urllib", "requests", "socket", "time.time", "open("):
        assert forbidden not in text, forbidden
