"""The declared LLM simulator: seeded, with the stated error rate, correct when told to make no mistake."""

from __future__ import annotations

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import BusyWindow
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_prompts import job_messages
from alas_argo.agents.simulated import ErrorKind, ErrorModel, SimulatedTransport
from alas_argo.jssp.catalog import get_instance
from alas_argo.settings import LlmSettings


def planner(model: ErrorModel | None = None, seed: int = 0) -> LlmPlanner:
    return LlmPlanner(LlmSettings(), transport=SimulatedTransport(model, seed=seed))


def test_rate_follows_the_stated_model() -> None:
    model = ErrorModel()
    assert model.rate(0) == pytest.approx(0.36)
    assert model.rate(1) == pytest.approx(0.18) and model.rate(3) == pytest.approx(0.045)
    assert "36% of entries wrong" in model.describe() and "50% of mistakes corrected" in model.describe()


def test_without_mistakes_it_answers_like_the_exact_agent() -> None:
    ctx = build_job_contexts(get_instance("ft06"))[2].model_copy(update={"busy": [
        BusyWindow(machine=1, start=0, end=40), BusyWindow(machine=3, start=5, end=9)]})
    answer = planner(ErrorModel(entry_error_rate=0)).propose(ctx)
    assert answer.operations == HeuristicPlanner().propose(ctx).operations
    assert answer.usage["estimated_exchanges"] == 1 and answer.usage["prompt_tokens"] > 0


def test_answers_depend_on_the_seed_only() -> None:
    ctx = build_job_contexts(get_instance("ta01"))[0]
    first = planner(seed=1).propose(ctx).operations
    assert planner(seed=1).propose(ctx).operations == first
    assert any(planner(seed=s).propose(ctx).operations != first for s in range(2, 6))


def test_share_of_wrong_entries_is_the_stated_rate() -> None:
    """Over all 300 entries of abz7's first answers, the share that differs from the exact answer."""
    contexts = build_job_contexts(get_instance("abz7"))
    sim, exact = planner(), HeuristicPlanner()
    wrong = total = 0
    for ctx in contexts:
        good = {o.step: o for o in exact.propose(ctx).operations}
        got: dict[int, list] = {}
        for o in sim.propose(ctx).operations:
            got.setdefault(o.step, []).append(o)
        for step, op in good.items():
            total += 1
            wrong += got.get(step) != [op]
    assert total == 300
    assert 0.28 <= wrong / total <= 0.44


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_each_kind_shows_as_its_violation(kind: ErrorKind) -> None:
    from alas_argo.agents.supervisor import MergeMode, Supervisor
    from alas_argo.jssp.validate import validate

    instance = get_instance("ft06")
    model = ErrorModel(entry_error_rate=1.0, kind_weights={kind: 1.0})
    ctxs = build_job_contexts(instance)
    ctx = ctxs[1].model_copy(update={"busy": [BusyWindow(machine=m, start=0, end=30) for m in range(6)]})
    proposal = planner(model).propose(ctx)
    if kind is ErrorKind.OVERLAP:  # the windows stand for other jobs: the agent's own review sees the overlap
        assert sum("overlaps machine" in n for n in proposal.notes) == len(ctx.operations)
        return
    report = validate(instance, Supervisor(MergeMode.UNION).merge(instance, [proposal]))
    assert kind.value in {str(v.code) for v in report.violations}


def test_error_rate_falls_with_feedback_rounds() -> None:
    ctx = build_job_contexts(get_instance("ta01"))[0]
    exact = HeuristicPlanner().propose(ctx).operations
    sim = SimulatedTransport(seed=3)
    wrong = []
    for attempt in (0, 4):
        p = LlmPlanner(LlmSettings(), transport=sim)
        total = 0
        for s in range(40):
            p_ctx = ctx.model_copy(update={"attempt": attempt, "instance": f"ta01-{s}"})
            total += sum(1 for a, b in zip(p.propose(p_ctx).operations, exact, strict=False) if a != b)
        wrong.append(total)
    assert wrong[1] < wrong[0] / 4


def test_prompt_is_the_job_agents_prompt() -> None:
    ctx = build_job_contexts(get_instance("ft06"))[0]
    p = planner()
    p.propose(ctx)
    (exchange,) = p.recorder.exchanges
    assert exchange.messages == job_messages(ctx) and exchange.model == "simulated"
