"""The validator's verdict: violation codes, violations and the validation report (docs/contracts.md).

The codes are a closed enum because other tools (repair, the supervisor, dashboards, the log) branch on them.
A violation names *where* it is through its ``scope``: ``job``/``step``/``machine`` as applicable, plus
``other_job``/``other_step`` for the operation an overlap or a precedence conflict is with, and ``index``
(the position in the schedule's ``operations`` list) for entries that cannot be told apart by their key.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ValidationReport", "Violation", "ViolationCode"]


class ViolationCode(StrEnum):
    """What is wrong with a schedule. Values are the strings of the JSON contract."""

    #: An operation of the instance has no entry in the schedule.
    MISSING_OPERATION = "missing_operation"
    #: An operation has more than one entry; every entry after the first is reported.
    DUPLICATE_OPERATION = "duplicate_operation"
    #: An entry names a job or step that the instance does not have.
    UNKNOWN_OPERATION = "unknown_operation"
    #: An entry runs on a machine other than the instance's machine for it.
    WRONG_MACHINE = "wrong_machine"
    #: ``end - start`` differs from the operation's (possibly disrupted) duration.
    WRONG_DURATION = "wrong_duration"
    #: An operation starts before its job predecessor ends.
    PRECEDENCE = "precedence"
    #: Two operations run on the same machine at the same time.
    MACHINE_OVERLAP = "machine_overlap"
    #: An operation runs on a machine during the machine's downtime.
    DOWNTIME_OVERLAP = "downtime_overlap"
    #: An operation that had not started by the reveal time starts before it.
    STARTED_IN_PAST = "started_in_past"
    #: An operation that had started by the reveal time does not keep its start.
    FROZEN_MOVED = "frozen_moved"
    #: An operation starts before time 0.
    NEGATIVE_START = "negative_start"
    #: The schedule's claimed makespan differs from its latest end time.
    MAKESPAN_MISMATCH = "makespan_mismatch"
    #: The schedule names another instance (reported as a warning: the structural checks decide validity).
    INSTANCE_MISMATCH = "instance_mismatch"
    #: The disruption breaks down a machine the instance does not have (a warning: it constrains nothing).
    UNKNOWN_MACHINE = "unknown_machine"


class Violation(BaseModel):
    """One thing wrong with a schedule, with the place it is about."""

    model_config = ConfigDict(frozen=True)

    code: ViolationCode = Field(description="What is wrong (closed enum).")
    message: str = Field(description="One human-readable sentence.")
    scope: dict[str, int] = Field(default_factory=dict,
                                  description="Where: job/step/machine, other_job/other_step, index.")

    def to_json(self) -> dict[str, Any]:
        """The violation as a JSON object."""
        return self.model_dump(mode="json")


class ValidationReport(BaseModel):
    """The validator's verdict on one schedule.

    ``valid`` is true exactly when there are no violations; warnings never make a schedule invalid.
    """

    model_config = ConfigDict(frozen=True)

    valid: bool = Field(description="True when there are no violations.")
    violations: list[Violation] = Field(default_factory=list, description="Everything wrong, not just the "
                                        "first thing.")
    warnings: list[Violation] = Field(default_factory=list, description="Things worth knowing that do not "
                                      "make the schedule invalid (e.g. instance_mismatch).")

    @classmethod
    def of(cls, violations: list[Violation], warnings: list[Violation] | None = None) -> ValidationReport:
        """A report whose ``valid`` flag follows from its violations."""
        return cls(valid=not violations, violations=violations, warnings=list(warnings or []))

    def codes(self) -> set[ViolationCode]:
        """The distinct codes among the violations."""
        return {v.code for v in self.violations}

    def count_by_code(self) -> dict[ViolationCode, int]:
        """How many violations there are of each code, in enum order."""
        counts = Counter(v.code for v in self.violations)
        return {code: counts[code] for code in ViolationCode if counts[code]}

    def find(self, code: ViolationCode, **scope: int) -> list[Violation]:
        """Violations with ``code`` whose scope contains every given key/value (e.g. ``job=3, step=2``)."""
        return [v for v in self.violations
                if v.code == code and all(v.scope.get(k) == val for k, val in scope.items())]

    def to_json(self) -> dict[str, Any]:
        """The report as the JSON document of docs/contracts.md."""
        return self.model_dump(mode="json")
