"""A schedule as machine sequences, evaluated exactly by longest paths in the disjunctive graph.

Local search (:mod:`alas_argo.jssp.lns`) edits sequences, not start times; this module turns sequences
back into the earliest (semi-active) start times, the makespan and the tails (longest path from an
operation's end to the makespan) in two linear passes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from functools import cached_property
from itertools import pairwise

from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["Sequences"]


class Sequences:
    """Machine sequences of one instance with their earliest start times. Operations are numbered
    ``offset[job] + step``."""

    def __init__(self, instance: Instance, duration: list[int], seqs: list[list[int]], release: int,
                 start: list[int]) -> None:
        self.instance = instance
        self.duration = duration
        self.seqs = seqs
        self.release = release
        self.start = start
        self.offsets = [0]
        for ops in instance.jobs:
            self.offsets.append(self.offsets[-1] + len(ops))
        self.job_of = [j for j, ops in enumerate(instance.jobs) for _ in ops]
        self.machine = [m for ops in instance.jobs for m, _ in ops]
        self.mpred = [-1] * len(duration)
        self.msucc = [-1] * len(duration)
        for seq in seqs:
            for a, b in pairwise(seq):
                self.msucc[a], self.mpred[b] = b, a
        self.makespan = max((s + d for s, d in zip(start, duration, strict=True)), default=0)

    @classmethod
    def from_schedule(cls, instance: Instance, schedule: Schedule, *, durations: Mapping[tuple[int, int], int],
                      release: int = 0) -> Sequences:
        """The sequences of a complete schedule (machine order = start order), left-shifted.

        Raises:
            InputError: The schedule is not a complete schedule of the instance.
        """
        duration = [durations.get((j, s), d) for j, ops in enumerate(instance.jobs) for s, (_, d) in enumerate(ops)]
        offsets = [0]
        for ops in instance.jobs:
            offsets.append(offsets[-1] + len(ops))
        by_key = schedule.by_key()
        # Every key must be an operation of the instance: a negative step would otherwise index from the end.
        unknown = sorted(key for key in by_key if not (0 <= key[0] < len(instance.jobs)
                                                        and 0 <= key[1] < len(instance.jobs[key[0]])))
        if unknown:
            raise InputError(f"incumbent schedule has operation {unknown[0]}, which the instance does not have",
                             where=schedule.instance)
        if len(by_key) != len(duration):
            raise InputError("incumbent schedule is incomplete", where=schedule.instance)
        seqs: list[list[int]] = [[] for _ in range(instance.num_machines)]
        for key, _ in sorted(by_key.items(), key=lambda kv: (kv[1].start, kv[1].end, kv[0])):
            seqs[instance.machine(*key)].append(offsets[key[0]] + key[1])
        made = cls._evaluate(instance, duration, seqs, release)
        if made is None:
            raise InputError("incumbent schedule is not feasible (cyclic order)", where=schedule.instance)
        return made

    @classmethod
    def _evaluate(cls, instance: Instance, duration: list[int], seqs: list[list[int]],
                  release: int) -> Sequences | None:
        shell = cls(instance, duration, seqs, release, [0] * len(duration))
        n = len(duration)
        indeg = [0] * n
        for op in range(n):
            indeg[op] = (shell.job_pred(op) is not None) + (shell.mpred[op] >= 0)
        ready = deque(op for op in range(n) if indeg[op] == 0)
        start = [release] * n
        done = 0
        while ready:
            op = ready.popleft()
            done += 1
            end = start[op] + duration[op]
            for nxt in (shell.job_succ(op), shell.msucc[op] if shell.msucc[op] >= 0 else None):
                if nxt is not None:
                    start[nxt] = max(start[nxt], end)
                    indeg[nxt] -= 1
                    if indeg[nxt] == 0:
                        ready.append(nxt)
        if done < n:
            return None  # a cycle: the sequences contradict the job order
        return cls(instance, duration, seqs, release, start)

    def job_pred(self, op: int) -> int | None:
        """Previous operation of the same job."""
        return op - 1 if op > self.offsets[self.job_of[op]] else None

    def job_succ(self, op: int) -> int | None:
        """Next operation of the same job."""
        return op + 1 if op + 1 < self.offsets[self.job_of[op] + 1] else None

    def machine_pred(self, op: int) -> int | None:
        """Previous operation on the same machine."""
        return self.mpred[op] if self.mpred[op] >= 0 else None

    def machine_succ(self, op: int) -> int | None:
        """Next operation on the same machine."""
        return self.msucc[op] if self.msucc[op] >= 0 else None

    @cached_property
    def completion(self) -> int:
        """Sum of job completion times."""
        return sum(self.start[self.offsets[j + 1] - 1] + self.duration[self.offsets[j + 1] - 1]
                   for j in range(len(self.offsets) - 1))

    def start_order(self) -> list[int]:
        """Operations sorted by start time."""
        return self._order

    @cached_property
    def _order(self) -> list[int]:
        return sorted(range(len(self.start)), key=lambda op: (self.start[op], op))

    def tails(self) -> list[int]:
        """Per operation, the longest path from its end to the end of the schedule."""
        return self._tails

    @cached_property
    def _tails(self) -> list[int]:
        tail = [0] * len(self.start)
        for op in reversed(self._order):  # successors start later, so they are done first
            best = 0
            for nxt in (self.job_succ(op), self.machine_succ(op)):
                if nxt is not None:
                    best = max(best, self.duration[nxt] + tail[nxt])
            tail[op] = best
        return tail

    def critical_path(self) -> list[int]:
        """Operations on some longest path (start + duration + tail equals the makespan)."""
        tail = self._tails
        return [op for op in range(len(self.start))
                if self.start[op] + self.duration[op] + tail[op] == self.makespan]

    def resequenced(self, new_start: Mapping[int, int]) -> Sequences | None:
        """Reorder the given operations on their machines by ``new_start`` (their positions are reused)
        and re-evaluate; None when the result is cyclic."""
        seqs = [list(s) for s in self.seqs]
        touched = {self.machine[op] for op in new_start}
        for m in touched:
            positions = [i for i, op in enumerate(seqs[m]) if op in new_start]
            ops = sorted((seqs[m][i] for i in positions), key=lambda op: (new_start[op], self.start[op]))
            for i, op in zip(positions, ops, strict=True):
                seqs[m][i] = op
        return self._evaluate(self.instance, self.duration, seqs, self.release)

    def to_schedule(self) -> Schedule:
        """The schedule these sequences define."""
        ops = [Operation(job=self.job_of[op], step=op - self.offsets[self.job_of[op]], machine=self.machine[op],
                         start=self.start[op], end=self.start[op] + self.duration[op])
               for op in range(len(self.start))]
        return Schedule.from_operations(self.instance.name, ops)
