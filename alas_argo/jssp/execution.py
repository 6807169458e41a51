"""Execution state of a plan at a reveal time: what is done, running, interrupted, pending and frozen.

This is the disruption semantics of docs/contracts.md turned into data every repair method shares:

- an operation that started before the reveal time is *frozen* at its start, with its (possibly changed)
  duration extending it in place;
- a started operation whose in-place interval overlaps a downtime of its machine is *interrupted*: it restarts from
  scratch, with its full duration, at or after the end of that downtime;
- every other operation is *pending*: it must start at or after the reveal time and avoid the downtime.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise
from typing import Any

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.disruption import Disruption, merged_downtimes
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_TIME
from alas_argo.jssp.schedule import Schedule

__all__ = ["ExecutionState", "Key", "OpStatus"]

Key = tuple[int, int]


class OpStatus(StrEnum):
    """Where an operation stands at the reveal time."""

    DONE = "done"
    RUNNING = "running"
    INTERRUPTED = "interrupted"
    PENDING = "pending"


def _overlaps(start: int, end: int, lo: int, hi: int) -> bool:
    return start < hi and lo < end


@dataclass(frozen=True)
class ExecutionState:
    """The plan in force seen from the reveal time of a disruption.

    Attributes:
        instance: The instance.
        baseline: The plan in force when the disruption is revealed.
        time: The reveal time.
        status: Per operation, done / running / interrupted / pending.
        durations: Per operation, its effective duration (nominal or changed).
        release: Per free (interrupted or pending) operation, its earliest allowed start.
        downtimes: ``(machine, start, end)`` windows, end exclusive; those of a machine that overlap or touch
            merged (:func:`.disruption.merged_downtimes`).
    """

    instance: Instance
    baseline: Schedule
    time: int
    status: dict[Key, OpStatus]
    durations: dict[Key, int]
    release: dict[Key, int]
    downtimes: list[tuple[int, int, int]] = field(default_factory=list)
    # What some accessors below derive from the fields, computed once: a repair reads them dozens of times
    # (once per CP-SAT request, settle pass, moved-operation count). They hand out copies, so a caller that
    # edits what it got changes nothing here; dict copies keep the order the first computation had.
    _memo: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def at(cls, instance: Instance, baseline: Schedule, disruption: Disruption | None = None,
           time: int | None = None) -> ExecutionState:
        """The state of ``baseline`` when ``disruption`` is revealed (or at ``time`` with no disruption).

        Raises:
            InfeasibleError: an interrupted operation already has a started job successor, so no plan can
                honour both (only possible when a breakdown began before its reveal time).
            InputError: the work left after the reveal (and the last downtime) could end past ``MAX_TIME``.
        """
        if disruption is None:
            disruption = Disruption(time=0 if time is None else time)
        t = disruption.time
        changes = disruption.duration_changes
        downtimes = merged_downtimes((b.machine, b.start, b.end) for b in disruption.breakdowns)
        ops = baseline.by_key()
        status: dict[Key, OpStatus] = {}
        durations: dict[Key, int] = {}
        release: dict[Key, int] = {}
        for j, job in enumerate(instance.jobs):
            for s, (m, nominal) in enumerate(job):
                key = (j, s)
                d = changes.get(key, nominal)
                durations[key] = d
                o = ops[key]
                if o.start >= t:
                    status[key] = OpStatus.PENDING
                    release[key] = t
                    continue
                # The in-place interval (start plus the possibly changed duration) decides, as in the
                # validator; a zero-length operation overlaps nothing.
                hit = [hi for mm, lo, hi in downtimes
                       if mm == m and d > 0 and _overlaps(o.start, o.start + d, lo, hi)]
                if hit:
                    status[key] = OpStatus.INTERRUPTED
                    release[key] = max(t, *hit)
                else:
                    status[key] = OpStatus.DONE if o.start + d <= t else OpStatus.RUNNING
        # Each time of a disruption lies within the contract's range, but together they can leave more work
        # than a plan can hold: a repair would end past MAX_TIME, and its plan could be neither written nor
        # validated. Work left from the last downtime's end (or the reveal) on bounds a serial plan's end.
        start = max([t, *(hi for _, _, hi in downtimes)])
        work = sum(d for k, d in durations.items() if status[k] is not OpStatus.DONE)
        if start + work > MAX_TIME:
            raise InputError(f"revealed at {t}, it leaves {work} time units of work from {start} on: a repaired "
                             f"plan could end past the largest time a plan holds ({MAX_TIME})", where="disruption")
        state = cls(instance, baseline, t, status, durations, release, downtimes)
        state._check_restarts()
        return state

    def _check_restarts(self) -> None:
        """Refuse a history no plan can honour: an interrupted operation whose job successor has started, or a
        started operation whose new duration, extended in place, would end after its job successor or the next
        operation on its machine had started (that operation could not have started yet)."""
        inst = self.instance
        starts = self.baseline.starts()
        for (j, s), st in self.status.items():
            if st is OpStatus.INTERRUPTED:
                for later in range(s + 1, len(inst.jobs[j])):
                    if self.status[(j, later)] in (OpStatus.DONE, OpStatus.RUNNING):
                        raise InfeasibleError(
                            "an interrupted operation must restart after the downtime but its job successor "
                            "has already started", where={"job": j, "step": s})
        grown = [k for k, st in self.status.items()
                 if st in (OpStatus.DONE, OpStatus.RUNNING) and self.durations[k] > inst.duration(*k)]
        if not grown:
            return  # the machine order is only needed for a started operation that grew
        after = {a: b for seq in self.baseline.machine_sequences().values() for a, b in pairwise(seq)}
        for k in grown:
            end = starts[k] + self.durations[k]
            successors = (((k[0], k[1] + 1), "its job successor"), (after.get(k), "the next operation on its machine"))
            for nxt, what in successors:
                if nxt in self.status and self.status[nxt] is not OpStatus.PENDING and starts[nxt] < end:
                    raise InfeasibleError(
                        f"a duration change to {self.durations[k]} makes a started operation end at {end}, after "
                        f"{what} (job {nxt[0]}, step {nxt[1]}) had started at {starts[nxt]}",
                        where={"job": k[0], "step": k[1]})

    def keys(self, *statuses: OpStatus) -> set[Key]:
        """The operations with one of ``statuses``."""
        return {k for k, st in self.status.items() if st in statuses}

    @property
    def done(self) -> set[Key]:
        """Finished by the reveal time."""
        return self.keys(OpStatus.DONE)

    @property
    def running(self) -> set[Key]:
        """Started and still running at the reveal time (not interrupted)."""
        return self.keys(OpStatus.RUNNING)

    @property
    def interrupted(self) -> set[Key]:
        """Started, then stopped by a breakdown of their machine: they restart after the downtime."""
        return self.keys(OpStatus.INTERRUPTED)

    @property
    def pending(self) -> set[Key]:
        """Not started by the reveal time."""
        return self.keys(OpStatus.PENDING)

    @property
    def frozen(self) -> set[Key]:
        """History: started and not interrupted, so their start is a constant for every repair."""
        return self.keys(OpStatus.DONE, OpStatus.RUNNING)

    @property
    def free(self) -> set[Key]:
        """What a repair may (re)time: pending and interrupted operations."""
        return self.keys(OpStatus.PENDING, OpStatus.INTERRUPTED)

    def frozen_starts(self) -> dict[Key, int]:
        """Start of every frozen operation (unchanged from the baseline)."""
        if "frozen_starts" not in self._memo:
            starts = self.planned_starts()
            self._memo["frozen_starts"] = {k: starts[k] for k in self.frozen}
        return dict(self._memo["frozen_starts"])

    def planned_starts(self) -> dict[Key, int]:
        """Start of every operation in the plan in force (``baseline.starts()``, computed once)."""
        if "planned_starts" not in self._memo:
            self._memo["planned_starts"] = self.baseline.starts()
        return dict(self._memo["planned_starts"])

    def min_starts(self, pinned: Set[Key]) -> dict[Key, int]:
        """Earliest starts after the reveal time that operations not in ``pinned`` must respect (interrupted
        operations restart after their downtime)."""
        return {k: r for k, r in self.release.items() if k not in pinned and r > self.time}

    def wip(self) -> set[Key]:
        """Work in progress: started operations plus the next pending operation of every machine."""
        if "wip" not in self._memo:
            out = self.keys(OpStatus.DONE, OpStatus.RUNNING, OpStatus.INTERRUPTED)
            for seq in self.baseline.machine_sequences().values():
                nxt = next((k for k in seq if self.status[k] is OpStatus.PENDING), None)
                if nxt is not None:
                    out.add(nxt)
            self._memo["wip"] = frozenset(out)
        return set(self._memo["wip"])

    def earliest_fit(self, machine: int, start: int, duration: int) -> int:
        """The earliest time at or after ``start`` where ``duration`` fits on ``machine`` between downtimes."""
        moved = duration > 0  # zero-length operations overlap nothing
        while moved:
            moved = False
            for m, lo, hi in self.downtimes:
                if m == machine and _overlaps(start, start + duration, lo, hi):
                    start, moved = hi, True
        return start

    def summary(self) -> dict[str, int]:
        """Counts per status, for logs and CLI output."""
        counts = {st.value: 0 for st in OpStatus}
        for st in self.status.values():
            counts[st.value] += 1
        counts["frozen"] = counts["done"] + counts["running"]
        return counts
