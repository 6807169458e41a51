"""Settling a repaired plan back towards the plan in force without touching its machine order.

A CP-SAT plan that meets a makespan target usually leaves slack on most operations, and where it puts an
operation inside that slack is arbitrary. For a fixed machine order, the slack of every operation is an
interval ``[earliest, latest]``: earliest from its job and machine predecessors (forward pass), latest from
its successors and the makespan target (backward pass), both stepping around downtimes. Placing each
operation, in topological order, at its planned start when that lies in its interval (else at its earliest
start) is always feasible and keeps the makespan within the target: every predecessor ends by the latest
start of its successors, so each interval stays non-empty. One linear pass, no solver.

Operations the caller holds (frozen history, everything outside an LCRP neighbourhood) keep their start.
"""

from __future__ import annotations

from collections.abc import Set
from itertools import pairwise

from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["latest_fit", "restore", "settle"]


def latest_fit(state: ExecutionState, machine: int, start: int, duration: int) -> int:
    """The latest time at or before ``start`` where ``duration`` fits on ``machine`` between downtimes."""
    moved = duration > 0  # zero-length operations overlap nothing
    while moved:
        moved = False
        for m, lo, hi in state.downtimes:
            if m == machine and start < hi and lo < start + duration:
                start, moved = lo - duration, True
    return start


def _topological(plan: Schedule, succ: dict[Key, list[Key]]) -> list[Key]:
    indegree = {k: 0 for k in plan.starts()}
    for targets in succ.values():
        for t in targets:
            indegree[t] += 1
    ready = sorted((k for k, n in indegree.items() if n == 0), reverse=True)
    order: list[Key] = []
    while ready:
        k = ready.pop()
        order.append(k)
        for t in succ.get(k, ()):
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    return order


def settle(state: ExecutionState, plan: Schedule, target: int, *, held: Set[Key] = frozenset()) -> Schedule:
    """Re-time ``plan`` in its own machine order: each free operation at its planned start where the slack
    allows, else as early as possible; the makespan stays at or below ``max(target, plan.makespan)``.

    Args:
        state: The execution state (durations, releases, downtimes, the plan in force).
        plan: A feasible plan for ``state``.
        target: The makespan to stay within.
        held: Free operations that must keep their start in ``plan`` (besides the frozen ones).

    Returns:
        The settled plan, or ``plan`` itself when nothing changed.
    """
    inst, d = state.instance, state.durations
    planned, current = state.planned_starts(), plan.starts()
    free = state.free  # computed per access: once here, not once per operation
    fixed = {k for k in current if k not in free or k in held}
    target = max(target, plan.makespan)
    succ: dict[Key, list[Key]] = {}
    pred: dict[Key, list[Key]] = {}

    def arc(a: Key, b: Key) -> None:
        succ.setdefault(a, []).append(b)
        pred.setdefault(b, []).append(a)

    for j, ops in enumerate(inst.jobs):
        for s in range(1, len(ops)):
            arc((j, s - 1), (j, s))
    for seq in plan.machine_sequences().values():
        for a, b in pairwise(seq):
            arc(a, b)
    order = _topological(plan, succ)
    if len(order) != len(current):
        return plan  # a cycle can only come from ties among zero-length operations: leave such plans alone
    latest: dict[Key, int] = {}
    for k in reversed(order):
        if k in fixed:
            latest[k] = current[k]
            continue
        end = min([target, *(latest[t] for t in succ.get(k, ()))])
        latest[k] = latest_fit(state, inst.machine(*k), end - d[k], d[k])
    starts: dict[Key, int] = {}
    for k in order:
        if k in fixed:
            starts[k] = current[k]
            continue
        m = inst.machine(*k)
        ready = max([state.release[k], *(starts[p] + d[p] for p in pred.get(k, ()))])
        earliest = state.earliest_fit(m, ready, d[k])
        p = planned[k]
        fits = earliest <= p <= latest[k] and state.earliest_fit(m, p, d[k]) == p
        starts[k] = p if fits else earliest
    if starts == current:
        return plan
    return _retimed(plan, starts, d)


def restore(state: ExecutionState, plan: Schedule, target: int | None = None, *,
            held: Set[Key] = frozenset()) -> Schedule:
    """Greedily put moved operations back at their planned start wherever that is still feasible.

    A time-limited neighbourhood solve can stop short of the least shift; this pass is linear-ish and only
    ever moves an operation back to where the plan in force had it, so it never leaves the neighbourhood.

    Args:
        state: The execution state (durations, releases, downtimes, the plan in force).
        plan: A feasible plan for ``state``.
        target: When given, no operation goes back to a start that would end it after
            ``max(target, plan.makespan)``: the makespan stays within it. Without it, a planned start late in
            the plan in force can lengthen the plan (la01 in the tests: 682 -> 735), and a caller that keeps
            its makespan would have to drop every other operation the pass put back with it.
        held: Free operations that keep their start in ``plan``.

    Returns:
        The restored plan, or ``plan`` itself when nothing went back.
    """
    inst, planned = state.instance, state.planned_starts()
    starts = plan.starts()
    d = state.durations
    end_limit = None if target is None else max(target, plan.makespan)
    on_machine: dict[int, list[Key]] = {}
    for k in starts:
        on_machine.setdefault(inst.machine(*k), []).append(k)
    changed, progress = False, True
    while progress:
        progress = False
        for k in sorted(state.free - held, key=lambda k: planned[k]):
            s = planned[k]
            if starts[k] == s or s < state.release[k]:
                continue
            if end_limit is not None and s + d[k] > end_limit:
                continue
            j, step, m = k[0], k[1], inst.machine(*k)
            if step and starts[(j, step - 1)] + d[(j, step - 1)] > s:
                continue
            if step + 1 < len(inst.jobs[j]) and starts[(j, step + 1)] < s + d[k]:
                continue
            if d[k] and state.earliest_fit(m, s, d[k]) != s:
                continue
            if any(o != k and d[o] and d[k] and starts[o] < s + d[k] and s < starts[o] + d[o]
                   for o in on_machine[m]):
                continue
            starts[k], changed, progress = s, True, True
    if not changed:
        return plan
    return _retimed(plan, starts, d)


def _retimed(plan: Schedule, starts: dict[Key, int], d: dict[Key, int]) -> Schedule:
    # model_construct: every field comes from a validated operation and an integer start, and pydantic's
    # model_copy was a third of these passes' time (profiled on 20x15 repairs). An operation that keeps its
    # interval is the same frozen operation: reused, not rebuilt (most of them, after a settle pass).
    ops = []
    for o in plan.operations:
        k = (o.job, o.step)
        start, end = starts[k], starts[k] + d[k]
        ops.append(o if o.start == start and o.end == end else
                   Operation.model_construct(job=o.job, step=o.step, machine=o.machine, start=start, end=end))
    return Schedule.from_operations(plan.instance, ops)
