"""Edges of alas_argo.agents.contracts left open by hand mutants (mutmut leaves class bodies alone, and this
module is only class bodies): a job agent's context and its busy windows are frozen (feedback reaches an agent
only as a new context, never by changing the one it holds), a context made with the required fields alone is
a first proposal (attempt 0) released at 0 with no feedback, the horizon is required, and a proposal without
usage has an empty one (``_account`` and the benchmarks add to it)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, PlannerBackend
from alas_argo.agents.heuristic import HeuristicPlanner


def _ctx() -> JobContext:
    return JobContext(instance="tiny", job=1, operations=[(0, 3), (1, 2)], horizon=20)


def test_the_required_fields_alone_make_a_first_unreleased_proposal_without_feedback() -> None:
    ctx = _ctx()
    assert (ctx.release, ctx.attempt, ctx.scope) == (0, 0, "normal")
    assert (ctx.fixed, ctx.busy, ctx.feedback) == ({}, [], [])


def test_the_horizon_is_required() -> None:
    with pytest.raises(ValidationError) as refused:
        JobContext.model_validate({"instance": "tiny", "job": 1, "operations": [(0, 3)]})
    assert [e["loc"] for e in refused.value.errors()] == [("horizon",)]


def test_a_context_and_its_windows_cannot_be_changed() -> None:
    ctx = _ctx().model_copy(update={"busy": [BusyWindow(machine=0, start=2, end=5)]})
    with pytest.raises(ValidationError):
        ctx.attempt = 1  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ctx.busy[0].end = 9  # type: ignore[misc]
    assert ctx.attempt == 0 and ctx.busy[0].end == 5 and ctx.busy[0].reason == "reserved"


def test_a_proposal_without_usage_or_notes_has_empty_ones() -> None:
    proposal = JobProposal(job=1, operations=[], backend="heuristic")
    assert proposal.usage == {} and proposal.notes == []
    assert isinstance(HeuristicPlanner(), PlannerBackend)
    assert not isinstance(object(), PlannerBackend)
