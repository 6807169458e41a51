"""Builders shared by the pipeline's edge tests."""

from __future__ import annotations

from pathlib import Path

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import ExecutionLog, FsStore
from alas_argo.pipeline import RunConfig

__all__ = ["FT06", "TWO_BREAKDOWNS", "open_log", "plan_of"]

FT06 = get_instance("ft06")
#: ft06 planned by the heuristic, two generated breakdowns (seed 1): three versions, two LCRP repairs.
TWO_BREAKDOWNS = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", disruptions=2, seed=1,
                           time_limit=1, repair_budget=1)


def open_log(tmp_path: Path, run_id: str = "r") -> ExecutionLog:
    """Run ``run_id``'s log in a filesystem store under ``tmp_path``."""
    return ExecutionLog(FsStore(tmp_path / "store"), run_id)


def plan_of(log: ExecutionLog, version: int) -> Schedule:
    """Plan ``version`` of ``log`` as a schedule."""
    return Schedule.model_validate(log.plan(version))
