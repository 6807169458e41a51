"""Sequence-keeping repairs: right-shift and affected-operations rescheduling (AOR).

Both keep every machine's order of the plan in force and re-time the free operations with one forward pass
in a global topological order, so they are linear-time and always feasible:

- frozen operations (started, not interrupted) come first on their machine, at their start;
- free operations follow in their planned order: an operation starts at the latest of its floor, the
  release time, its job predecessor's end and its machine predecessor's end, moved past any downtime.

The floor is what tells the two apart. AOR (Abumaizar & Svestka 1997) uses the planned start, so only the
operations reachable from the disruption through job and machine successors move, each by the minimum
needed. Right-shift first pushes every pending operation right by the size of the disruption (the longest
downtime or duration increase), then lets the same pass absorb what is still infeasible.
"""

from __future__ import annotations

from alas_argo.jssp.execution import ExecutionState, Key, OpStatus
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["aor", "decode", "disruption_size", "right_shift"]


def _order(state: ExecutionState, starts: dict[Key, int]) -> list[Key]:
    """A topological order of the plan's job and machine arcs, frozen operations first.

    Frozen starts are all before the reveal time and free ones all after it, and the plan in force is
    feasible, so sorting by (free, planned start, job, step) respects every job and machine arc.
    """
    frozen = state.frozen
    return sorted(starts, key=lambda k: (k not in frozen, starts[k], k[0], k[1]))


def decode(state: ExecutionState, floors: dict[Key, int], order: list[Key] | None = None) -> Schedule:
    """Earliest start times for free operations in a fixed global order, never before their floor.

    Args:
        state: The execution state (frozen starts, durations, release times, downtimes).
        floors: Per free operation, the earliest start the caller allows (missing means no floor).
        order: A topological order of all operations that also fixes each machine's sequence; the plan in
            force's order when None.
    """
    inst = state.instance
    planned = state.planned_starts()
    order = _order(state, planned) if order is None else order
    machine_end: dict[int, int] = {}
    job_end: dict[int, int] = {}
    ops: list[Operation] = []
    for key in order:
        j, s = key
        m, d = inst.machine(j, s), state.durations[key]
        if state.status[key] in (OpStatus.DONE, OpStatus.RUNNING):
            start = planned[key]
        else:
            start = max(floors.get(key, 0), state.release[key], job_end.get(j, 0), machine_end.get(m, 0))
            start = state.earliest_fit(m, start, d)
        ops.append(Operation(job=j, step=s, machine=m, start=start, end=start + d))
        job_end[j] = max(job_end.get(j, 0), start + d)
        machine_end[m] = max(machine_end.get(m, 0), start + d)
    return Schedule.from_operations(inst.name, ops)


def disruption_size(state: ExecutionState) -> int:
    """The longest downtime, or failing that the largest duration increase: right-shift's uniform push."""
    longest = max((hi - lo for _, lo, hi in state.downtimes), default=0)
    if longest:
        return longest
    return max((state.durations[k] - state.instance.duration(*k) for k in state.free), default=0)


def aor(state: ExecutionState) -> Schedule:
    """Affected-operations rescheduling: delay only what the disruption reaches, by the minimum needed."""
    planned = state.planned_starts()
    return decode(state, {k: planned[k] for k in state.free})


def right_shift(state: ExecutionState) -> Schedule:
    """Right-shift: push every pending operation right by the disruption's size, then restore feasibility."""
    planned = state.planned_starts()
    delta = disruption_size(state)
    return decode(state, {k: planned[k] + (delta if state.status[k] is OpStatus.PENDING else 0)
                          for k in state.free})
