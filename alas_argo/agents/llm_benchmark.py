"""The planner comparison behind ``alas bench llm``: llm vs heuristic job agents vs CP-SAT on a small suite.

Job agents are asked in job order, each with its bounded context: its own job plus the windows that the
jobs asked before it reserved on the machines it visits (and nothing else). The plain union of their
proposals is checked by the independent validator (``raw_valid``, ``violations``: how good the agents'
own answers were); unusable answers and endpoint failures fall back to the heuristic agent for that job;
the priority decode then turns the proposals into a feasible plan whose makespan and validity are reported
(the same patch the pipeline applies). CP-SAT solves the whole instance under a time limit, as reference.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, PlannerBackend
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner, is_unusable
from alas_argo.agents.llm_client import LlmAuthError, LlmEndpointError
from alas_argo.agents.supervisor import MergeMode, Supervisor
from alas_argo.jssp.cpsat import SolveRequest, optimize
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.validate import validate

__all__ = ["BenchRow", "bench_agents", "bench_cpsat", "compare_planners", "propose_in_job_order"]


@dataclass(frozen=True)
class BenchRow:
    """One planner on one instance."""

    instance: str
    planner: str
    makespan: int
    valid: bool
    seconds: float
    raw_valid: bool | None = None
    violations: int = 0
    fallbacks: int = 0
    calls: int = 0
    tokens: int = 0
    lower_bound: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object."""
        return asdict(self)


def propose_in_job_order(instance: Instance, backend: PlannerBackend,
                         fallback: PlannerBackend | None = None) -> tuple[list[JobProposal], int]:
    """Ask one agent per job, in job order, each seeing the windows earlier jobs reserved on its machines.

    Returns:
        The proposals (fallback ones included) and how many jobs fell back.

    Raises:
        LlmAuthError: When the endpoint refuses the credentials (falling back for every job would hide it).
    """
    horizon = sum(d for ops in instance.jobs for _, d in ops)
    reserved: list[BusyWindow] = []
    proposals: list[JobProposal] = []
    fallbacks = 0
    for j, ops in enumerate(instance.jobs):
        machines = {m for m, _ in ops}
        ctx = JobContext(instance=instance.name, job=j, operations=[(m, d) for m, d in ops], horizon=horizon,
                         busy=sorted((w for w in reserved if w.machine in machines),
                                     key=lambda w: (w.machine, w.start)))
        try:
            proposal: JobProposal | None = backend.propose(ctx)
        except LlmAuthError:
            raise
        except LlmEndpointError:
            proposal = None
        if (proposal is None or is_unusable(proposal)) and fallback is not None:
            proposal = fallback.propose(ctx)
            fallbacks += 1
        if proposal is None:
            continue
        proposals.append(proposal)
        reserved += [BusyWindow(machine=o.machine, start=o.start, end=o.end)
                     for o in proposal.operations if o.end > o.start]
    return proposals, fallbacks


def bench_agents(instance: Instance, backend: PlannerBackend,
                 fallback: PlannerBackend | None = None) -> BenchRow:
    """Job agents of ``backend`` on ``instance``: validate their union, decode, validate the plan."""
    started = time.perf_counter()
    before = backend.usage if isinstance(backend, LlmPlanner) else {}
    proposals, fallbacks = propose_in_job_order(instance, backend, fallback)
    raw = validate(instance, Supervisor(MergeMode.UNION).merge(instance, proposals))
    final = Supervisor(MergeMode.PRIORITY).merge(instance, proposals)
    after = backend.usage if isinstance(backend, LlmPlanner) else {}
    return BenchRow(instance=instance.name, planner=backend.name, makespan=final.makespan,
                    valid=validate(instance, final).valid, seconds=round(time.perf_counter() - started, 3),
                    raw_valid=raw.valid, violations=len(raw.violations), fallbacks=fallbacks,
                    calls=int(after.get("calls", 0) - before.get("calls", 0)),
                    tokens=int(after.get("total_tokens", 0) - before.get("total_tokens", 0)),
                    lower_bound=instance.lower_bound)


def bench_cpsat(instance: Instance, *, time_limit: float, workers: int = 2, seed: int = 0) -> BenchRow:
    """CP-SAT on the whole instance under ``time_limit`` seconds."""
    started = time.perf_counter()
    result = optimize(SolveRequest(instance=instance, time_limit=time_limit, workers=workers, seed=seed))
    return BenchRow(instance=instance.name, planner="cpsat", makespan=result.objective,
                    valid=validate(instance, result.schedule).valid,
                    seconds=round(time.perf_counter() - started, 3), lower_bound=instance.lower_bound)


def compare_planners(instances: Iterable[Instance], llm: PlannerBackend, *, time_limit: float,
                     workers: int = 2, seed: int = 0,
                     progress: Callable[[BenchRow], None] | None = None) -> list[BenchRow]:
    """llm, heuristic and cpsat rows for every instance (``progress`` sees each row as it is done)."""
    heuristic = HeuristicPlanner()
    rows: list[BenchRow] = []
    for instance in instances:
        for row in (bench_agents(instance, llm, fallback=heuristic), bench_agents(instance, heuristic),
                    bench_cpsat(instance, time_limit=time_limit, workers=workers, seed=seed)):
            rows.append(row)
            if progress is not None:
                progress(row)
    return rows
