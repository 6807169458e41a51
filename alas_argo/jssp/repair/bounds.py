"""Lower bounds on the makespan of any repair, from the execution state alone.

Two bounds, the larger taken: the cheap one (job chains, machine loads after the reveal) and the one-machine
relaxation with heads and tails (each machine alone, operations preemptible, every operation after its job's
earliest head and followed by its job's remaining work: Jackson's preemptive schedule solves it exactly). LCRP
stops a search at the bound and scales its search time by the gap to it, so a tighter bound is time saved
where the plan is already optimal (bench/README.md, issue 17).
"""

from __future__ import annotations

import heapq

from alas_argo.jssp.execution import ExecutionState, Key

__all__ = ["cheap_bound", "jackson_preemptive", "lower_bound", "one_machine_bound"]


def _ready_at(state: ExecutionState) -> dict[int, int]:
    """Per machine, when its frozen (started) operations are done: nothing free runs on it before."""
    inst, ready = state.instance, dict[int, int]()
    for k, s in state.frozen_starts().items():
        m = inst.machine(*k)
        ready[m] = max(ready.get(m, state.time), s + state.durations[k])
    return ready


def lower_bound(state: ExecutionState) -> int:
    """A lower bound on the makespan of any repair: the larger of the cheap bound and
    :func:`one_machine_bound`."""
    return max(cheap_bound(state), one_machine_bound(state))


def cheap_bound(state: ExecutionState) -> int:
    """Job chains and machine loads after the reveal: LCRP's search times and thresholds were tuned on the gap
    to this bound (:func:`.lcrp._search_cap`)."""
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
    ready_at = _ready_at(state)
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


def one_machine_bound(state: ExecutionState) -> int:
    """The one-machine relaxation with heads and tails, per machine, the largest.

    A free operation's head is the earliest it can start (its job predecessors at their earliest, its release,
    the machine's frozen work, downtime it cannot fit before); its tail is the work left in its job after it. A
    downtime is an operation with no tail that cannot start before it begins: any plan is a feasible preemptive
    schedule of that problem, so its optimum (:func:`jackson_preemptive`) bounds every plan's makespan.
    """
    inst, frozen, ready = state.instance, state.frozen_starts(), _ready_at(state)
    per_machine: dict[int, list[tuple[int, int, int]]] = {}
    for j, ops in enumerate(inst.jobs):
        end = 0
        heads: dict[Key, int] = {}
        for s, (m, _) in enumerate(ops):
            k, d = (j, s), state.durations[(j, s)]
            if k in frozen:
                end = frozen[k] + d
                continue
            head = state.earliest_fit(m, max(end, state.release[k], ready.get(m, state.time)), d)
            heads[k], end = head, head + d
        tail = 0
        for s in range(len(ops) - 1, -1, -1):
            k = (j, s)
            if k in heads:
                per_machine.setdefault(inst.machine(*k), []).append((heads[k], state.durations[k], tail))
            tail += state.durations[k]
    for m, lo, hi in state.downtimes:
        begin = max(lo, state.time)
        if m in per_machine and hi > begin:
            per_machine[m].append((begin, hi - begin, 0))
    return max((jackson_preemptive(ops) for ops in per_machine.values()), default=0)


def jackson_preemptive(ops: list[tuple[int, int, int]]) -> int:
    """The least ``max(end + tail)`` of ``(head, duration, tail)`` operations on one machine when an operation may
    be interrupted and resumed: at every moment run the available operation with the longest tail (Jackson's
    preemptive schedule, optimal for this problem)."""
    pending = sorted(ops)
    ready: list[list[int]] = []  # [-tail, work left]
    t = best = i = 0
    while i < len(pending) or ready:
        if not ready:
            t = max(t, pending[i][0])
        while i < len(pending) and pending[i][0] <= t:
            _, duration, tail = pending[i]
            heapq.heappush(ready, [-tail, duration])
            i += 1
        negative_tail, left = ready[0]
        arrival = pending[i][0] if i < len(pending) else None
        if arrival is not None and t + left > arrival:
            # Run until the next arrival, which may have a longer tail.
            ready[0][1] = left - (arrival - t)
            t = arrival
        else:
            heapq.heappop(ready)
            t += left
            best = max(best, t - negative_tail)
    return best
