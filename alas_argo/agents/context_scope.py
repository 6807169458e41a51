"""Context scopes for job agents (ALP spec 003 §4): how much of the shared calendar an agent is given.

The levels, read for job-shop agents (the agent's task is its own job; its verification rules are in the
system prompt; its dependencies are the other jobs' operations it could collide with):

- ``minimal``: its job, its own violations, and the windows of the operations those violations name (the
  direct dependencies). In round 0 it has no violations, hence no windows;
- ``normal`` (default): its job and the windows every other job holds on the machines it visits;
- ``full``: the windows of every machine in the draft (the complete dependency graph), useful or not.

:class:`ContextCache` resolves and caches an agent's context for the duration of its task, and invalidates
it when a dependency changes (a job holding windows in its scope got a new proposal) or new feedback
arrives (003 §4.4). Its hit and miss counts are measured, like the prompt size each scope costs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum

from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal

__all__ = ["ContextCache", "ContextScope"]


class ContextScope(StrEnum):
    """How much a job agent is given (module doc)."""

    MINIMAL = "minimal"
    NORMAL = "normal"
    FULL = "full"


class ContextCache:
    """Resolved contexts per job, invalidated when a dependency or the feedback changes.

    Args:
        scope: The scope every context is resolved at.
    """

    def __init__(self, scope: ContextScope | str = ContextScope.NORMAL) -> None:
        self.scope = ContextScope(scope)
        self.versions: dict[int, int] = {}
        self._cache: dict[int, tuple[tuple[object, ...], JobContext]] = {}
        self.hits = 0
        self.misses = 0

    def changed(self, job: int) -> None:
        """Job ``job`` has a new proposal: every context that depends on it is stale."""
        self.versions[job] = self.versions.get(job, 0) + 1

    def _dependencies(self, base: JobContext, proposals: Mapping[int, JobProposal],
                      conflicts: Iterable[int]) -> list[int]:
        machines = {m for m, _ in base.operations}
        if self.scope is ContextScope.MINIMAL:
            return sorted(set(conflicts) - {base.job})
        return sorted(j for j, p in proposals.items() if j != base.job and (
            self.scope is ContextScope.FULL or any(o.machine in machines for o in p.operations)))

    def resolve(self, base: JobContext, proposals: Mapping[int, JobProposal], *, attempt: int = 0,
                feedback: list[str] | None = None, conflicts: Iterable[int] = ()) -> JobContext:
        """The context of ``base.job`` at this cache's scope, over the other jobs' current ``proposals``.

        Args:
            base: The job's bounded context before any calendar (release, fixed steps, downtimes).
            proposals: Every job's current proposal (the draft).
            attempt: The agent's attempt (the feedback round).
            feedback: Its own violations.
            conflicts: The jobs its violations name (the minimal scope's dependencies).
        """
        deps = self._dependencies(base, proposals, conflicts)
        key = (attempt, tuple(feedback or ()), tuple((j, self.versions.get(j, 0)) for j in deps))
        cached = self._cache.get(base.job)
        if cached is not None and cached[0] == key:
            self.hits += 1
            return cached[1]
        self.misses += 1
        machines = {m for m, _ in base.operations}
        windows = [BusyWindow(machine=o.machine, start=o.start, end=o.end) for j in deps
                   for o in proposals[j].operations
                   if o.end > o.start and (self.scope is ContextScope.FULL or o.machine in machines)]
        ctx = base.model_copy(update={"busy": sorted([*base.busy, *windows], key=lambda w: (w.machine, w.start)),
                                      "attempt": attempt, "feedback": list(feedback or []),
                                      "scope": str(self.scope)})
        self._cache[base.job] = (key, ctx)
        return ctx
