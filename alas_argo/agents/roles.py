"""The agent roles besides the job agents: validator, repairer, optimizer.

Each role gets a fresh, bounded input. In particular the validator role re-parses the schedule and the
instance from their JSON documents before it calls the independent validator, so it can never see (or be
fooled by) planner state — the non-circular validation ALAS depends on.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from alas_argo import metrics
from alas_argo.agents.supervisor import priority_decode
from alas_argo.jssp.dispatching import best_dispatch
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit, RepairResult, repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ValidationReport

__all__ = ["Improvement", "OptimizerBackend", "OptimizerRole", "RepairerRole", "ValidatorRole"]


class ValidatorRole:
    """Calls the independent validator on a fresh copy of the plan and the instance."""

    name = "validator"

    def check(self, instance: Instance, schedule: Schedule, *, disruption: Disruption | None = None,
              baseline: Schedule | None = None) -> ValidationReport:
        """The validator's report on ``schedule`` (fresh copies: no shared state with planners)."""
        fresh_instance = Instance.model_validate(instance.to_json())
        fresh_schedule = Schedule.model_validate(schedule.to_json())
        fresh_baseline = Schedule.model_validate(baseline.to_json()) if baseline is not None else None
        fresh_disruption = Disruption.model_validate(disruption.to_json()) if disruption is not None else None
        report = validate(fresh_instance, fresh_schedule, disruption=fresh_disruption, baseline=fresh_baseline)
        metrics.observe_validation(report.valid, (str(v.code) for v in report.violations))
        return report


class RepairerRole:
    """Repairs plans: local repair after a disruption (LCRP by default), and the *patch* of faulty plans."""

    name = "repairer"

    def __init__(self, method: str = "lcrp", *, budget: float = 10.0, seed: int = 0, workers: int = 2,
                 effort: float = 1.0, tolerance: float = 0.0, deterministic: bool = True,
                 first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> None:
        self.method = method
        self.budget = budget
        self.effort = effort
        self.tolerance = tolerance
        self.first_edit = FirstEdit.parse(first_edit)
        self.seed = seed
        self.workers = workers
        self.deterministic = deterministic

    def repair_disruption(self, instance: Instance, baseline: Schedule, disruption: Disruption) -> RepairResult:
        """Absorb ``disruption`` into the plan in force (``baseline``)."""
        return repair(instance, baseline, disruption, self.method, self.budget, seed=self.seed, workers=self.workers,
                      effort=self.effort, tolerance=self.tolerance, deterministic=self.deterministic,
                      first_edit=self.first_edit)

    def patch(self, instance: Instance, schedule: Schedule, *, release: int = 0,
              fixed: Mapping[tuple[int, int], tuple[int, int]] | None = None,
              min_starts: Mapping[tuple[int, int], int] | None = None,
              downtimes: Sequence[tuple[int, int, int]] = (),
              durations: Mapping[tuple[int, int], int] | None = None) -> Schedule:
        """Rebuild a feasible plan that keeps the faulty plan's order as far as possible.

        Uses the faulty start times as priorities; the instance's machines and durations are authoritative,
        missing operations come back, duplicates go. Started operations (``fixed``) stay where they are.
        """
        priorities: dict[tuple[int, int], float] = {}
        for op in sorted(schedule.operations, key=lambda o: o.start):
            if 0 <= op.job < instance.num_jobs and 0 <= op.step < len(instance.jobs[op.job]):
                priorities.setdefault((op.job, op.step), float(op.start))
        return priority_decode(instance, priorities, release=release, fixed=fixed, min_starts=min_starts,
                               downtimes=downtimes, durations=durations)


class OptimizerBackend(StrEnum):
    """How the optimizer role improves a valid plan."""

    HEURISTIC = "heuristic"
    CPSAT = "cpsat"


@dataclass(frozen=True)
class Improvement:
    """What the optimizer did."""

    schedule: Schedule
    method: str
    seconds: float
    limits: Mapping[str, Any] = field(default_factory=dict)


class OptimizerRole:
    """Improves a valid plan; never returns a worse one."""

    name = "optimizer"

    def __init__(self, backend: OptimizerBackend | str = OptimizerBackend.CPSAT, *, time_limit: float = 10.0,
                 workers: int = 2, seed: int = 0, deterministic: bool = True) -> None:
        self.backend = OptimizerBackend(backend)
        self.time_limit = time_limit
        self.workers = workers
        self.seed = seed
        self.deterministic = deterministic

    def improve(self, instance: Instance, schedule: Schedule) -> Improvement:
        """The better of ``schedule`` and what the backend finds (both start from the best dispatching rule)."""
        started = time.perf_counter()
        limits: Mapping[str, Any] = {}
        if self.backend is OptimizerBackend.CPSAT:
            from alas_argo.jssp.planning import plan  # CP-SAT only when asked for

            result = plan(instance, time_limit=self.time_limit, workers=self.workers, seed=self.seed,
                          deterministic=self.deterministic)
            found, method, limits = result.schedule, f"cpsat:{result.status}", result.limits
        else:
            rule, found = best_dispatch(instance)
            method = f"dispatch:{rule}"
        if found.makespan >= schedule.makespan:
            found, method = schedule, "supervisor"
        return Improvement(schedule=found, method=method, seconds=time.perf_counter() - started, limits=limits)
