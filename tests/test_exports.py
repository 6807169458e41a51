"""Every package's public names are pinned: changing them is a deliberate, reviewed act (CONVENTIONS 2).

Packages with their own pin test (engines, log, controller) are covered there.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import alas_argo

PINNED = {
    "alas_argo.jssp": [
        "FAMILIES", "SUITES", "DispatchingRule", "Disruption", "DisruptionKind", "DurationChange", "ExecutionState",
        "FaultInjection", "FaultKind", "InjectedFault", "Instance", "InstanceFormat", "MachineBreakdown",
        "OpStatus", "Operation", "RepairMethod", "RepairResult", "Schedule", "SolveMethod", "SolveRequest",
        "SolveResult", "SolveStatus", "StabilityObjective", "ValidationReport", "Violation", "ViolationCode",
        "best_dispatch", "bundled_names", "check_disruption", "dispatch", "generate_disruption",
        "generate_sequence", "get_instance", "inject_faults", "load_instance", "optimize", "parse_instance_text",
        "plan", "read_instance_file", "suite"],
    "alas_argo.agents": [
        "AgentRegistry", "BusyWindow", "HeuristicPlanner", "Instantiated", "JobContext", "JobProposal",
        "MergeMode", "OptimizerBackend", "OptimizerRole", "PlannerBackend", "ProposedOperation", "RepairerRole",
        "Role", "Supervisor", "ValidatorRole", "build_job_contexts", "default_registry", "earliest_fit",
        "priority_decode"],
    "alas_argo.pipeline": ["PipelineResult", "RunConfig", "Stages", "Variant", "build_workflow",
                           "load_disruptions", "run_pipeline"],
}


@pytest.mark.parametrize("package", sorted(PINNED))
def test_pinned_exports(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(PINNED[package])
    assert all(hasattr(module, name) for name in module.__all__)


def _modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(alas_argo.__path__, "alas_argo.")]


@pytest.mark.parametrize("name", _modules())
def test_every_module_declares_its_public_api(name: str) -> None:
    module = importlib.import_module(name)
    assert isinstance(getattr(module, "__all__", None), list | tuple), f"{name} has no __all__"
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"


#: Names that moved to a module of their own when an import circle was broken or a module split; the old
#: module re-exports them (the same object), so every import path callers use keeps working.
MOVED = [
    ("alas_argo.log.store", "alas_argo.log.backend", ["RecordNotFound", "Store", "check_key"]),
    ("alas_argo.runtime.lifecycle", "alas_argo.runtime.result", ["Outcome"]),
    ("alas_argo.steps", "alas_argo.step_context",
     ["Handler", "StepContext", "StepInput", "StepOutput", "holds", "output_key"]),
    ("alas_argo.jssp.faults", "alas_argo.jssp.fault_labels", ["FaultInjection", "FaultKind", "InjectedFault"]),
    ("alas_argo.log.verification", "alas_argo.log.verify_report", ["Problem", "VerifyReport"]),
]


@pytest.mark.parametrize(("old", "new", "names"), MOVED, ids=[m[0] for m in MOVED])
def test_moved_names_are_re_exported_from_their_old_module(old: str, new: str, names: list[str]) -> None:
    before, after = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert name in before.__all__ and getattr(before, name) is getattr(after, name), name


def test_the_log_extends_the_chain() -> None:
    from alas_argo.log.chain import EventChain
    from alas_argo.log.execution_log import ExecutionLog

    assert issubclass(ExecutionLog, EventChain)
