"""`alas bench llm --disruptions`: the paper's variants when a disruption hits the plan they committed.

One case is (instance, variant, seed, scenario):

1. **the plan in force**: the variant's own static plan (``own``, the default), or the ``alas`` variant's
   (``shared``: every variant repairs the same plan and the same disruption), made exactly as the static
   experiment makes it (:func:`~alas_argo.benchmarks.llm_bench.plan_static`, same seed, same answers). A
   plan the validator rejects cannot be in force: the case fails before any disruption (``static_valid``
   false, nothing repaired);
2. **the disruption**: ``scenario`` (a kind, ``breakdown``/``shock``/``mixed``, or a family of ``alas disrupt
   --family``) drawn against that plan with the case's seed, the same draw ``alas bench repair`` makes;
3. **the repair** (what each variant does, :data:`REPAIRS`), then the independent validator judges the final
   plan against the disruption and the plan in force: started work kept, nothing new before the reveal
   time, nothing on a machine during its downtime, the new durations.

Figures of the repair phase only (the static plan's are the static experiment's): success (a valid final
plan), the makespan, the **reference** — a ``full`` re-solve (CP-SAT over every free operation, ``alas repair
--method full``) with ``reference_budget`` deterministic seconds on the same plan in force and disruption —,
the **rate**: 100 x reference / makespan for a valid final plan (capped at 100), 0 otherwise (the optimal rate
with the reference in place of the best known), the gap to the reference (valid plans; negative when a
variant beat the time-boxed reference), moved operations (start changed against the plan in force, valid
plans), feedback rounds, LLM requests (exchanges; a replay serves the same ones) and HTTP calls (retries
included; 0 on a replay), tokens, wall time and cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from alas_argo.agents.baselines import planner_critic, single_agent
from alas_argo.agents.context import replan_contexts
from alas_argo.agents.context_scope import ContextCache, ContextScope
from alas_argo.agents.feedback import feedback_rounds, first_proposals
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ChatTransport
from alas_argo.agents.llm_recording import ExchangeRecorder
from alas_argo.agents.message_gate import MessageGate
from alas_argo.agents.roles import RepairerRole
from alas_argo.benchmarks.llm_bench import LlmVariant, Prices, family_of, optimal_rate, plan_static, tokens_cost
from alas_argo.benchmarks.repair import case_disruption
from alas_argo.benchmarks.repair_reference import Reference, References, reference_for
from alas_argo.errors import InfeasibleError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings

__all__ = ["REPAIRS", "LlmDisruptionRow", "PlanInForce", "TransportsFor", "run_disruption_case",
           "run_llm_disruption_bench"]

#: What each variant does once the disruption is revealed (tables and ``--help`` print these).
REPAIRS: dict[LlmVariant, str] = {
    LlmVariant.ALAS: "LCRP then the validator: deterministic, no LLM call (the pipeline's agents do not take "
                     "part in repairs); the patch if LCRP finds no plan",
    LlmVariant.NO_REPAIR: "the job agents re-plan from the reveal time (started work fixed, downtime busy, new "
                          "durations), K rounds of validator feedback; no LCRP, no patch",
    LlmVariant.NO_VALIDATOR: "the job agents' first re-plan, merged, is the plan (no check, no feedback)",
    LlmVariant.SINGLE_AGENT: "one prompt re-plans the whole instance from the reveal time",
    LlmVariant.PLANNER_CRITIC: "the planner re-plans the whole instance, the critic reviews, up to K revisions",
}

#: The short name of each repair, for table cells.
_REPAIR_CELL = {LlmVariant.ALAS: "lcrp (deterministic)", LlmVariant.NO_REPAIR: "agents + feedback",
                LlmVariant.NO_VALIDATOR: "agents, unchecked", LlmVariant.SINGLE_AGENT: "single prompt",
                LlmVariant.PLANNER_CRITIC: "planner/critic"}


class PlanInForce(StrEnum):
    """Whose static plan the disruption hits (module doc)."""

    OWN = "own"
    SHARED = "shared"


@dataclass(frozen=True)
class LlmDisruptionRow:
    """One variant repairing one disruption of one instance with one seed."""

    instance: str
    family: str
    variant: str
    seed: int
    scenario: str
    plan_in_force: str
    model: str
    simulated: bool
    static_valid: bool
    static_makespan: int | None
    reveal_time: int | None
    events: int
    repair: str
    valid: bool
    makespan: int | None
    reference_makespan: int | None
    reference_note: str
    rate: float
    gap_percent: float | None
    moved_operations: int | None
    rounds: int
    trace: str
    first_violations: int | None
    requests: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    tokens_estimated: bool
    seconds: float
    cost_usd: float | None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object."""
        return asdict(self)


