"""Seeded fault injection: break a valid schedule in labelled, detectable ways.

Used to prove the validator (each label must come back as a violation with the same code and job/step)
and to exercise repair. Every fault is placed so that it *must* produce its code whatever else was
injected: each fault records the operations its detection depends on, and later faults neither touch
nor depend on those. Extra violations may appear as side effects (moving an operation earlier can also
overlap a neighbour); the labelled one is guaranteed when the input schedule is valid.

This module deliberately does not call the validator: it reasons about the schedule directly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["FaultInjection", "FaultKind", "InjectedFault", "applicable_kinds", "inject_faults"]

Key = tuple[int, int]


class FaultKind(StrEnum):
    """Kinds of injectable faults; each value is the violation code it produces."""

    PRECEDENCE = "precedence"
    MACHINE_OVERLAP = "machine_overlap"
    WRONG_DURATION = "wrong_duration"
    MISSING_OPERATION = "missing_operation"
    DUPLICATE_OPERATION = "duplicate_operation"
    WRONG_MACHINE = "wrong_machine"
    NEGATIVE_START = "negative_start"
    #: Needs a disruption with ``time >= 1`` and a baseline.
    STARTED_IN_PAST = "started_in_past"
    #: Needs a disruption with a breakdown of positive duration.
    DOWNTIME_OVERLAP = "downtime_overlap"
    #: Needs a disruption and a baseline in which some operation started and was not interrupted.
    FROZEN_MOVED = "frozen_moved"


class InjectedFault(BaseModel):
    """One injected fault: its kind (= the expected violation code) and the operation it is about."""

    model_config = ConfigDict(frozen=True)

    kind: FaultKind = Field(description="What was broken; also the violation code it produces.")
    scope: dict[str, int] = Field(description="job and step of the broken operation, plus the machine and "
                                  "the other operation where that applies.")


class FaultInjection(BaseModel):
    """A faulty schedule and the labels of what was broken in it."""

    model_config = ConfigDict(frozen=True)

    schedule: Schedule = Field(description="The schedule with the faults in it; makespan recomputed.")
    faults: list[InjectedFault] = Field(description="The injected faults, in injection order.")

    def to_json(self) -> dict[str, Any]:
        """The injection as a JSON object."""
        return self.model_dump(mode="json")


class _Work:
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
        # Same rule as DESIGN.md section 4, restated here so that the injector does not lean on the validator.
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


def _precedence(w: _Work) -> InjectedFault | None:
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


def _machine_overlap(w: _Work) -> InjectedFault | None:
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


def _wrong_duration(w: _Work) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    w.ops[k][2] += 1
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.WRONG_DURATION, scope={"job": k[0], "step": k[1]})


def _missing(w: _Work) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    machine = w.ops.pop(k)[0]
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.MISSING_OPERATION, scope={"job": k[0], "step": k[1],
                                                                  "machine": machine})


def _duplicate(w: _Work) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    w.extra.append(k)
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.DUPLICATE_OPERATION, scope={"job": k[0], "step": k[1]})


def _wrong_machine(w: _Work) -> InjectedFault | None:
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


def _negative_start(w: _Work) -> InjectedFault | None:
    k = w.pick(w.free())
    if k is None:
        return None
    w.move(k, -1 - w.rng.randrange(3))
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.NEGATIVE_START, scope={"job": k[0], "step": k[1]})


def _started_in_past(w: _Work) -> InjectedFault | None:
    if w.disruption is None or w.baseline is None or w.disruption.time < 1:
        return None
    k = w.pick([k for k in w.free() if not w.started(k)])
    if k is None:
        return None
    w.move(k, w.disruption.time - 1)
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.STARTED_IN_PAST, scope={"job": k[0], "step": k[1]})


def _downtime_overlap(w: _Work) -> InjectedFault | None:
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


def _frozen_moved(w: _Work) -> InjectedFault | None:
    if w.disruption is None or w.baseline is None:
        return None
    k = w.pick([k for k in w.free() if w.started(k) and not w.interrupted(k)])
    if k is None:
        return None
    w.move(k, w.baseline[k] + 1 + w.rng.randrange(3))
    w.locked.add(k)
    return InjectedFault(kind=FaultKind.FROZEN_MOVED, scope={"job": k[0], "step": k[1]})


_INJECTORS: dict[FaultKind, Callable[[_Work], InjectedFault | None]] = {
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


def applicable_kinds(disruption: Disruption | None = None, baseline: Schedule | None = None) -> list[FaultKind]:
    """The fault kinds that the given context makes possible, in enum order."""
    kinds: list[FaultKind] = [k for k in FaultKind if k not in (FaultKind.STARTED_IN_PAST, FaultKind.DOWNTIME_OVERLAP,
                                                FaultKind.FROZEN_MOVED)]
    if disruption is not None:
        if baseline is not None and disruption.time >= 1:
            kinds.append(FaultKind.STARTED_IN_PAST)
        if any(b.duration > 0 for b in disruption.breakdowns):
            kinds.append(FaultKind.DOWNTIME_OVERLAP)
        if baseline is not None:
            kinds.append(FaultKind.FROZEN_MOVED)
    return kinds


def inject_faults(instance: Instance, schedule: Schedule, *, kinds: Sequence[FaultKind] | None = None,
                  count: int = 1, seed: int = 0, disruption: Disruption | None = None,
                  baseline: Schedule | None = None) -> FaultInjection:
    """Inject ``count`` labelled faults into a valid schedule, reproducibly.

    Fault ``i`` has kind ``kinds[i % len(kinds)]``; with ``kinds=None`` the kinds the context allows
    (see :func:`applicable_kinds`) are used in a seeded random order, skipping a kind that no operation
    suits any more. Targets are drawn with
    ``random.Random(seed)``, so the same arguments give the same result.

    Args:
        instance: The instance the schedule solves.
        schedule: A valid schedule (under ``disruption`` and ``baseline`` when given).
        kinds: Which fault kinds to inject, used in turn.
        count: How many faults to inject.
        seed: Seed of the target choice.
        disruption: The disruption the schedule answers; needed for the disruption-aware kinds.
        baseline: The plan in force before the disruption; needed for started_in_past and frozen_moved.

    Returns:
        The faulty schedule (makespan recomputed) and one label per fault.

    Raises:
        InputError: ``count`` is negative, ``kinds`` is empty, or a fault cannot be placed (no suitable
            operation left, or the kind needs a disruption or baseline that was not given).
    """
    if count < 0:
        raise InputError(f"fault count must be >= 0, got {count}")
    rng = random.Random(seed)
    if kinds is None:
        order = applicable_kinds(disruption, baseline)
        rng.shuffle(order)
    else:
        order = [FaultKind(k) for k in kinds]
        if not order:
            raise InputError("no fault kinds given")
    work = _Work(instance, schedule, disruption, baseline, rng)
    faults: list[InjectedFault] = []
    for i in range(count):
        # An explicit kind must be honoured; the default mix moves on to the next kind that still fits.
        tries = [order[i % len(order)]] if kinds is not None else order[i % len(order):] + order[:i % len(order)]
        fault, kind = None, tries[0]
        for kind in tries:
            if (fault := _INJECTORS[kind](work)) is not None:
                break
        if fault is None:
            raise InputError(f"cannot inject fault {i} of kind {kind}: no suitable operation, or it needs a "
                             "disruption/baseline that was not given", where=schedule.instance)
        faults.append(fault)
    return FaultInjection(schedule=work.schedule(schedule.instance), faults=faults)
