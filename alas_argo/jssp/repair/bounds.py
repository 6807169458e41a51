"""A cheap lower bound on the makespan of any repair, from the execution state alone."""

from __future__ import annotations

from alas_argo.jssp.execution import ExecutionState

__all__ = ["lower_bound"]


def lower_bound(state: ExecutionState) -> int:
    """A cheap lower bound on the makespan of any repair: job chains and machine loads after the reveal."""
    inst, frozen = state.instance, state.frozen_starts()
    bound = max((s + state.durations[k] for k, s in frozen.items()), default=0)
    for j, ops in enumerate(inst.jobs):
        end = 0
        for s, (m, _) in enumerate(ops):
            k, d = (j, s), state.durations[(j, s)]
            end = frozen[k] + d if k in frozen else state.earliest_fit(m, max(end, state.release[k]), d) + d
        bound = max(bound, end)
    # Loads and frozen ends per machine in one pass each (not one scan of every operation per machine).
    load: dict[int, int] = {}
    for k in state.free:
        m = inst.machine(*k)
        load[m] = load.get(m, 0) + state.durations[k]
    ready_at: dict[int, int] = {}
    for k, s in frozen.items():
        m = inst.machine(*k)
        ready_at[m] = max(ready_at.get(m, state.time), s + state.durations[k])
    for m in range(inst.num_machines):
        if m not in load:
            continue
        ready = ready_at.get(m, state.time)
        end = ready + load[m]
        for mm, lo, hi in sorted(state.downtimes, key=lambda w: w[1]):
            if mm == m and hi > ready and lo < end:
                end += hi - max(lo, ready)
        bound = max(bound, end)
    return bound
