"""The LLM-in-charge planning session: job agents propose, the validator's findings go back, K rounds.

Paper §3.4 / §B.3 (Fig. 5): the merged plan of the job agents is checked by the independent validator; the
violations of an invalid plan go back to the agents responsible, each agent seeing only *its own*
violations and its bounded context, for up to ``rounds`` rounds. The deterministic patch after the last
round is the caller's decision (the pipeline's revalidation loop, or :func:`patch_plan` in benchmarks).

How the session keeps agents bounded and independent of what executes (004 §5, the context partition):

- round 0 asks the agents in job order; each sees its own job and the windows the jobs asked before it
  reserved on the machines it visits (the supervisor's calendar slice), nothing else;
- every round's merged plan is a new *draft version* (``round`` 0, 1, ...); the diagnostics of draft ``r``
  reach an agent only as a new, frozen :class:`~alas_argo.agents.contracts.JobContext` (attempt ``r + 1``)
  built from that draft: its violations, and the windows the other jobs hold in the draft on its machines.
  Nothing an agent was given earlier is changed;
- an agent whose re-ask fails (no answer, or nothing usable) keeps its previous entries; the round says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from alas_argo.agents.context_scope import ContextCache
from alas_argo.agents.contracts import JobContext, JobProposal, PlannerBackend
from alas_argo.agents.message_gate import GateAction, MessageGate
from alas_argo.agents.supervisor import MergeMode, Supervisor, priority_decode
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ValidationReport

__all__ = ["FeedbackRound", "SessionResult", "ask_agent", "feedback_rounds", "first_proposals", "patch_plan",
           "violations_by_job"]

#: Called after every round with the round, its draft plan and the validator's report on it.
RoundListener = Callable[["FeedbackRound", Schedule, ValidationReport], None]


@dataclass(frozen=True)
class FeedbackRound:
    """One draft version and the validator's verdict on it."""

    round: int
    entries: int
    violations: int
    by_code: dict[str, int]
    jobs_asked: list[int]
    makespan: int
    failed_jobs: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The round as a log payload."""
        return {"round": self.round, "draft_version": self.round, "entries": self.entries,
                "violations": self.violations, "by_code": self.by_code, "jobs_asked": self.jobs_asked,
                "makespan": self.makespan, "failed_jobs": self.failed_jobs}


@dataclass
class SessionResult:
    """What a session produced: the last draft, every round, and the proposals behind the draft."""

    plan: Schedule
    rounds: list[FeedbackRound]
    proposals: dict[int, JobProposal]
    fallbacks: int = 0

    @property
    def valid(self) -> bool:
        """Whether the last draft passed the validator."""
        return bool(self.rounds) and self.rounds[-1].violations == 0

    @property
    def trace(self) -> list[int]:
        """Violations per round (the paper's 88 -> 76 -> 28 -> ...)."""
        return [r.violations for r in self.rounds]


def _gated(backend: PlannerBackend, ctx: JobContext, gate: MessageGate | None) -> tuple[JobProposal, str | None]:
    """The agent's message through the gate: a rejected one is asked again once, with the reasons."""
    proposal = backend.propose(ctx)
    if gate is None or not proposal.operations:
        return proposal, None
    verdict = gate.check(ctx, proposal)
    if verdict.action is not GateAction.REJECT:
        return verdict.proposal, None
    again = ctx.model_copy(update={"feedback": [*ctx.feedback, *(f"message rejected: {r}" for r in verdict.reasons)]})
    second = gate.check(again, backend.propose(again))
    if second.action is GateAction.REJECT:
        return second.proposal, "message rejected twice: " + "; ".join(second.reasons)
    return second.proposal, None


def ask_agent(backend: PlannerBackend, ctx: JobContext, fallback: PlannerBackend | None = None,
              gate: MessageGate | None = None) -> tuple[JobProposal | None, str | None]:
    """One agent's proposal, or None with the reason when it gave nothing usable (after ``fallback``).

    With a ``gate`` (:mod:`alas_argo.agents.message_gate`) the message is checked before delivery.

    Raises:
        LlmAuthError: A wrong key will not fix itself; falling back for every job would hide it.
    """
    from alas_argo.agents.llm_client import LlmAuthError, LlmEndpointError

    reason: str | None = None
    try:
        proposal, rejected = _gated(backend, ctx, gate)
        if proposal.operations and rejected is None:
            return proposal, None
        reason = rejected or "unusable answer: " + "; ".join(proposal.notes[:3])
    except LlmAuthError:
        raise
    except LlmEndpointError as e:
        reason = f"no answer: {e}"
    if fallback is None:
        return None, reason
    answer = fallback.propose(ctx)
    answer.notes.append(f"fallback for job {ctx.job}: {reason}")
    return answer, reason


def first_proposals(instance: Instance, backend: PlannerBackend, contexts: Sequence[JobContext], *,
                    fallback: PlannerBackend | None = None, cache: ContextCache | None = None,
                    gate: MessageGate | None = None) -> tuple[dict[int, JobProposal], int]:
    """Round 0: every agent in job order, each seeing the windows earlier jobs reserved (at the scope of
    ``cache``, default normal: on the machines it visits).

    Returns:
        Proposals by job, and how many jobs fell back (or gave nothing).
    """
    cache = cache or ContextCache()
    proposals: dict[int, JobProposal] = {}
    fallbacks = 0
    for ctx in contexts:
        proposal, reason = ask_agent(backend, cache.resolve(ctx, proposals), fallback, gate)
        fallbacks += reason is not None
        if proposal is None:
            continue
        proposals[ctx.job] = proposal
        cache.changed(ctx.job)
    return proposals, fallbacks


def _merge(instance: Instance, proposals: dict[int, JobProposal]) -> Schedule:
    return Supervisor(MergeMode.UNION).merge(instance, [proposals[j] for j in sorted(proposals)])


def violations_by_job(instance: Instance, report: ValidationReport) -> dict[int, list[str]]:
    """Each job's own violations (a violation belongs to the job its scope names first)."""
    out: dict[int, list[str]] = {}
    for v in report.violations:
        job = v.scope.get("job")
        if job is not None and 0 <= job < instance.num_jobs:
            out.setdefault(job, []).append(v.message)
    return out


def _conflicts(instance: Instance, report: ValidationReport) -> dict[int, set[int]]:
    """Per job, the other jobs its violations name (the minimal scope's dependencies)."""
    out: dict[int, set[int]] = {}
    for v in report.violations:
        job, other = v.scope.get("job"), v.scope.get("other_job")
        if job is not None and other is not None and 0 <= other < instance.num_jobs:
            out.setdefault(job, set()).add(other)
    return out


def _round(r: int, plan: Schedule, report: ValidationReport, asked: list[int], failed: list[int]) -> FeedbackRound:
    return FeedbackRound(round=r, entries=len(plan.operations), violations=len(report.violations),
                         by_code=dict(sorted(Counter(str(v.code) for v in report.violations).items())),
                         jobs_asked=asked, makespan=plan.makespan, failed_jobs=failed)


def feedback_rounds(instance: Instance, backend: PlannerBackend, contexts: Sequence[JobContext],
                    proposals: dict[int, JobProposal], *, rounds: int = 5, fallbacks: int = 0,
                    on_round: RoundListener | None = None, cache: ContextCache | None = None,
                    gate: MessageGate | None = None, disruption: Disruption | None = None,
                    baseline: Schedule | None = None) -> SessionResult:
    """Validate the merged proposals; send each job agent its own violations, up to ``rounds`` times.

    Args:
        instance: The instance.
        backend: The job agents' planner backend.
        contexts: Each job's bounded context (as for round 0).
        proposals: Round 0's proposals by job.
        rounds: K, the most feedback rounds (0: validate round 0 only).
        fallbacks: Jobs that fell back in round 0 (carried into the result).
        on_round: Called with every round (the pipeline logs it).
        cache: Resolves each agent's context at its scope (default: a new normal-scope cache).
        gate: Checks every message before delivery (none by default: the validator sees everything).
        disruption: When the agents re-plan after a disruption: every draft is validated against it, so the
            frozen past, the reveal time, the downtimes and the new durations are checked too.
        baseline: The plan in force when the disruption was revealed (which operations had started).
    """
    cache = cache or ContextCache()
    by_job = {c.job: c for c in contexts}
    current = dict(proposals)
    plan = _merge(instance, current)
    report = validate(instance, plan, disruption=disruption, baseline=baseline)
    history = [_round(0, plan, report, sorted(current), [j for j in by_job if j not in current])]
    if on_round is not None:
        on_round(history[-1], plan, report)
    for r in range(1, rounds + 1):
        own = violations_by_job(instance, report)
        if report.valid or not own:
            break  # valid, or no agent to tell: another round would merge and validate the same draft again
        conflicts = _conflicts(instance, report)
        asked, failed = sorted(own), []
        for job in asked:
            # A new frozen context over the current draft: the other jobs' windows at the cache's scope.
            again = cache.resolve(by_job[job], current, attempt=r, conflicts=conflicts.get(job, ()),
                                  feedback=[f"plan draft v{r - 1}: {m}" for m in own[job]])
            proposal, _reason = ask_agent(backend, again, gate=gate)
            if proposal is None:
                failed.append(job)
                continue
            current[job] = proposal
            cache.changed(job)
        plan = _merge(instance, current)
        report = validate(instance, plan, disruption=disruption, baseline=baseline)
        history.append(_round(r, plan, report, asked, failed))
        if on_round is not None:
            on_round(history[-1], plan, report)
    return SessionResult(plan=plan, rounds=history, proposals=current, fallbacks=fallbacks)


def patch_plan(instance: Instance, plan: Schedule) -> Schedule:
    """The deterministic last resort: a feasible plan that follows the draft's start times as priorities."""
    priorities: dict[tuple[int, int], float] = {}
    for o in plan.operations:
        priorities.setdefault((o.job, o.step), float(o.start))
    return priority_decode(instance, priorities)

