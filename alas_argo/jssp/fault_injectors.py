"""One injector per fault kind, and the workbench they share (see :mod:`alas_argo.jssp.faults`).

Each injector breaks one operation that no earlier fault touched or depends on, locks what its detection
depends on, and returns the fault's label; None when no operation suits it. Like the rest of fault
injection it reasons about the schedule directly and never calls the validator.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.fault_labels import FaultKind, InjectedFault
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["INJECTORS", "Workbench"]

Key = tuple[int, int]


class Workbench:
    """A mutable copy of the schedule plus what injected faults touch or depend on."""

    def __init__(self, instance: Instance, schedule: Schedule, disruption: Disruption | None,
                 baseline: Schedule | None, rng: random.Random) -> None:
        self.instance, self.disruption, self.rng = instance, disruption, rng
        self.ops: dict[Key, list[int]] = {o.key: [o.machine, o.start, o.end] for o in schedule.operations}
        self.order: list[Key] = list(self.ops)
        self.extra: list[Key] = []  # duplicated entries, appended at the end
        self.locked: set[Key] = set()
        self.baseline = baseline.starts() if baseline is not None else None

    def free(self) -> list[Key]:
        return [k for k in self.order if k in self.ops and k not in self.locked]

    def length(self, k: Key) -> int:
        return self.ops[k][2] - self.ops[k][1]

    def move(self, k: Key, start: int) -> None:
        self.ops[k][1:] = [start, start + self.length(k)]

    def pick(self, candidates: list[Any]) -> Any:
        return self.rng.choice(candidates) if candidates else None

    def effective(self, k: Key) -> int:
        changes = self.disruption.duration_changes if self.disruption else {}
        return changes.get(k, self.instance.duration(*k))

    def started(self, k: Key) -> bool:
        assert self.disruption is not None and self.baseline is not None
        return k in self.baseline and self.baseline[k] < self.disruption.time

    def interrupted(self, k: Key) -> bool:
        # The validator's rule (docs/contracts.md, disruption semantics), restated so as not to lean on it.
        assert self.disruption is not None and self.baseline is not None
        start = self.baseline[k]
        end = start + self.effective(k)
        return any(b.machine == self.instance.machine(*k) and start < b.end and b.start < end and end > start
                   for b in self.disruption.breakdowns if b.duration > 0)

    def schedule(self, name: str) -> Schedule:
        ops = [Operation(job=k[0], step=k[1], machine=v[0], start=v[1], end=v[2]) for k in self.order
               if (v := self.ops.get(k)) is not None]
        ops += [Operation(job=k[0], step=k[1], machine=v[0], start=v[1], end=v[2]) for k in self.extra
                if (v := self.ops.get(k)) is not None]
        return Schedule(instance=name, makespan=max((o.end for o in ops), default=0), operations=ops)


def _precedence(w: Workbench) -> InjectedFault | None:
    # Start one time unit before the job predecessor ends; the predecessor must have positive length.
    cands = [k for k in w.free() if k[1] > 0 and (k[0], k[1] - 1) in w.ops
             and (k[0], k[1] - 1) not in w.locked and w.length((k[0], k[1] - 1)) > 0]
    k = w.pick(cands)
    if k is None:
        return None
    pred = (k[0], k[1] - 1)
    w.move(k, w.ops[pred][2] - 1)
    w.locked |= {k, pred}
    return InjectedFault(kind=FaultKind.PRECEDENCE, scope={"job": k[0], "step": k[1], "other_job": k[0],
                                                           "other_step": pred[1]})


def _machine_overlap(w: Workbench) -> InjectedFault | None:
    # Put A inside B's interval so that A sorts after B (later start, or same start and later end): then A
    # starts before something earlier on its machine ends, whatever else runs there.
    by_machine: dict[int, list[Key]] = {}
    for k in w.free():
        if w.length(k) > 0:
            by_machine.setdefault(w.ops[k][0], []).append(k)
    bs = [b for ks in by_machine.values() if len(ks) >= 2 for b in ks]
    w.rng.shuffle(bs)
    for b in bs:
        long_b = w.length(b) >= 2
        partners = [a for a in by_machine[w.ops[b][0]] if a != b and (long_b or w.length(a) >= 2)]
        if partners:
            a = w.pick(partners)
            w.move(a, max(w.ops[b][1], w.ops[b][2] - 1))
            w.locked |= {a, b}
            return InjectedFault(kind=FaultKind.MACHINE_OVERLAP, scope={"job": a[0], "step": a[1],
                                 "machine": w.ops[a][0], "other_job": b[0], "other_step": b[1]})
    return None


def _wrong_duration(w: Workbench) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    w.ops[k][2] += 1
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.WRONG_DURATION, scope={"job": k[0], "step": k[1]})


def _missing(w: Workbench) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    machine = w.ops.pop(k)[0]
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.MISSING_OPERATION, scope={"job": k[0], "step": k[1],
                                                                  "machine": machine})


def _duplicate(w: Workbench) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    w.extra.append(k)
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.DUPLICATE_OPERATION, scope={"job": k[0], "step": k[1]})


def _wrong_machine(w: Workbench) -> InjectedFault | None:
    if w.instance.num_machines < 2:
        return None
    k = w.pick(w.free())
    if k is None:
        return None
    w.ops[k][0] = (w.instance.machine(*k) + 1 + w.rng.randrange(w.instance.num_machines - 1)) \
        % w.instance.num_machines
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.WRONG_MACHINE, scope={"job": k[0], "step": k[1],
                                                              "machine": w.ops[k][0]})


def _negative_start(w: Workbench) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    w.move(k, -1 - w.rng.randrange(3))
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.NEGATIVE_START, scope={"job": k[0], "step": k[1]})


def _started_in_past(w: Workbench) -> InjectedFault | None:
    if w.disruption is None or w.baseline is None or w.disruption.time < 1:
        return None
    k = w.pick([k for k in w.free() if not w.started(k)])
    if k is None:
        return None
    w.move(k, w.disruption.time - 1)
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.STARTED_IN_PAST, scope={"job": k[0], "step": k[1]})


def _downtime_overlap(w: Workbench) -> InjectedFault | None:
    if w.disruption is None:
        return None
    cands = [(k, b) for b in w.disruption.breakdowns if b.duration > 0
             for k in w.free() if w.ops[k][0] == b.machine and w.length(k) > 0]
    pick = w.pick(cands)
    if pick is None:
        return None
    k, b = pick
    w.move(k, b.start)
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.DOWNTIME_OVERLAP, scope={"job": k[0], "step": k[1],
                                                                 "machine": b.machine})


def _frozen_moved(w: Workbench) -> InjectedFault | None:
    if w.disruption is None or w.baseline is None:
        return None
    k = w.pick([k for k in w.free() if w.started(k) and not w.interrupted(k)])
    if k is None:
        return None
    w.move(k, w.baseline[k] + 1 + w.rng.randrange(3))
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.FROZEN_MOVED, scope={"job": k[0], "step": k[1]})


INJECTORS: dict[FaultKind, Callable[[Workbench], InjectedFault | None]] = {
    FaultKind.PRECEDENCE: _precedence,
    FaultKind.MACHINE_OVERLAP: _machine_overlap,
    FaultKind.WRONG_DURATION: _wrong_duration,
    FaultKind.MISSING_OPERATION: _missing,
    FaultKind.DUPLICATE_OPERATION: _duplicate,
    FaultKind.WRONG_MACHINE: _wrong_machine,
    FaultKind.NEGATIVE_START: _negative_start,
    FaultKind.STARTED_IN_PAST: _started_in_past,
    FaultKind.DOWNTIME_OVERLAP: _downtime_overlap,
    FaultKind.FROZEN_MOVED: _frozen_moved,
}
