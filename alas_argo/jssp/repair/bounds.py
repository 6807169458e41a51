"""Lower bounds on the makespan of any repair, from the execution state alone.

Two bounds, the larger taken: the cheap one (job chains, machine loads after the reveal) and the one-machine
relaxation with heads and tails (each machine alone, operations preemptible, every operation after its job's
earliest head and followed by its job's remaining work: Jackson's preemptive schedule solves it exactly). LCRP
stops a search at the bound and scales its search time by the gap to it, so a tighter bound is time saved
where the plan is already optimal (bench/README.md, issue 17).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

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
    downtime is time the machine cannot work, not an operation: its own end counts for nothing (a downtime
    after a machine's last operation does not lengthen any plan). Any plan is a feasible preemptive schedule
    of that problem, so its optimum (:func:`jackson_preemptive`) bounds every plan's makespan.
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
    blocked: dict[int, list[tuple[int, int]]] = {}
    for m, lo, hi in state.downtimes:
        begin = max(lo, state.time)
        if hi > begin:
            blocked.setdefault(m, []).append((begin, hi))
    return max((jackson_preemptive(ops, blocked.get(m, ())) for m, ops in per_machine.items()), default=0)


def jackson_preemptive(ops: list[tuple[int, int, int]], blocked: Iterable[tuple[int, int]] = ()) -> int:
    """The least ``max(end + tail)`` of ``(head, duration, tail)`` operations on one machine when an operation may
    be interrupted and resumed, and the machine does no work in the ``blocked`` intervals ``[lo, hi)``: at every
    moment the machine can work, run the available operation with the longest tail (Jackson's preemptive
    schedule; with resumable operations, time the machine cannot work only removes time slots, and the exchange
    argument that makes the rule optimal holds slot by slot)."""
    pending = sorted(ops)
    windows = sorted((lo, hi) for lo, hi in blocked if hi > lo)
    ready: list[list[int]] = []  # [-tail, work left]
    t = best = i = w = 0
    while i < len(pending) or ready:
        if not ready:
            t = max(t, pending[i][0])
        while w < len(windows) and windows[w][1] <= t:
            w += 1
        if w < len(windows) and windows[w][0] <= t:
            t = windows[w][1]  # the machine is down: nothing runs until it is back
            continue
        while i < len(pending) and pending[i][0] <= t:
            _, duration, tail = pending[i]
            heapq.heappush(ready, [-tail, duration])
            i += 1
        negative_tail, left = ready[0]
        # Run until the next arrival (which may have a longer tail) or the next downtime, whichever is first.
        done = t + left
        stop = min(pending[i][0] if i < len(pending) else done, windows[w][0] if w < len(windows) else done)
        if done > stop:
            ready[0][1] = left - (stop - t)
            t = stop
        else:
            heapq.heappop(ready)
            t += left
            best = max(best, t - negative_tail)
    return best
