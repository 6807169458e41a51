"""Validator throughput: how many operations per second :func:`validate` checks on a valid schedule.

The schedule is built here by a plain semi-active decode (jobs taken round-robin, step by step), so the
benchmark depends on no planner. Two scenarios are timed: ``static`` (instance checks only) and
``disruption`` (the same schedule read against a baseline and a disruption revealed halfway, with a
breakdown after the horizon so the schedule stays valid and every disruption-aware check runs in full).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from pydantic import BaseModel, Field

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import validate

__all__ = ["ValidatorTiming", "benchmark_validator", "round_robin_schedule"]


class ValidatorTiming(BaseModel):
    """Timing of one validator scenario."""

    instance: str = Field(description="Instance name.")
    size: str = Field(description="jobs x machines.")
    scenario: str = Field(description="`static` or `disruption`.")
    operations: int = Field(description="Operations per validated schedule.")
    repeat: int = Field(description="Timed validate() calls.")
    median_seconds: float = Field(description="Median time of one call.")
    best_seconds: float = Field(description="Fastest call.")
    ops_per_second: float = Field(description="operations / median_seconds.")
    valid: bool = Field(description="The verdict (the benchmark schedule is built valid; false is a bug).")


def round_robin_schedule(instance: Instance) -> Schedule:
    """A valid semi-active schedule: step 0 of every job, then step 1 of every job, and so on.

    Each operation starts as soon as its job predecessor and its machine's previous operation are done,
    which is feasible for any instance because operations are appended in a precedence-respecting order.
    """
    job_ready = [0] * instance.num_jobs
    machine_ready = [0] * instance.num_machines
    ops = []
    for s in range(max(len(ops) for ops in instance.jobs)):
        for j, job in enumerate(instance.jobs):
            if s < len(job):
                m, d = job[s]
                start = max(job_ready[j], machine_ready[m])
                job_ready[j] = machine_ready[m] = start + d
                ops.append(Operation(job=j, step=s, machine=m, start=start, end=start + d))
    return Schedule.from_operations(instance.name, ops)


def _time(call: Callable[[], bool], repeat: int, clock: Callable[[], float]) -> tuple[list[float], bool]:
    valid = call()  # warm-up: fills the validator's per-instance cache, as a revalidation loop would
    samples = []
    for _ in range(repeat):
        t0 = clock()
        valid = call() and valid
        samples.append(clock() - t0)
    return samples, valid


def benchmark_validator(instance: Instance, *, repeat: int = 50,
                        clock: Callable[[], float] = time.perf_counter) -> list[ValidatorTiming]:
    """Time :func:`validate` on a valid schedule of ``instance``, with and without a disruption.

    Args:
        instance: The instance (the issue's target is ta71, 100 x 20).
        repeat: Timed calls per scenario (after one warm-up call).
        clock: Monotonic clock in seconds; injectable for tests.

    Returns:
        One timing per scenario, ``static`` first.

    Raises:
        InputError: ``repeat`` is below 1.
    """
    if repeat < 1:
        raise InputError(f"repeat must be at least 1, got {repeat}")
    schedule = round_robin_schedule(instance)
    disruption = Disruption(time=schedule.makespan // 2, events=[
        MachineBreakdown(machine=0, start=schedule.makespan, duration=10)])
    scenarios: dict[str, Callable[[], bool]] = {
        "static": lambda: validate(instance, schedule).valid,
        "disruption": lambda: validate(instance, schedule, disruption=disruption, baseline=schedule).valid,
    }
    out = []
    for name, call in scenarios.items():
        samples, valid = _time(call, repeat, clock)
        median = statistics.median(samples)
        out.append(ValidatorTiming(
            instance=instance.name, size=instance.size, scenario=name, operations=instance.num_operations,
            repeat=repeat, median_seconds=median, best_seconds=min(samples),
            ops_per_second=instance.num_operations / max(median, 1e-9), valid=valid))
    return out
