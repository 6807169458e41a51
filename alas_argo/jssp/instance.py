"""A job-shop instance: jobs as ordered lists of (machine, duration) operations, with known bounds."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from alas_argo.errors import InputError
from alas_argo.jssp.limits import MAX_MACHINES, TimeValue

__all__ = ["Instance"]


class Instance(BaseModel):
    """A job-shop instance in the JSON contract of docs/contracts.md.

    Each job visits its operations in list order; machines are numbered from 0; every job visits each of
    its machines at most once in the classic benchmarks, but that is not required here.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Instance name, e.g. `ta01`.")
    jobs: list[list[tuple[TimeValue, TimeValue]]] = Field(
        description="Per job, its operations as [machine, duration].")
    lower_bound: TimeValue | None = Field(None, description="Best known lower bound on the optimal makespan.")
    upper_bound: TimeValue | None = Field(None, description="Best known makespan (optimal when equal to the LB).")
    bounds_source: str | None = Field(None, description="Where the bounds come from.")

    @model_validator(mode="after")
    def _check(self) -> Instance:
        if not self.jobs:
            raise InputError("instance has no jobs", where=self.name)
        for j, ops in enumerate(self.jobs):
            if not ops:
                raise InputError("job has no operations", where={"job": j})
            for s, (m, d) in enumerate(ops):
                if m < 0:
                    raise InputError(f"negative machine number {m}", where={"job": j, "step": s})
                if m >= MAX_MACHINES:
                    raise InputError(f"machine number {m} is too large (at most {MAX_MACHINES - 1})",
                                     where={"job": j, "step": s})
                if d < 0:
                    raise InputError(f"negative duration {d}", where={"job": j, "step": s})
        return self

    @cached_property
    def num_jobs(self) -> int:
        """Number of jobs."""
        return len(self.jobs)

    @cached_property
    def num_machines(self) -> int:
        """Number of machines (highest machine number + 1)."""
        return 1 + max(m for ops in self.jobs for m, _ in ops)

    @cached_property
    def num_operations(self) -> int:
        """Total number of operations."""
        return sum(len(ops) for ops in self.jobs)

    @property
    def size(self) -> str:
        """`jobs x machines`, as benchmark tables print it."""
        return f"{self.num_jobs}x{self.num_machines}"

    def machine(self, job: int, step: int) -> int:
        """Machine of operation (job, step)."""
        return self.jobs[job][step][0]

    def duration(self, job: int, step: int) -> int:
        """Nominal duration of operation (job, step)."""
        return self.jobs[job][step][1]

    def horizon(self) -> int:
        """Sum of all durations: an upper bound on any non-delay schedule's makespan."""
        return sum(d for ops in self.jobs for _, d in ops)

    def to_json(self) -> dict[str, Any]:
        """The instance as the JSON document of docs/contracts.md."""
        doc: dict[str, Any] = {
            "name": self.name,
            "jobs": [[[m, d] for m, d in ops] for ops in self.jobs],
            "lower_bound": self.lower_bound,
            "upper_bound": self.upper_bound,
        }
        if self.bounds_source:
            doc["bounds_source"] = self.bounds_source
        return doc
