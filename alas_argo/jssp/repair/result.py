"""The result of a repair: the repaired plan plus what it cost (docs/contracts.md, repair result)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.jssp.execution import Key
from alas_argo.jssp.schedule import Schedule

__all__ = ["RepairOutcome", "RepairResult"]


@dataclass
class RepairOutcome:
    """What one repair method hands back before metrics are taken.

    Attributes:
        schedule: The repaired plan.
        neighbourhood: The operations the method was allowed to change (its final neighbourhood).
        growths: How many times the neighbourhood grew (LCRP only).
        fallback: Whether the method fell back: LCRP's global re-solve produced the plan, or a global method
            (full, full-stable) found no solution in its time and handed back the AOR plan.
        notes: One line per decision, for logs and ``--json`` output.
        global_reason: Why the method edited beyond a local neighbourhood (None when it stayed local or is
            global by definition).
    """

    schedule: Schedule
    neighbourhood: set[Key]
    growths: int = 0
    fallback: bool = False
    notes: list[str] = field(default_factory=list)
    global_reason: str | None = None


class RepairResult(BaseModel):
    """A repaired plan and its metrics; ``to_json`` is the R.json document."""

    model_config = ConfigDict(frozen=True)

    schedule: Schedule = Field(description="The repaired plan.")
    method: str = Field(description="The repair method that produced it.")
    makespan: int = Field(description="Makespan of the repaired plan.")
    baseline_makespan: int = Field(description="Makespan of the plan in force before the disruption.")
    moved_operations: int = Field(description="Operations whose start changed.")
    total_start_shift: int = Field(description="Sum of |start change| over all operations.")
    edit_radius: int = Field(description="Operations in the final neighbourhood the method was allowed to edit.")
    edit_machines: list[int] = Field(default_factory=list, description="Machines in that neighbourhood.")
    neighbourhood_growths: int = Field(0, description="How many times LCRP grew its neighbourhood.")
    wip_moved: int = Field(description="Started-or-next operations whose machine order changed.")
    touched_machines: list[int] = Field(default_factory=list, description="Machines on which at least one "
                                        "operation starts at a different time: the edit radius in machines "
                                        "(moved_operations is the radius in operations).")
    resequenced_machines: list[int] = Field(default_factory=list, description="Machines whose order of "
                                            "operations changed.")
    global_reason: str | None = Field(None, description="Why the repair edited beyond a local neighbourhood "
                                      "(LCRP's global probe or fallback, or a global method); None when it "
                                      "stayed local.")
    fallback: bool = Field(False, description="Whether the method fell back: LCRP's global re-solve produced the "
                           "plan, or full / full-stable found no solution in time and handed back the AOR plan.")
    seconds: float = Field(description="Wall-clock time of the repair.")
    valid: bool = Field(description="Verdict of the independent validator on the repaired plan.")
    notes: list[str] = Field(default_factory=list, description="How the method got there, step by step.")
    limits: dict[str, Any] = Field(default_factory=dict, description="What makes the repair reproducible: "
                                   "deterministic or wall-clock limits, search workers, deterministic time spent "
                                   "(alas_argo.jssp.searching.SearchClock.record).")

    def metrics(self) -> dict[str, Any]:
        """The metrics without the schedule."""
        return self.model_dump(mode="json", exclude={"schedule"})

    def to_json(self) -> dict[str, Any]:
        """The repaired schedule document of docs/contracts.md plus the metrics."""
        return {**self.schedule.to_json(), **self.metrics()}
