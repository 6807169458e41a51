"""Building each job agent's bounded context: its own job plus the calendar slice of the machines it visits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from alas_argo.agents.contracts import BusyWindow, JobContext
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance

__all__ = ["build_job_contexts", "replan_contexts"]


def build_job_contexts(
    instance: Instance,
    *,
    release: int = 0,
    fixed: Mapping[tuple[int, int], tuple[int, int]] | None = None,
    downtimes: Sequence[tuple[int, int, int]] = (),
    durations: Mapping[tuple[int, int], int] | None = None,
    feedback: Mapping[int, list[str]] | None = None,
    attempt: int = 0,
) -> list[JobContext]:
    """One context per job.

    Args:
        instance: The instance.
        release: No new operation may start before this time (the disruption's reveal time).
        fixed: Operations that have started and keep their times, as (job, step) -> (start, end). Other
            jobs' fixed operations become ``reserved`` busy windows on the machines this job visits.
        downtimes: Machine downtime windows as (machine, start, end).
        durations: Durations that override the nominal ones (disruptions).
        feedback: Validator messages per job from a previous attempt.
        attempt: Attempt number, passed through to the agents.
    """
    fixed = fixed or {}
    durations = durations or {}
    horizon = max(release, *(e for _, e in fixed.values()), *(e for _, _, e in downtimes), 0) + sum(
        durations.get((j, s), d) for j, ops in enumerate(instance.jobs) for s, (_, d) in enumerate(ops))
    contexts = []
    for j, ops in enumerate(instance.jobs):
        machines = {m for m, _ in ops}
        busy = [BusyWindow(machine=m, start=s, end=e, reason="downtime") for m, s, e in downtimes if m in machines]
        busy += [BusyWindow(machine=instance.machine(oj, os_), start=s, end=e, reason="reserved")
                 for (oj, os_), (s, e) in sorted(fixed.items())
                 if oj != j and instance.machine(oj, os_) in machines and e > release]
        contexts.append(JobContext(
            instance=instance.name,
            job=j,
            operations=[(m, durations.get((j, s), d)) for s, (m, d) in enumerate(ops)],
            release=release,
            fixed={s: se for (oj, s), se in fixed.items() if oj == j},
            busy=sorted(busy, key=lambda w: (w.machine, w.start)),
            horizon=horizon,
            attempt=attempt,
            feedback=list((feedback or {}).get(j, [])),
        ))
    return contexts


def replan_contexts(state: ExecutionState) -> list[JobContext]:
    """One context per job for re-planning after a disruption, from the plan in force at the reveal time.

    Started operations that were not interrupted are ``fixed`` at their start with their current duration
    (the other jobs see them as reserved windows); everything else starts at or after the reveal time; the
    machines' downtime is a busy window; durations are the current ones. An interrupted operation is not
    fixed: its machine's downtime window sends it after the breakdown.
    """
    starts = state.baseline.starts()
    fixed = {k: (starts[k], starts[k] + state.durations[k]) for k in sorted(state.frozen)}
    return build_job_contexts(state.instance, release=state.time, fixed=fixed, downtimes=state.downtimes,
                              durations=state.durations)
