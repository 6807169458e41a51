"""Disruptions revealed at a time: machine breakdowns and duration changes (DESIGN.md section 4).

Semantics, normative for the validator and the repair alike:

- an operation whose ``start < time`` has started: it keeps its start; if it is running on a machine when
  that machine breaks down, it is interrupted and restarts from scratch after the downtime (non-preemptive
  restart); a ``duration_change`` of a started operation extends it in place;
- every operation not started by ``time`` must start at or after ``time``;
- nothing runs on a machine during its downtime window ``[start, start + duration)``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Disruption", "DisruptionEvent", "DurationChange", "MachineBreakdown"]


class MachineBreakdown(BaseModel):
    """A machine is down over ``[start, start + duration)``."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["machine_breakdown"] = "machine_breakdown"
    machine: int = Field(description="The machine that breaks down.")
    start: int = Field(description="Start of the downtime.")
    duration: int = Field(description="Length of the downtime.")

    @property
    def end(self) -> int:
        """End of the downtime (exclusive)."""
        return self.start + self.duration


class DurationChange(BaseModel):
    """Operation (job, step) now takes ``duration`` instead of its nominal duration."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["duration_change"] = "duration_change"
    job: int = Field(description="Job of the operation.")
    step: int = Field(description="Step of the operation within its job.")
    duration: int = Field(description="The new duration.")


DisruptionEvent = Annotated[MachineBreakdown | DurationChange, Field(discriminator="kind")]


class Disruption(BaseModel):
    """Events revealed at ``time``; everything that started before it is history."""

    model_config = ConfigDict(frozen=True)

    time: int = Field(description="Reveal time.")
    events: list[DisruptionEvent] = Field(default_factory=list, description="What happened.")

    @property
    def breakdowns(self) -> list[MachineBreakdown]:
        """The machine breakdowns."""
        return [e for e in self.events if isinstance(e, MachineBreakdown)]

    @property
    def duration_changes(self) -> dict[tuple[int, int], int]:
        """New duration per (job, step); a later event for the same operation wins."""
        return {(e.job, e.step): e.duration for e in self.events if isinstance(e, DurationChange)}

    def to_json(self) -> dict[str, Any]:
        """The disruption as the JSON document of DESIGN.md section 4."""
        return self.model_dump(mode="json")
