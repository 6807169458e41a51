"""`alas bench llm`: the paper's protocol — variants x instances x seeds with an LLM (or the simulator) planning.

Variants (every one judged afterwards by the independent validator):

- ``alas``: job agents with bounded contexts asked in job order, K rounds of validator feedback to the
  agents responsible, the deterministic patch as the last resort (:mod:`alas_argo.agents.feedback`);
- ``alas_no_repair``: the same feedback rounds, no patch (an invalid last draft is a failure);
- ``alas_no_validator``: the agents' first answers, merged, are the plan (no check, no feedback);
- ``single_agent`` and ``planner_critic``: the baselines of §4.1.1 (:mod:`alas_argo.agents.baselines`).

Figures per case: success (a valid final plan), the **optimal rate** — 100 x best known / makespan for a
valid plan, 0 for an invalid one — and whether the plan is at the best known makespan, the gap to the best
known (valid plans), feedback rounds used, LLM calls, prompt and completion tokens, wall time, and cost from
a price table (model -> USD per million prompt / completion tokens; None when the model has no price).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from alas_argo.agents.baselines import planner_critic, single_agent, single_messages
from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.context_scope import ContextCache, ContextScope
from alas_argo.agents.feedback import feedback_rounds, first_proposals, patch_plan
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ChatTransport, estimate_tokens
from alas_argo.agents.llm_recording import Exchange, ExchangeRecorder
from alas_argo.agents.message_gate import MessageGate
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings

__all__ = ["LlmCaseRow", "LlmVariant", "Prices", "family_of", "optimal_rate", "plan_static", "run_case",
           "run_llm_bench", "tokens_cost"]

#: Model name -> {"prompt_per_1m": USD, "completion_per_1m": USD}.
Prices = dict[str, dict[str, float]]


class LlmVariant(StrEnum):
    """What plans in a case (module doc)."""

    ALAS = "alas"
    NO_REPAIR = "alas_no_repair"
    NO_VALIDATOR = "alas_no_validator"
    SINGLE_AGENT = "single_agent"
    PLANNER_CRITIC = "planner_critic"


@dataclass(frozen=True)
class LlmCaseRow:
    """One variant on one instance with one seed (a fresh-context thread)."""

    instance: str
    family: str
    variant: str
    seed: int
    model: str
    simulated: bool
    valid: bool
    makespan: int | None
    best_known: int | None
    optimal_rate: float
    at_best: bool
    gap_percent: float | None
    rounds: int
    trace: str
    first_violations: int | None
    patched: bool
    calls: int
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    seconds: float
    cost_usd: float | None
    agent_prompt_tokens: float | None
    single_prompt_tokens: int
    context_scope: str = "normal"
    context_cache_hits: int = 0
    context_cache_misses: int = 0
    gate: str = "-"

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object."""
        return asdict(self)


def optimal_rate(valid: bool, makespan: int | None, best_known: int | None) -> float:
    """100 x best known / makespan for a valid plan (capped at 100), 0 for an invalid one."""
    if not valid or not makespan or not best_known:
        return 0.0
    return min(100.0, 100.0 * best_known / makespan)


def family_of(name: str) -> str:
    """The instance family: the name without its trailing number."""
    return re.sub(r"\d+$", "", name)


def tokens_cost(model: str, prompt: int, completion: int, prices: Prices | None) -> float | None:
    """The cost of the tokens at ``model``'s price (None when the table has no price for it)."""
    price = (prices or {}).get(model)
    if price is None:
        return None
    return round(price.get("prompt_per_1m", 0.0) * prompt / 1e6 + price.get("completion_per_1m", 0.0)
                 * completion / 1e6, 6)


def plan_static(instance: Instance, variant: LlmVariant, planner: LlmPlanner, *, rounds: int = 5,
                cache: ContextCache | None = None,
                gate: MessageGate | None = None) -> tuple[Schedule, list[int], int, bool]:
    """The static plan ``variant`` makes (module doc), unjudged.

    Returns:
        The final plan, the violations per feedback round, the rounds (or critic turns) used after the first
        answer, and whether the deterministic patch made the plan.
    """
    trace: list[int] = []
    patched = False
    used_rounds = 0
    if variant in (LlmVariant.ALAS, LlmVariant.NO_REPAIR, LlmVariant.NO_VALIDATOR):
        contexts = build_job_contexts(instance)
        proposals, fallbacks = first_proposals(instance, planner, contexts, cache=cache, gate=gate)
        k = 0 if variant is LlmVariant.NO_VALIDATOR else rounds
        session = feedback_rounds(instance, planner, contexts, proposals, rounds=k, fallbacks=fallbacks,
                                  cache=cache, gate=gate)
        plan, trace, used_rounds = session.plan, session.trace, len(session.rounds) - 1
        if variant is LlmVariant.ALAS and not session.valid:
            plan, patched = patch_plan(instance, plan), True
    elif variant is LlmVariant.SINGLE_AGENT:
        plan = single_agent(instance, planner).plan
    else:
        result = planner_critic(instance, planner, turns=rounds)
        plan, used_rounds = result.plan, result.turns - 1
    return plan, trace, used_rounds, patched


