"""The validator-feedback session: each agent gets only its own violations, for at most K rounds."""

from __future__ import annotations

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobContext, JobProposal
from alas_argo.agents.feedback import feedback_rounds, first_proposals, patch_plan, violations_by_job
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings


class Spy:
    """A backend that records every context it is given and answers through another."""

    name = "spy"

    def __init__(self, inner: LlmPlanner) -> None:
        self.inner = inner
        self.seen: list[JobContext] = []

    def propose(self, ctx: JobContext) -> JobProposal:
        self.seen.append(ctx)
        return self.inner.propose(ctx)


def simulated(model: ErrorModel | None = None, seed: int = 0) -> LlmPlanner:
    return LlmPlanner(LlmSettings(), transport=SimulatedTransport(model, seed=seed))


def test_exact_agents_are_valid_in_round_zero() -> None:
    instance = get_instance("la01")
    contexts = build_job_contexts(instance)
    proposals, fallbacks = first_proposals(instance, HeuristicPlanner(), contexts)
    session = feedback_rounds(instance, HeuristicPlanner(), contexts, proposals, rounds=5)
    assert fallbacks == 0 and session.trace == [0] and session.valid


def test_each_agent_sees_only_its_own_violations_in_a_new_context() -> None:
    instance = get_instance("abz5")
    contexts = build_job_contexts(instance)
    spy = Spy(simulated(seed=2))
    proposals, _ = first_proposals(instance, spy, contexts)
    round0 = len(spy.seen)
    drafts = []
    session = feedback_rounds(instance, spy, contexts, proposals, rounds=5,
                              on_round=lambda r, plan, report: drafts.append((r, plan, report)))
    assert round0 == instance.num_jobs
    assert session.trace[0] > 0 and session.trace[-1] < session.trace[0]
    assert len(session.rounds) <= 6 and [r.round for r in session.rounds] == list(range(len(session.rounds)))
    asked = spy.seen[round0:]
    for r, (_, _, report) in enumerate(drafts[:-1], start=1):
        own = violations_by_job(instance, report)
        in_round = [c for c in asked if c.attempt == r]
        assert sorted(c.job for c in in_round) == sorted(own) == session.rounds[r].jobs_asked
        for ctx in in_round:  # exactly its own violations, tagged with the draft version they come from
            assert ctx.feedback == [f"plan draft v{r - 1}: {m}" for m in own[ctx.job]]
    # what the agents were first given never changed (diagnostics came only through new contexts)
    assert contexts == build_job_contexts(instance)
    assert all(not c.feedback and c.attempt == 0 for c in spy.seen[:round0])


def test_feedback_is_bounded_and_the_patch_is_the_last_resort() -> None:
    instance = get_instance("ft10")
    contexts = build_job_contexts(instance)
    never_learns = simulated(ErrorModel(correction_rate=0.0), seed=1)
    proposals, _ = first_proposals(instance, never_learns, contexts)
    session = feedback_rounds(instance, never_learns, contexts, proposals, rounds=2)
    assert len(session.rounds) == 3 and not session.valid
    patched = patch_plan(instance, session.plan)
    assert validate(instance, patched).valid


def test_zero_rounds_only_measure_round_zero() -> None:
    instance = get_instance("ft06")
    contexts = build_job_contexts(instance)
    p = simulated(seed=5)
    proposals, _ = first_proposals(instance, p, contexts)
    session = feedback_rounds(instance, p, contexts, proposals, rounds=0)
    assert len(session.rounds) == 1 and p.usage["exchanges"] == instance.num_jobs
