"""The heuristic job-agent backend: earliest fit of the job's chain around the machines' busy windows.

For one job in isolation, placing each operation at the earliest time that fits after its predecessor is
optimal (completion times are monotone), so this is the exact answer to the agent's bounded question; the
global trade-offs between jobs are the supervisor's and the optimizer's business.
"""

from __future__ import annotations

from alas_argo.agents.contracts import JobContext, JobProposal, ProposedOperation

__all__ = ["HeuristicPlanner", "earliest_fit"]


def earliest_fit(windows: list[tuple[int, int]], ready: int, duration: int) -> int:
    """Earliest start >= ready such that [start, start + duration) avoids every (sorted) busy window."""
    t = ready
    for s, e in windows:
        if e <= t:
            continue
        if s >= t + duration:
            break
        t = max(t, e)
    return t


class HeuristicPlanner:
    """Job agent that proposes the earliest feasible chain for its own job."""

    name = "heuristic"

    def propose(self, ctx: JobContext) -> JobProposal:
        """Propose start times for ``ctx.job`` (already-started steps keep their times)."""
        by_machine: dict[int, list[tuple[int, int]]] = {}
        for w in ctx.busy:
            by_machine.setdefault(w.machine, []).append((w.start, w.end))
        for windows in by_machine.values():
            windows.sort()
        ops = []
        ready = 0
        for step, (machine, duration) in enumerate(ctx.operations):
            if step in ctx.fixed:
                start, end = ctx.fixed[step]
            else:
                start = earliest_fit(by_machine.get(machine, []), max(ready, ctx.release), duration)
                end = start + duration
            ops.append(ProposedOperation(job=ctx.job, step=step, machine=machine, start=start, end=end))
            ready = end
        return JobProposal(job=ctx.job, operations=ops, backend=self.name)


