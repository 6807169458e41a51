"""Context scopes: what each level gives an agent, and when a cached context is invalidated."""

from __future__ import annotations

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.context_scope import ContextCache, ContextScope
from alas_argo.agents.contracts import JobProposal, ProposedOperation
from alas_argo.agents.llm_prompts import context_document
from alas_argo.jssp.instance import Instance


def _instance() -> Instance:
    return Instance(name="s", jobs=[[(0, 2), (1, 2)], [(1, 3)], [(2, 4)]])


def _proposals() -> dict[int, JobProposal]:
    ops = {1: [(0, 1, 0, 3)], 2: [(0, 2, 0, 4)]}  # (step, machine, start, end)
    return {j: JobProposal(job=j, backend="t", operations=[ProposedOperation(job=j, step=s, machine=m, start=a, end=b)
                                                           for s, m, a, b in v]) for j, v in ops.items()}


def test_scopes_give_what_they_say() -> None:
    base = build_job_contexts(_instance())[0]
    proposals = _proposals()
    minimal = ContextCache(ContextScope.MINIMAL).resolve(base, proposals)
    normal = ContextCache(ContextScope.NORMAL).resolve(base, proposals)
    full = ContextCache(ContextScope.FULL).resolve(base, proposals)
    assert minimal.busy == [] and [w.machine for w in normal.busy] == [1]
    assert [w.machine for w in full.busy] == [1, 2]
    assert [w["machine"] for w in context_document(full)["busy"]] == [1, 2]  # the prompt keeps them
    assert [w["machine"] for w in context_document(normal)["busy"]] == [1]
    conflicted = ContextCache(ContextScope.MINIMAL).resolve(base, proposals, conflicts=[1], feedback=["x"])
    assert [w.machine for w in conflicted.busy] == [1] and conflicted.feedback == ["x"]


def test_cache_is_invalidated_by_a_dependency_or_new_feedback() -> None:
    base = build_job_contexts(_instance())[0]
    proposals = _proposals()
    cache = ContextCache(ContextScope.NORMAL)
    first = cache.resolve(base, proposals)
    assert cache.resolve(base, proposals) is first and (cache.hits, cache.misses) == (1, 1)
    cache.changed(2)  # job 2 is on machine 2 only: not a dependency of job 0 at normal scope
    assert cache.resolve(base, proposals) is first
    cache.changed(1)
    assert cache.resolve(base, proposals) is not first and cache.misses == 2
    assert cache.resolve(base, proposals, feedback=["new"]).feedback == ["new"] and cache.misses == 3