def _repaired(instance: Instance, variant: LlmVariant, plan: Schedule, disruption: Disruption,
              state: ExecutionState, planner: LlmPlanner, *, rounds: int, seed: int, repair_budget: float,
              cache: ContextCache, gate: MessageGate | None) -> tuple[Schedule, list[int], int, str]:
    """The final plan of ``variant`` after ``disruption`` (:data:`REPAIRS`), its feedback trace, the rounds
    used after the first answer, and a note."""
    if variant is LlmVariant.ALAS:
        try:
            result = repair(instance, plan, disruption, "lcrp", budget=repair_budget, seed=seed)
            return result.schedule, [], 0, "fallback to the global re-solve" if result.fallback else ""
        except InfeasibleError as e:  # the pipeline's revalidation loop would patch: so does the bench
            base = plan.by_key()
            fixed = {k: (base[k].start, base[k].start + state.durations[k]) for k in state.frozen}
            patched = RepairerRole("lcrp").patch(instance, plan, release=disruption.time, fixed=fixed,
                                                 min_starts=dict(state.release), downtimes=state.downtimes,
                                                 durations=state.durations)
            return patched, [], 0, f"patched: {e.message}"
    if variant in (LlmVariant.NO_REPAIR, LlmVariant.NO_VALIDATOR):
        contexts = replan_contexts(state)
        proposals, fallbacks = first_proposals(instance, planner, contexts, cache=cache, gate=gate)
        k = 0 if variant is LlmVariant.NO_VALIDATOR else rounds
        session = feedback_rounds(instance, planner, contexts, proposals, rounds=k, fallbacks=fallbacks,
                                  cache=cache, gate=gate, disruption=disruption, baseline=plan)
        note = f"{fallbacks} agent(s) gave nothing usable" if fallbacks else ""
        return session.plan, session.trace, len(session.rounds) - 1, note
    if variant is LlmVariant.SINGLE_AGENT:
        answer = single_agent(instance, planner, state=state)
        return answer.plan, [], 0, "; ".join(answer.notes[:2])
    result_pc = planner_critic(instance, planner, turns=rounds, state=state)
    return result_pc.plan, [], result_pc.turns - 1, "; ".join(result_pc.notes[:2])


def run_disruption_case(instance: Instance, variant: LlmVariant, seed: int, scenario: str,
                        static_transport: ChatTransport, repair_transport: ChatTransport, *, rounds: int = 5,
                        recorder: ExchangeRecorder | None = None, settings: LlmSettings | None = None,
                        prices: Prices | None = None, scope: ContextScope | str = ContextScope.NORMAL,
                        gate: bool = False, plan_in_force: PlanInForce | str = PlanInForce.OWN,
                        repair_budget: float = 5.0, reference_budget: float = 10.0,
                        references: References | None = None) -> LlmDisruptionRow:
    """Plan, disrupt, repair and judge one case (module doc).

    ``static_transport`` answers the static plan, ``repair_transport`` the re-plan (the same object when
    replaying: a case's exchanges are served in the order they were recorded).
    """
    mode = PlanInForce(plan_in_force)
    recorder = recorder or ExchangeRecorder()
    llm = settings or LlmSettings(model="simulated")
    static_planner = LlmPlanner(llm, transport=static_transport, recorder=recorder)
    maker = variant if mode is PlanInForce.OWN else LlmVariant.ALAS
    plan, _, _, _ = plan_static(instance, maker, static_planner, rounds=rounds, cache=ContextCache(scope),
                                gate=MessageGate() if gate else None)
    static_valid = validate(instance, plan).valid
    planner = LlmPlanner(llm, transport=repair_transport, recorder=recorder)
    common: dict[str, Any] = {
        "instance": instance.name, "family": family_of(instance.name), "variant": str(variant), "seed": seed,
        "scenario": scenario, "plan_in_force": "own" if mode is PlanInForce.OWN else "alas",
        "static_valid": static_valid, "static_makespan": plan.makespan if plan.operations else None,
        "repair": _REPAIR_CELL[variant]}
    if not static_valid:
        return _row(common, recorder, planner, prices, valid=False, note="the static plan is invalid: no plan "
                    "in force to repair")
    disruption = case_disruption(instance, plan, scenario, seed)
    common |= {"reveal_time": disruption.time, "events": len(disruption.events)}
    started = time.perf_counter()
    try:
        state = ExecutionState.at(instance, plan, disruption)
    except InfeasibleError as e:
        return _row(common, recorder, planner, prices, valid=False, note=f"no plan can honour it: {e.message}")
    final, trace, used, note = _repaired(instance, variant, plan, disruption, state, planner, rounds=rounds,
                                         seed=seed, repair_budget=repair_budget, cache=ContextCache(scope),
                                         gate=MessageGate() if gate else None)
    seconds = time.perf_counter() - started
    valid = validate(instance, final, disruption=disruption, baseline=plan).valid
    ref = reference_for(instance, plan, disruption, budget=reference_budget, cache=references)
    makespan = final.makespan if final.operations else None
    return _row(common, recorder, planner, prices, valid=valid, makespan=makespan, reference=ref,
                moved=moved_operations(plan, final) if valid else None, trace=trace, rounds=used,
                seconds=seconds, note=note)