def run_case(instance: Instance, variant: LlmVariant, seed: int, transport: ChatTransport, *, rounds: int = 5,
             recorder: ExchangeRecorder | None = None, settings: LlmSettings | None = None,
             prices: Prices | None = None, scope: ContextScope | str = ContextScope.NORMAL,
             gate: bool = False) -> LlmCaseRow:
    """Plan ``instance`` with ``variant``, its answers from ``transport``; judge the plan (module doc).

    ``scope`` is the job agents' context scope (:mod:`alas_argo.agents.context_scope`); ``gate`` checks
    their messages before delivery (:mod:`alas_argo.agents.message_gate`).
    """
    cache = ContextCache(scope)
    checker = MessageGate() if gate else None
    recorder = recorder or ExchangeRecorder()
    planner = LlmPlanner(settings or LlmSettings(model="simulated"), transport=transport, recorder=recorder)
    started = time.perf_counter()
    plan, trace, used_rounds, patched = plan_static(instance, variant, planner, rounds=rounds, cache=cache,
                                                    gate=checker)
    seconds = time.perf_counter() - started
    valid = validate(instance, plan).valid
    makespan = plan.makespan if plan.operations else None
    best = instance.upper_bound
    exchanges = recorder.exchanges
    models = {e.model for e in exchanges if e.model}
    model = sorted(models)[0] if len(models) == 1 else ",".join(sorted(models)) or "-"
    usage = planner.usage
    # Estimated from the text on both sides, so that the comparison with the single-agent prompt is like for like.
    # Each job agent's first prompt only: the message gate asks a rejected answer again at attempt 0.
    first_asks: dict[int | None, Exchange] = {}
    for e in exchanges:
        if e.role == "job" and e.attempt == 0:
            first_asks.setdefault(e.job, e)
    agent_prompts = [estimate_tokens("".join(m.get("content", "") for m in e.messages)) for e in first_asks.values()]
    return LlmCaseRow(
        instance=instance.name, family=family_of(instance.name), variant=str(variant), seed=seed, model=model,
        simulated=bool(exchanges) and all(e.model == "simulated" for e in exchanges), valid=valid,
        makespan=makespan, best_known=best, optimal_rate=round(optimal_rate(valid, makespan, best), 3),
        at_best=valid and best is not None and makespan is not None and makespan <= best,
        gap_percent=round(100.0 * (makespan - best) / best, 3) if valid and best and makespan else None,
        rounds=used_rounds, trace=" > ".join(str(v) for v in trace), first_violations=trace[0] if trace else None,
        patched=patched, calls=int(usage["calls"]), prompt_tokens=int(usage["prompt_tokens"]),
        completion_tokens=int(usage["completion_tokens"]), tokens_estimated=int(usage["estimated_exchanges"]) > 0,
        seconds=round(seconds, 4),
        cost_usd=tokens_cost(model, int(usage["prompt_tokens"]), int(usage["completion_tokens"]), prices),
        agent_prompt_tokens=round(sum(agent_prompts) / len(agent_prompts), 1) if agent_prompts else None,
        single_prompt_tokens=estimate_tokens("".join(m["content"] for m in single_messages(instance))),
        context_scope=str(cache.scope), context_cache_hits=cache.hits, context_cache_misses=cache.misses,
        gate=" ".join(f"{k} {v}" for k, v in checker.counts.items()) if checker else "-")


def run_llm_bench(instances: Sequence[Instance], variants: Sequence[LlmVariant], seeds: Sequence[int],
                  transport_for: Callable[[Instance, LlmVariant, int], ChatTransport], *, rounds: int = 5,
                  recorder_for: Callable[[Instance, LlmVariant, int], ExchangeRecorder] | None = None,
                  settings: LlmSettings | None = None, prices: Prices | None = None,
                  scopes: Sequence[ContextScope | str] = (ContextScope.NORMAL,), gate: bool = False,
                  on_row: Callable[[LlmCaseRow], None] | None = None) -> list[LlmCaseRow]:
    """Every (instance, variant, seed): a fresh planner per case, so no context leaks between threads.

    With several ``scopes``, the ALAS variants run once per scope (the baselines have no job agents)."""
    rows = []
    for instance in instances:
        for variant in variants:
            agents = variant in (LlmVariant.ALAS, LlmVariant.NO_REPAIR, LlmVariant.NO_VALIDATOR)
            for scope in (scopes if agents else scopes[:1]):
                for seed in seeds:
                    recorder = recorder_for(instance, variant, seed) if recorder_for else None
                    row = run_case(instance, variant, seed, transport_for(instance, variant, seed), rounds=rounds,
                                   recorder=recorder, settings=settings, prices=prices, scope=scope,
                                   gate=gate)
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
    return rows
