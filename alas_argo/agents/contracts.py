"""What agents exchange: a job agent's bounded context, its proposal, and the planner-backend protocol.

A job agent sees only its own job's operations and the availability of the machines that job visits (the
calendar slice it needs): never the other jobs, never planner state. That bound is what makes per-agent
context small enough for an LLM and what keeps agents independent enough to fan out as separate pods.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BusyWindow", "JobContext", "JobProposal", "PlannerBackend", "ProposedOperation"]


class BusyWindow(BaseModel):
    """A window during which a machine is unavailable to this job (downtime or work already committed)."""

    model_config = ConfigDict(frozen=True)

    machine: int = Field(description="The machine.")
    start: int = Field(description="Window start.")
    end: int = Field(description="Window end (exclusive).")
    reason: str = Field("reserved", description="`downtime` or `reserved`.")


class JobContext(BaseModel):
    """Everything one job agent may see."""

    model_config = ConfigDict(frozen=True)

    instance: str = Field(description="Instance name.")
    job: int = Field(description="The agent's job.")
    operations: list[tuple[int, int]] = Field(description="The job's operations as (machine, duration).")
    release: int = Field(0, description="No operation may start before this time.")
    fixed: dict[int, tuple[int, int]] = Field(
        default_factory=dict, description="Steps already started, as step -> (start, end): keep them.")
    busy: list[BusyWindow] = Field(default_factory=list, description="Machine windows to avoid.")
    horizon: int = Field(description="Upper bound on any sensible end time.")
    attempt: int = Field(0, description="0 on the first proposal, >0 when asked again after a failure.")
    feedback: list[str] = Field(default_factory=list, description="Validator messages about a previous try.")
    scope: str = Field("normal", description="Context scope (agents.context_scope): `full` keeps the busy "
                       "windows of machines the job does not visit in the prompt; the others leave them out.")


class ProposedOperation(BaseModel):
    """One operation as a job agent proposes it (the schedule's operation shape)."""

    job: int = Field(description="Job index.")
    step: int = Field(description="Step within the job.")
    machine: int = Field(description="Machine.")
    start: int = Field(description="Proposed start.")
    end: int = Field(description="Proposed end.")


class JobProposal(BaseModel):
    """A job agent's answer: its operations with times, plus what it cost to produce."""

    job: int = Field(description="The job proposed for.")
    operations: list[ProposedOperation] = Field(description="The proposed operations (may be faulty).")
    backend: str = Field(description="Name of the planner backend that produced it.")
    usage: dict[str, Any] = Field(default_factory=dict, description="Tokens, calls, latency (LLM backends).")
    notes: list[str] = Field(default_factory=list, description="Parse problems and other remarks.")


@runtime_checkable
class PlannerBackend(Protocol):
    """A planner backend for job agents (heuristic, cpsat, llm): one bounded context in, one proposal out."""

    name: str

    def propose(self, ctx: JobContext) -> JobProposal:
        """Propose times for the operations of ``ctx.job``. May be wrong; the validator decides."""
        ...
