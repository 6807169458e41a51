"""The job-shop domain: instances and bundled benchmarks, schedules, the independent validator, fault
injection, dispatching rules, the CP-SAT optimizer and LNS, disruptions, execution state, and repair.

Gantt charts (:mod:`alas_argo.jssp.gantt`) are not re-exported here so that importing the domain does not
import matplotlib. The entry points ``alas_argo.jssp.repair.repair`` and ``alas_argo.jssp.validate.validate`` are
not re-exported: a function of the same name would shadow its module as an attribute of this package.
"""

from alas_argo.jssp.catalog import FAMILIES, SUITES, bundled_names, get_instance, load_instance, suite
from alas_argo.jssp.cpsat import SolveRequest, SolveResult, SolveStatus, StabilityObjective, optimize
from alas_argo.jssp.dispatching import DispatchingRule, best_dispatch, dispatch
from alas_argo.jssp.disruption import (
    Disruption,
    DisruptionKind,
    DurationChange,
    MachineBreakdown,
    generate_disruption,
    generate_sequence,
)
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.execution import ExecutionState, OpStatus
from alas_argo.jssp.faults import FaultInjection, FaultKind, InjectedFault, inject_faults
from alas_argo.jssp.formats import InstanceFormat, parse_instance_text, read_instance_file
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.planning import SolveMethod, plan
from alas_argo.jssp.repair import RepairMethod, RepairResult
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.verdict import ValidationReport, Violation, ViolationCode

__all__ = [
    "FAMILIES",
    "SUITES",
    "DispatchingRule",
    "Disruption",
    "DisruptionKind",
    "DurationChange",
    "ExecutionState",
    "FaultInjection",
    "FaultKind",
    "InjectedFault",
    "Instance",
    "InstanceFormat",
    "MachineBreakdown",
    "OpStatus",
    "Operation",
    "RepairMethod",
    "RepairResult",
    "Schedule",
    "SolveMethod",
    "SolveRequest",
    "SolveResult",
    "SolveStatus",
    "StabilityObjective",
    "ValidationReport",
    "Violation",
    "ViolationCode",
    "best_dispatch",
    "bundled_names",
    "check_disruption",
    "dispatch",
    "generate_disruption",
    "generate_sequence",
    "get_instance",
    "inject_faults",
    "load_instance",
    "optimize",
    "parse_instance_text",
    "plan",
    "read_instance_file",
    "suite",
]
