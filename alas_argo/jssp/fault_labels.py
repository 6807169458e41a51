"""The labels of fault injection: the kinds of fault, one injected fault, and a faulty schedule with its
labels (see :mod:`alas_argo.jssp.faults`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.jssp.schedule import Schedule

__all__ = ["FaultInjection", "FaultKind", "InjectedFault"]


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
