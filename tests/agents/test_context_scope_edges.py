"""Context scopes at their edges: windows that reserve nothing, the hit count over many hits, a base
context's own windows kept and ordered among the others' (found by mutation testing)."""

from __future__ import annotations

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.context_scope import ContextCache, ContextScope
from alas_argo.agents.contracts import BusyWindow, JobProposal, ProposedOperation
from alas_argo.jssp.instance import Instance


def _instance() -> Instance:
    """Job 0 visits machines 0 and 1; job 1 machine 1; job 2 machine 2."""
    return Instance(name="s", jobs=[[(0, 2), (1, 2)], [(1, 3)], [(2, 4)]])


def _proposal(job: int, ops: list[tuple[int, int, int, int]]) -> JobProposal:
    """``ops`` as (step, machine, start, end)."""
    return JobProposal(job=job, backend="t", operations=[
        ProposedOperation(job=job, step=s, machine=m, start=a, end=b) for s, m, a, b in ops])


def test_an_operation_that_lasts_no_time_reserves_no_window_at_any_scope() -> None:
    """A zero-length (or backwards) entry in another job's draft holds its machine for no time: giving it to
    the agent as a window would only make the prompt longer (and, at start == end, forbid nothing)."""
    base = build_job_contexts(_instance())[0]
    proposals = {1: _proposal(1, [(0, 1, 5, 5)]), 2: _proposal(2, [(0, 2, 7, 7), (1, 2, 9, 8)])}
    for scope in ContextScope:
        ctx = ContextCache(scope).resolve(base, proposals, conflicts=[1, 2])
        assert ctx.busy == [], scope
    # The same drafts with a real length are windows: the filter is on the length, nothing else.
    proposals = {1: _proposal(1, [(0, 1, 5, 6)]), 2: _proposal(2, [(0, 2, 7, 8)])}
    assert ContextCache(ContextScope.FULL).resolve(base, proposals).busy == [
        BusyWindow(machine=1, start=5, end=6), BusyWindow(machine=2, start=7, end=8)]


def test_every_hit_is_counted() -> None:
    base = build_job_contexts(_instance())[0]
    proposals = {1: _proposal(1, [(0, 1, 0, 3)])}
    cache = ContextCache()
    first = cache.resolve(base, proposals)
    for _ in range(3):
        assert cache.resolve(base, proposals) is first
    assert (cache.hits, cache.misses) == (3, 1)


def test_the_base_windows_are_kept_and_sorted_with_the_others_by_machine_then_start() -> None:
    """A re-plan's base context already holds downtime windows: the other jobs' windows join them, and the
    agent sees one list ordered by machine, then start, with the base's reasons intact."""
    base = build_job_contexts(_instance())[0].model_copy(update={"busy": [
        BusyWindow(machine=1, start=20, end=25, reason="downtime"),
        BusyWindow(machine=0, start=10, end=12, reason="downtime")]})
    proposals = {1: _proposal(1, [(0, 1, 3, 6)]), 2: _proposal(2, [(0, 2, 0, 4)])}
    ctx = ContextCache(ContextScope.NORMAL).resolve(base, proposals, attempt=2, feedback=["late"])
    assert ctx.busy == [BusyWindow(machine=0, start=10, end=12, reason="downtime"),
                        BusyWindow(machine=1, start=3, end=6),
                        BusyWindow(machine=1, start=20, end=25, reason="downtime")]
    assert (ctx.attempt, ctx.feedback, ctx.scope) == (2, ["late"], "normal")
    assert base.busy[0].start == 20  # the base context itself is left as it was
