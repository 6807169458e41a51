"""`alas bench llm --disruptions`, each variant's repair and each row figure at its edges: what every call of the
protocol is given (LCRP's budget and seed, the rounds, the gate, the context cache, the feedback's fallbacks,
the planner/critic's turns), the rounds each variant reports, the notes (LCRP's fallback, the patch, agents
that gave nothing), the refusals as rows whose `valid` is False, the seconds from the clock, the gap to 3 places,
and the model column of a case with two models or none (mutation survivors of
alas_argo/benchmarks/llm_disruption.py).

The module's collaborators are wrapped, not replaced, unless a test says so: the real protocol runs on ft06 or
la01 against the seeded simulator; the wrappers record what each call was given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from alas_argo.agents.context_scope import ContextCache, ContextScope
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, Message
from alas_argo.agents.message_gate import MessageGate
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks import llm_disruption
from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.benchmarks.llm_disruption import LlmDisruptionRow, run_disruption_case, run_llm_disruption_bench
from alas_argo.benchmarks.repair_reference import Reference
from alas_argo.errors import InfeasibleError
from alas_argo.jssp.catalog import get_instance
from alas_argo.settings import LlmSettings

pytestmark = pytest.mark.usefixtures("no_ambient_endpoint")

FLAWLESS = ErrorModel(entry_error_rate=0)


class Wrap:
    """One of the module's collaborators, wrapped: each call's arguments and result recorded; the real one (or
    ``instead``) called."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, name: str, instead: Callable[..., Any] | None = None) -> None:
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        self.results: list[Any] = []
        self.real = getattr(llm_disruption, name)
        self.instead = instead
        monkeypatch.setattr(llm_disruption, name, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        self.results.append((self.instead or self.real)(*args, **kwargs))
        return self.results[-1]


class Renamed:
    """A simulator whose answers say they came from ``model``."""

    def __init__(self, model: str, *, seed: int = 0, stream: str = "") -> None:
        self.inner = SimulatedTransport(FLAWLESS, seed=seed, stream=stream)
        self.model = model

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        return dataclasses.replace(self.inner.complete(messages, key=key), model=self.model)


def _case(variant: LlmVariant, scenario: str = "breakdown", *, instance: str = "ft06", seed: int = 0,
          model: ErrorModel | None = FLAWLESS, **kwargs: Any) -> LlmDisruptionRow:
    static = SimulatedTransport(model, seed=seed)
    replan = SimulatedTransport(model, seed=seed, stream=scenario)
    kwargs.setdefault("plan_in_force", "shared")
    kwargs.setdefault("reference_budget", 1.0)
    return run_disruption_case(get_instance(instance), variant, seed, scenario, static, replan, **kwargs)


# --- what each call is given ----------------------------------------------------------------------------------


def test_alas_repairs_with_lcrp_under_the_repair_budget_and_the_case_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    repair = Wrap(monkeypatch, "repair")
    row = _case(LlmVariant.ALAS, seed=3, repair_budget=0.7)
    ((args, kwargs),) = repair.calls  # the reference is repair_reference's own call, not this one
    assert args[3] == "lcrp" and kwargs == {"budget": 0.7, "seed": 3}
    assert (row.valid, row.rounds, row.trace, row.first_violations, row.note) == (True, 0, "", None, "")


def test_lcrp_s_fallback_is_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    real = llm_disruption.repair
    Wrap(monkeypatch, "repair", lambda *a, **k: real(*a, **k).model_copy(update={"fallback": True}))
    assert _case(LlmVariant.ALAS).note == "fallback to the global re-solve"


@pytest.mark.parametrize(("instance", "scenario"), [("la01", "shock"), ("la01", "breakdown"), ("ft06", "mixed"),
                                                   ("ft06", "multi-breakdown")])
def test_when_lcrp_finds_no_plan_alas_patches_honouring_the_disruption(monkeypatch: pytest.MonkeyPatch,
                                                                       instance: str, scenario: str) -> None:
    # The patch must keep started work where it is, start nothing before the reveal, keep off a machine while it
    # is down and use the new durations: the validator judges the row against the disruption and the plan.
    def infeasible(*args: Any, **kwargs: Any) -> Any:
        raise InfeasibleError("no room left", where="lcrp")

    Wrap(monkeypatch, "repair", infeasible)
    row = _case(LlmVariant.ALAS, scenario, instance=instance)
    assert row.events > 0 and (row.valid, row.note, row.rounds) == (True, "patched: no room left", 0)


@pytest.mark.parametrize("gate", [True, False])
def test_the_job_agents_replan_with_the_rounds_gate_cache_and_fallbacks_given(monkeypatch: pytest.MonkeyPatch,
                                                                             gate: bool) -> None:
    plan_static = Wrap(monkeypatch, "plan_static")
    drawn = Wrap(monkeypatch, "case_disruption")
    first = Wrap(monkeypatch, "first_proposals")
    rounds = Wrap(monkeypatch, "feedback_rounds")
    row = _case(LlmVariant.NO_REPAIR, rounds=2, gate=gate, scope="minimal")
    ((_, static_kwargs),) = plan_static.calls
    ((first_args, first_kwargs),) = first.calls
    ((round_args, round_kwargs),) = rounds.calls
    assert static_kwargs["rounds"] == 2 and round_kwargs["rounds"] == 2
    # The same instance, planner and contexts in both phases; the rounds judge against the disruption and the
    # plan in force (started work, reveal time, downtime, new durations), not the static problem.
    ft06, in_force = get_instance("ft06"), plan_static.results[0][0]
    assert first_args[0] == ft06 and round_args[:3] == first_args[:3]
    assert round_args[3] is first.results[0][0]
    assert round_kwargs["disruption"] == drawn.results[0] and round_kwargs["baseline"] is in_force
    for kwargs in (static_kwargs, first_kwargs, round_kwargs):
        assert isinstance(kwargs["cache"], ContextCache) and kwargs["cache"].scope is ContextScope.MINIMAL
        assert isinstance(kwargs["gate"], MessageGate) if gate else kwargs["gate"] is None
    assert round_kwargs["gate"] is first_kwargs["gate"] and round_kwargs["cache"] is first_kwargs["cache"]
    # The number of agents that gave nothing usable is handed on, so the rounds count them as fallbacks.
    assert round_kwargs["fallbacks"] == first.results[0][1]
    assert row.note == ""  # no agent gave nothing: no note, not "0 agent(s) ..."


def test_an_agent_that_gave_nothing_is_noted(monkeypatch: pytest.MonkeyPatch) -> None:
    real = llm_disruption.first_proposals
    Wrap(monkeypatch, "first_proposals", lambda *a, **k: (real(*a, **k)[0], 2))
    rounds = Wrap(monkeypatch, "feedback_rounds")
    row = _case(LlmVariant.NO_REPAIR, rounds=1)
    assert rounds.calls[0][1]["fallbacks"] == 2 and row.note == "2 agent(s) gave nothing usable"


def test_the_default_is_five_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    plan_static = Wrap(monkeypatch, "plan_static")
    case = Wrap(monkeypatch, "run_disruption_case")
    _case(LlmVariant.ALAS)
    run_llm_disruption_bench([get_instance("ft06")], [LlmVariant.ALAS], [0], ["breakdown"],
                             lambda *_: (SimulatedTransport(FLAWLESS), SimulatedTransport(FLAWLESS)),
                             plan_in_force="shared", reference_budget=1.0)
    assert [kwargs["rounds"] for _, kwargs in plan_static.calls] == [5, 5]
    assert case.calls[-1][1]["rounds"] == 5


def test_the_planner_critic_gets_every_turn_and_reports_the_revisions(monkeypatch: pytest.MonkeyPatch) -> None:
    critic = Wrap(monkeypatch, "planner_critic")
    row = _case(LlmVariant.PLANNER_CRITIC, rounds=3, model=None)
    ((_, kwargs),) = critic.calls
    (result,) = critic.results
    assert kwargs["turns"] == 3 and result.turns > 1  # the seeded critic asks for at least one revision
    assert row.rounds == result.turns - 1


def test_the_single_agent_reports_no_rounds() -> None:
    row = _case(LlmVariant.SINGLE_AGENT)
    assert (row.rounds, row.trace, row.requests) == (0, "", 1)
    assert row.tokens_estimated is True  # one estimated exchange is enough


# --- refusals are rows ----------------------------------------------------------------------------------------


def test_an_invalid_static_plan_is_a_row_whose_valid_is_false() -> None:
    row = _case(LlmVariant.NO_VALIDATOR, "shock", model=None, plan_in_force="own")
    assert row.static_valid is False and row.valid is False and row.reveal_time is None
    assert (row.events, row.rounds, row.seconds, row.trace, row.first_violations) == (0, 0, 0.0, "", None)
    assert (row.reference_makespan, row.reference_note) == (None, "")


def test_a_disruption_no_plan_can_honour_is_a_row_that_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def at(*args: Any) -> Any:
        raise InfeasibleError("machine 2 never comes back", where="disruption")

    monkeypatch.setattr(llm_disruption, "ExecutionState", SimpleNamespace(at=at))
    row = _case(LlmVariant.ALAS, prices={"simulated": {"prompt_per_1m": 1.0}})
    assert row.cost_usd == 0.0  # priced (the repair phase asked nothing), not "unpriced"
    assert (row.instance, row.variant, row.static_valid, row.valid, row.makespan, row.reference_makespan) == \
        ("ft06", "alas", True, False, None, None)
    assert row.reveal_time is not None and row.events == 1
    assert row.note == "no plan can honour it: machine 2 never comes back"
    assert (row.rounds, row.seconds, row.trace, row.gap_percent, row.moved_operations) == (0, 0.0, "", None, None)


# --- the figures ----------------------------------------------------------------------------------------------


def test_seconds_are_the_repair_phase_s_clock_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter([1000.0, 1002.34567])
    monkeypatch.setattr(llm_disruption, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    assert _case(LlmVariant.ALAS).seconds == 2.3457


def test_the_gap_is_to_three_places(monkeypatch: pytest.MonkeyPatch) -> None:
    real = llm_disruption.reference_for
    refs: list[Reference] = []

    def odd(*args: Any, **kwargs: Any) -> Reference:  # a reference 7 below the real one: a gap with many places
        ref = real(*args, **kwargs)
        refs.append(Reference(makespan=ref.makespan - 7, note=ref.note))
        return refs[-1]

    Wrap(monkeypatch, "reference_for", odd)
    row = _case(LlmVariant.ALAS)
    assert row.makespan is not None and row.reference_makespan == refs[0].makespan
    exact = 100.0 * (row.makespan - refs[0].makespan) / refs[0].makespan
    assert row.gap_percent == round(exact, 3) and round(exact, 3) != round(exact, 4)
    rate = min(100.0, 100.0 * refs[0].makespan / row.makespan)
    assert row.rate == round(rate, 3) and round(rate, 3) != round(rate, 4)
    assert row.reference_note == refs[0].note == "cp-sat optimal"


def test_the_model_column_names_both_models_or_none() -> None:
    ft06 = get_instance("ft06")
    both = run_disruption_case(ft06, LlmVariant.SINGLE_AGENT, 0, "breakdown", Renamed("m-static"),
                               Renamed("m-repair", stream="breakdown"), plan_in_force="shared", reference_budget=1.0)
    assert (both.model, both.simulated) == ("m-repair,m-static", False)
    one = run_disruption_case(ft06, LlmVariant.SINGLE_AGENT, 0, "breakdown", Renamed("m"),
                              Renamed("m", stream="breakdown"), plan_in_force="shared", reference_budget=1.0)
    assert one.model == "m"
    nameless = run_disruption_case(ft06, LlmVariant.SINGLE_AGENT, 0, "breakdown", Renamed(""),
                                   Renamed("", stream="breakdown"), plan_in_force="shared", reference_budget=1.0)
    assert (nameless.model, nameless.simulated, nameless.cost_usd) == ("-", False, None)



def test_the_bench_hands_every_knob_to_every_case_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[Any, ...]] = []
    case = Wrap(monkeypatch, "run_disruption_case", lambda *a, **k: SimpleNamespace(case=a[:4]))

    def transports(instance: Any, variant: LlmVariant, seed: int, scenario: str) -> tuple[Any, Any]:
        made.append(("transports", instance.name, variant, seed, scenario))
        return f"static-{len(made)}", f"replan-{len(made)}"

    def recorder(instance: Any, variant: LlmVariant, seed: int, scenario: str) -> Any:
        made.append(("recorder", instance.name, variant, seed, scenario))
        return f"recorder-{len(made)}"

    seen: list[Any] = []
    ft06, la01 = get_instance("ft06"), get_instance("la01")
    settings, prices = LlmSettings(model="m"), {"m": {"prompt_per_1m": 1.0}}
    rows: list[Any] = run_llm_disruption_bench(
        [ft06, la01], [LlmVariant.SINGLE_AGENT, LlmVariant.ALAS], [7, 3], ["shock", "breakdown"], transports,
        rounds=2, recorder_for=recorder, settings=settings, prices=prices, scope="minimal", gate=True,
        plan_in_force="shared", repair_budget=0.25, reference_budget=0.75, on_row=seen.append)
    # Instance, then scenario, then seed, then variant: the order the tables and the recordings follow.
    order = [(i, v, s, sc) for i in (ft06, la01) for sc in ("shock", "breakdown") for s in (7, 3)
             for v in (LlmVariant.SINGLE_AGENT, LlmVariant.ALAS)]
    assert [r.case for r in rows] == order and seen == rows
    references = case.calls[0][1]["references"]
    for n, (args, kwargs) in enumerate(case.calls):
        assert args == (*order[n], f"static-{2 * n + 1}", f"replan-{2 * n + 1}")
        assert kwargs == {"rounds": 2, "recorder": f"recorder-{2 * n + 2}", "settings": settings, "prices": prices,
                          "scope": "minimal", "gate": True, "plan_in_force": "shared", "repair_budget": 0.25,
                          "reference_budget": 0.75, "references": references}
        assert kwargs["references"] is references  # one reference per plan in force and disruption, bench-wide
    assert references == {}  # fresh for the bench (the fake cases solved nothing)
    assert [m[1:] for m in made[::2]] == [(i.name, v, s, sc) for i, v, s, sc in order]


def test_the_bench_s_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    case = Wrap(monkeypatch, "run_disruption_case", lambda *a, **k: SimpleNamespace(case=a[:4]))
    run_llm_disruption_bench([get_instance("ft06")], [LlmVariant.ALAS], [0], ["breakdown"],
                             lambda *_: (SimulatedTransport(), SimulatedTransport()))
    ((_, kwargs),) = case.calls
    assert {k: v for k, v in kwargs.items() if k != "references"} == {
        "rounds": 5, "recorder": None, "settings": None, "prices": None, "scope": ContextScope.NORMAL, "gate": False,
        "plan_in_force": llm_disruption.PlanInForce.OWN, "repair_budget": 5.0, "reference_budget": 10.0}


def test_a_case_s_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    # No gate, 5 rounds, the case's own plan, LCRP's 5 s and the reference's 10 s, the simulator's settings.
    planners = Wrap(monkeypatch, "LlmPlanner")
    plan_static = Wrap(monkeypatch, "plan_static")
    repair = Wrap(monkeypatch, "repair")
    reference = Wrap(monkeypatch, "reference_for")
    ft06 = get_instance("ft06")
    row = run_disruption_case(ft06, LlmVariant.ALAS, 0, "breakdown", SimulatedTransport(FLAWLESS),
                              SimulatedTransport(FLAWLESS, stream="breakdown"))
    assert row.plan_in_force == "own" and row.static_makespan == plan_static.results[0][0].makespan
    ((_, static_kwargs),) = plan_static.calls
    assert (static_kwargs["rounds"], static_kwargs["gate"]) == (5, None)
    assert static_kwargs["cache"].scope is ContextScope.NORMAL
    assert repair.calls[0][1]["budget"] == 5.0 and reference.calls[0][1]["budget"] == 10.0
    assert [args[0] for args, _ in planners.calls] == 2 * [LlmSettings(model="simulated")]


def test_the_settings_given_reach_both_phases_planners(monkeypatch: pytest.MonkeyPatch) -> None:
    planners = Wrap(monkeypatch, "LlmPlanner")
    settings = LlmSettings(model="m", temperature=0.3)
    _case(LlmVariant.ALAS, settings=settings)
    assert [args[0] for args, _ in planners.calls] == [settings, settings]


def test_the_disruption_is_drawn_with_the_case_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = Wrap(monkeypatch, "case_disruption")
    plan_static = Wrap(monkeypatch, "plan_static")
    _case(LlmVariant.ALAS, "mixture", seed=4)
    ((args, _),) = drawn.calls
    assert args == (get_instance("ft06"), plan_static.results[0][0], "mixture", 4)


class Prose:
    """An endpoint that never gives a plan: every answer is prose."""

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        return ChatResult(text="I would rather not.", model="simulated", prompt_tokens=3, completion_tokens=4)


def test_no_static_plan_has_no_makespan_and_is_still_priced() -> None:
    row = run_disruption_case(get_instance("ft06"), LlmVariant.SINGLE_AGENT, 0, "shock", Prose(), Prose(),
                              prices={"simulated": {"prompt_per_1m": 1.0}})
    assert (row.static_valid, row.static_makespan, row.valid, row.plan_in_force) == (False, None, False, "own")
    # The repair phase asked nothing: it costs 0 at the model's price, not "unpriced".
    assert (row.requests, row.cost_usd, row.tokens_estimated) == (0, 0.0, False)


def test_the_final_plan_is_judged_against_the_disruption_and_the_plan_in_force(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the plan in force the validator cannot see started work moved: a re-plan that moves it would pass.
    judged = Wrap(monkeypatch, "validate")
    plan_static = Wrap(monkeypatch, "plan_static")
    drawn = Wrap(monkeypatch, "case_disruption")
    _case(LlmVariant.NO_VALIDATOR)
    static, final = judged.calls
    in_force = plan_static.results[0][0]
    assert static == ((get_instance("ft06"), in_force), {})
    assert final[1] == {"disruption": drawn.results[0], "baseline": in_force}


def test_an_invalid_final_plan_has_a_makespan_but_no_gap_rate_or_moves() -> None:
    row = _case(LlmVariant.NO_VALIDATOR, model=None)  # the seeded simulator's unchecked re-plan
    assert row.valid is False and row.makespan is not None and row.reference_makespan is not None
    assert (row.gap_percent, row.rate, row.moved_operations) == (None, 0.0, None)
    assert row.tokens_estimated is True  # the simulator's token counts are estimates


@pytest.mark.parametrize("variant", [LlmVariant.SINGLE_AGENT, LlmVariant.PLANNER_CRITIC])
def test_a_whole_instance_re_plan_s_note_is_its_first_two_notes(monkeypatch: pytest.MonkeyPatch,
                                                                variant: LlmVariant) -> None:
    name = "single_agent" if variant is LlmVariant.SINGLE_AGENT else "planner_critic"
    real = getattr(llm_disruption, name)
    notes = ["answer cut off at the token limit", "job 3 left out", "job 4 left out"]
    Wrap(monkeypatch, name, lambda *a, **k: dataclasses.replace(real(*a, **k), notes=notes))
    assert _case(variant).note == "answer cut off at the token limit; job 3 left out"


def test_a_re_plan_with_no_operations_has_no_makespan() -> None:
    row = run_disruption_case(get_instance("ft06"), LlmVariant.SINGLE_AGENT, 0, "shock", SimulatedTransport(FLAWLESS),
                              Prose(), plan_in_force="shared", reference_budget=1.0)
    assert row.static_valid and (row.valid, row.makespan, row.rate, row.gap_percent) == (False, None, 0.0, None)


def test_the_case_s_reference_goes_into_the_cache_it_is_given() -> None:
    references: dict[Any, Reference] = {}
    row = _case(LlmVariant.ALAS, references=references)
    (reference,) = references.values()
    assert (reference.makespan, reference.note) == (row.reference_makespan, row.reference_note)
