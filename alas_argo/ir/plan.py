"""Immutable plan versions: a frozen record of a document (a workflow, a schedule) with a content hash
that chains to its parent, so a version can never change after it is made and history is verifiable."""

from __future__ import annotations

from typing import Any

from pydantic import Field, computed_field

from alas_argo.ir.base import FrozenIRModel, content_hash

__all__ = ["PlanVersion"]


class PlanVersion(FrozenIRModel):
    """Version ``version`` of plan ``name``; :attr:`hash` covers name, version, parent, reason and content."""

    name: str = Field(..., min_length=1, description="Name of the plan (the workflow or instance name).")
    version: int = Field(..., ge=1, description="Version number, 1 for the first.")
    parent: str | None = Field(None, description="Hash of the version this one replaces.")
    reason: str = Field("initial", description="Why this version exists (initial, replan, repair, ...).")
    content: dict[str, Any] = Field(..., description="The plan document itself (JSON).")

    @computed_field(description="SHA-256 of the canonical JSON of everything else.")  # type: ignore[prop-decorator]
    @property
    def hash(self) -> str:
        """Content hash (recomputed, so it cannot disagree with the content)."""
        return content_hash({"name": self.name, "version": self.version, "parent": self.parent,
                             "reason": self.reason, "content": self.content})

    @classmethod
    def first(cls, name: str, content: dict[str, Any]) -> PlanVersion:
        """Version 1 of a plan."""
        return cls(name=name, version=1, content=content)

    def successor(self, content: dict[str, Any], reason: str) -> PlanVersion:
        """The next version, chained to this one."""
        return PlanVersion(name=self.name, version=self.version + 1, parent=self.hash, reason=reason,
                           content=content)