def _row(common: dict[str, Any], recorder: ExchangeRecorder, planner: LlmPlanner, prices: Prices | None, *,
         valid: bool, makespan: int | None = None, reference: Reference | None = None, moved: int | None = None,
         trace: Sequence[int] = (), rounds: int = 0, seconds: float = 0.0, note: str = "") -> LlmDisruptionRow:
    exchanges = recorder.exchanges  # both phases: which model (or the simulator) planned this case
    models = sorted({e.model for e in exchanges if e.model})
    model = models[0] if len(models) == 1 else ",".join(models) or "-"
    usage = planner.usage  # the repair phase's exchanges only
    ref = reference.makespan if reference is not None else None
    rate = optimal_rate(valid, makespan, ref)
    gap = round(100.0 * (makespan - ref) / ref, 3) if valid and ref and makespan else None
    prompt, completion = int(usage["prompt_tokens"]), int(usage["completion_tokens"])
    return LlmDisruptionRow(
        **{"reveal_time": None, "events": 0, **common}, model=model,
        simulated=bool(exchanges) and all(e.model == "simulated" for e in exchanges), valid=valid,
        makespan=makespan, reference_makespan=ref, reference_note=reference.note if reference else "",
        rate=round(rate, 3), gap_percent=gap, moved_operations=moved, rounds=rounds,
        trace=" > ".join(str(v) for v in trace), first_violations=trace[0] if trace else None,
        requests=int(usage["exchanges"]), calls=int(usage["calls"]), prompt_tokens=prompt, completion_tokens=completion,
        tokens_estimated=int(usage["estimated_exchanges"]) > 0, seconds=round(seconds, 4),
        cost_usd=tokens_cost(model, prompt, completion, prices), note=note)


#: (instance, variant, seed, scenario) -> (the static plan's transport, the re-plan's transport).
TransportsFor = Callable[[Instance, LlmVariant, int, str], tuple[ChatTransport, ChatTransport]]


def run_llm_disruption_bench(instances: Sequence[Instance], variants: Sequence[LlmVariant], seeds: Sequence[int],
                             scenarios: Sequence[str], transports_for: TransportsFor, *, rounds: int = 5,
                             recorder_for: Callable[[Instance, LlmVariant, int, str], ExchangeRecorder] | None = None,
                             settings: LlmSettings | None = None, prices: Prices | None = None,
                             scope: ContextScope | str = ContextScope.NORMAL, gate: bool = False,
                             plan_in_force: PlanInForce | str = PlanInForce.OWN, repair_budget: float = 5.0,
                             reference_budget: float = 10.0,
                             on_row: Callable[[LlmDisruptionRow], None] | None = None) -> list[LlmDisruptionRow]:
    """Every (instance, scenario, seed, variant): a fresh planner per case; one reference per distinct plan in
    force and disruption."""
    references: References = {}
    rows = []
    for instance in instances:
        for scenario in scenarios:
            for seed in seeds:
                for variant in variants:
                    static, replan = transports_for(instance, variant, seed, scenario)
                    recorder = recorder_for(instance, variant, seed, scenario) if recorder_for else None
                    row = run_disruption_case(instance, variant, seed, scenario, static, replan, rounds=rounds,
                                              recorder=recorder, settings=settings, prices=prices, scope=scope,
                                              gate=gate, plan_in_force=plan_in_force,
                                              repair_budget=repair_budget, reference_budget=reference_budget,
                                              references=references)
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
    return rows
