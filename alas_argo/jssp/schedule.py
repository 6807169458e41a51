"""A schedule: one timed entry per operation, in the JSON contract of docs/contracts.md.

The model is deliberately permissive (negative starts, duplicates and wrong machines can be represented)
because the validator and the fault injector must be able to talk about broken schedules.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Operation", "Schedule"]


class Operation(BaseModel):
    """One scheduled operation."""

    model_config = ConfigDict(frozen=True)

    job: int = Field(description="Job index, from 0.")
    step: int = Field(description="Position of the operation in its job, from 0.")
    machine: int = Field(description="Machine the operation runs on.")
    start: int = Field(description="Start time.")
    end: int = Field(description="End time; `end - start` is its (possibly disrupted) duration.")

    @property
    def key(self) -> tuple[int, int]:
        """(job, step)."""
        return (self.job, self.step)

    @property
    def duration(self) -> int:
        """`end - start`."""
        return self.end - self.start


class Schedule(BaseModel):
    """A complete or partial assignment of start times to the operations of one instance."""

    model_config = ConfigDict(frozen=True)

    instance: str = Field(description="Name of the instance this schedules.")
    makespan: int = Field(description="Latest end time over all operations, as claimed by the producer.")
    operations: list[Operation] = Field(description="One entry per operation.")

    @classmethod
    def from_operations(cls, instance: str, operations: list[Operation]) -> Schedule:
        """Build a schedule whose makespan is computed from its operations, sorted by (start, job, step)."""
        ops = sorted(operations, key=lambda o: (o.start, o.job, o.step))
        return cls(instance=instance, makespan=max((o.end for o in ops), default=0), operations=ops)

    def by_key(self) -> dict[tuple[int, int], Operation]:
        """Operations indexed by (job, step); the last one wins for duplicates."""
        # (job, step) spelled out rather than the ``key`` property: these maps are built in repair's inner loops
        return {(o.job, o.step): o for o in self.operations}

    def starts(self) -> dict[tuple[int, int], int]:
        """Start time per (job, step)."""
        return {(o.job, o.step): o.start for o in self.operations}

    def machine_sequences(self) -> dict[int, list[tuple[int, int]]]:
        """Per machine, its operations' (job, step) in start order."""
        seqs: dict[int, list[Operation]] = {}
        for o in self.operations:
            seqs.setdefault(o.machine, []).append(o)
        return {m: [o.key for o in sorted(ops, key=lambda o: (o.start, o.end, o.job))]
                for m, ops in sorted(seqs.items())}

    def to_json(self) -> dict[str, Any]:
        """The schedule as the JSON document of docs/contracts.md."""
        return self.model_dump(mode="json")
