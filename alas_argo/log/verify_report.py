"""The verdict of log verification: one problem found, and the report on one run's log (see
:mod:`alas_argo.log.verification`, which produces it; ``alas log verify`` prints it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Problem", "VerifyReport"]


class Problem(BaseModel):
    """One integrity violation."""

    model_config = ConfigDict(frozen=True)

    code: str = Field(description="gap, unreadable, bad_hash, broken_chain, seq_mismatch, run_mismatch, "
                                  "stray_key, duplicate_version, bad_plan_ref, plan_missing, plan_unreadable, "
                                  "plan_hash_mismatch, bad_retraction, unsealed, bad_seal, truncated, head_mismatch, "
                                  "head_missing, head_unreadable, head_unsealed, head_bad_seal, record_unreadable, "
                                  "record_misplaced, record_bad_hash, record_unsealed, record_bad_seal, "
                                  "record_missing, record_mismatch.")
    seq: int | None = Field(description="Sequence number of the event concerned, when there is one.")
    key: str = Field(description="Store key concerned.")
    message: str = Field(description="What is wrong, in one sentence.")


class VerifyReport(BaseModel):
    """The verdict on one run's log."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(description="The run verified.")
    ok: bool = Field(description="True when no problem was found.")
    events: int = Field(description="Event records found.")
    versions: int = Field(description="Plan versions committed.")
    problems: list[Problem] = Field(default_factory=list, description="Violations: those of events in sequence "
                                                                     "order, then those of the head and records.")
    warnings: list[str] = Field(default_factory=list, description="Oddities that break nothing.")
    keyed: bool = Field(False, description="Whether seals were checked (a key was configured).")
    anchored: int | None = Field(None, description="Events the head anchors (None: no readable head).")
    current_version: int | None = Field(None, description="The version in force according to the chain.")
    retracted: list[int] = Field(default_factory=list, description="Retracted versions according to the chain.")
    records: int = Field(0, description="Idempotency records checked.")

    @property
    def first_bad(self) -> Problem | None:
        """The first problem in sequence order."""
        return self.problems[0] if self.problems else None

    def summary(self) -> str:
        """One line for people."""
        if self.ok:
            state = f"current v{self.current_version}" if self.current_version else "no plan in force"
            if self.retracted:
                state += ", retracted " + ", ".join(f"v{v}" for v in self.retracted)
            seals = "seals checked" if self.keyed else "no key: seals not checked"
            counts = ", ".join(f"{n} {what}{'' if n == 1 else 's'}" for n, what in (
                (self.events, "event"), (self.versions, "plan version")))
            records = f"{self.records} idempotency record{'' if self.records == 1 else 's'}"
            return f"run {self.run_id}: intact ({counts}, {state}, {records}; {seals})"
        bad = self.problems[0]
        at = f"event {bad.seq}" if bad.seq is not None else bad.key
        return (f"run {self.run_id}: BROKEN at {at}: {bad.message} "
                f"({len(self.problems)} problem(s); {bad.key})")

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {**self.model_dump(mode="json"),
                "first_bad": self.first_bad.model_dump(mode="json") if self.first_bad else None}
