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


def test_when_lcrp_finds_no_plan_alas_patches_with_the_new_durations(monkeypatch: pytest.MonkeyPatch) -> None:
    def infeasible(*args: Any, **kwargs: Any) -> Any:
        raise InfeasibleError("no room left", where="lcrp")

    Wrap(monkeypatch, "repair", infeasible)
    row = _case(LlmVariant.ALAS, "shock", instance="la01")  # a shock changes durations: the patch must use them
    assert row.events > 0 and (row.valid, row.note, row.rounds) == (True, "patched: no room left", 0)


@pytest.mark.parametrize("gate", [True, False])
def test_the_job_agents_replan_with_the_rounds_gate_cache_and_fallbacks_given(monkeypatch: pytest.MonkeyPatch,
                                                                             gate: bool) -> None:
    plan_static = Wrap(monkeypatch, "plan_static")
    first = Wrap(monkeypatch, "first_proposals")
    rounds = Wrap(monkeypatch, "feedback_rounds")
    row = _case(LlmVariant.NO_REPAIR, rounds=2, gate=gate, scope="minimal")
    ((_, static_kwargs),) = plan_static.calls
    ((_, first_kwargs),) = first.calls
    ((_, round_kwargs),) = rounds.calls
    assert static_kwargs["rounds"] == 2 and round_kwargs["rounds"] == 2
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


# --- refusals are rows ----------------------------------------------------------------------------------------


def test_an_invalid_static_plan_is_a_row_whose_valid_is_false() -> None:
    row = _case(LlmVariant.NO_VALIDATOR, "shock", model=None, plan_in_force="own")
    assert row.static_valid is False and row.valid is False and row.reveal_time is None


def test_a_disruption_no_plan_can_honour_is_a_row_that_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    def at(*args: Any) -> Any:
        raise InfeasibleError("machine 2 never comes back", where="disruption")

    monkeypatch.setattr(llm_disruption, "ExecutionState", SimpleNamespace(at=at))
    row = _case(LlmVariant.ALAS)
    assert (row.instance, row.variant, row.static_valid, row.valid, row.makespan, row.reference_makespan) == \
        ("ft06", "alas", True, False, None, None)
    assert row.reveal_time is not None and row.events == 1
    assert row.note == "no plan can honour it: machine 2 never comes back"


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

