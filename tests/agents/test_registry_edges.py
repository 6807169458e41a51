"""The agent factory at its edges: a role gets the backend it asks for when that backend is registered and
available, the role's fallback otherwise, and the substitution is reported in a note that says which backend
was asked for, why it was not used and which one was; with no fallback to take, the refusal names the role, the
backend and why. The pipeline only ever asks the built-in registry with a full spec, so these tests also pin
what each built-in backend builds (and from which spec keys, with which defaults) and what the LLM and
simulated factories wire up: the usage callback that feeds the metrics, the recorder, the replayed answers."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo import metrics
from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_prompts import job_messages
from alas_argo.agents.llm_recording import Exchange, ExchangeRecorder, ReplayTransport
from alas_argo.agents.registry import AgentRegistry, Instantiated, PassThroughOptimizer, Role, default_registry
from alas_argo.agents.roles import Improvement, OptimizerRole, RepairerRole, ValidatorRole
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.agents.supervisor import MergeMode, Supervisor
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.log import EventType
from alas_argo.settings import LlmSettings, Settings

NO_ENDPOINT = "no endpoint configured (set OPENAI_BASE_URL or --llm-base-url, or use --llm-replay RUN)"


class _Made:
    """What a test factory built, and the spec it was handed."""

    def __init__(self, backend: str, spec: dict[str, Any]) -> None:
        self.backend = backend
        self.spec = spec


def _factory(backend: str) -> Any:
    return lambda spec: _Made(backend, spec)


def _registry(*, fallback: bool = True, reason: str | None = None) -> AgentRegistry:
    """A job-agent role with a ``heuristic`` fallback (when ``fallback``) and an ``llm`` backend that is
    unavailable for ``reason`` (available when None)."""
    reg = AgentRegistry()
    reg.register(Role.JOB_AGENT, "heuristic", _factory("heuristic"), fallback=fallback)
    reg.register(Role.JOB_AGENT, "llm", _factory("llm"), available=lambda _spec: reason)
    return reg


# -- AgentRegistry -------------------------------------------------------------------------------------------

def test_backends_are_listed_sorted_per_role_and_empty_for_a_role_with_none() -> None:
    reg = AgentRegistry()
    for name in ("zeta", "alpha", "mid"):
        reg.register(Role.OPTIMIZER, name, _factory(name))
    assert reg.backends(Role.OPTIMIZER) == ["alpha", "mid", "zeta"]
    assert reg.backends(Role.VALIDATOR) == []


def test_an_available_backend_is_used_with_a_copy_of_the_spec_and_no_note() -> None:
    """The factory and the availability check both see the spec; the factory gets a copy, so an agent
    that keeps (or changes) its spec cannot change the caller's."""
    seen: list[dict[str, Any]] = []

    def available(spec: dict[str, Any]) -> str | None:
        seen.append(spec)
        return None

    reg = AgentRegistry()
    reg.register(Role.JOB_AGENT, "heuristic", _factory("heuristic"), fallback=True)
    reg.register(Role.JOB_AGENT, "llm", _factory("llm"), available=available)
    spec = {"seed": 3}
    made = reg.create(Role.JOB_AGENT, "llm", spec)
    assert made == Instantiated(role=Role.JOB_AGENT, requested="llm", backend="llm", agent=made.agent, notes=[])
    assert made.agent.backend == "llm" and made.agent.spec == {"seed": 3} and made.agent.spec is not spec
    assert seen == [{"seed": 3}]


def test_a_role_given_by_its_name_and_no_spec_gets_an_empty_spec() -> None:
    made = _registry().create("job_agent", "heuristic")
    assert made.role is Role.JOB_AGENT and made.backend == "heuristic" and made.agent.spec == {}
    with pytest.raises(ValueError, match="'planner' is not a valid Role"):
        _registry().create("planner", "heuristic")


def test_an_unregistered_backend_falls_back_and_says_so() -> None:
    made = _registry().create(Role.JOB_AGENT, "cpsat", {"seed": 1})
    assert (made.requested, made.backend, made.agent.backend) == ("cpsat", "heuristic", "heuristic")
    assert made.agent.spec == {"seed": 1}
    assert made.notes == ["job_agent: no 'cpsat' backend registered; using 'heuristic'"]


def test_an_unregistered_backend_of_a_role_without_fallback_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(InputError) as caught:
        _registry(fallback=False).create(Role.JOB_AGENT, "cpsat")
    assert caught.value.message == "no 'cpsat' implementation of role job_agent (known: ['heuristic', 'llm'])"
    with pytest.raises(InputError) as caught:
        AgentRegistry().create(Role.REPAIRER, "lcrp")
    assert caught.value.message == "no 'lcrp' implementation of role repairer (known: [])"


def test_an_unavailable_backend_falls_back_with_its_reason() -> None:
    made = _registry(reason="no key").create(Role.JOB_AGENT, "llm", {"seed": 2})
    assert (made.requested, made.backend, made.agent.backend) == ("llm", "heuristic", "heuristic")
    assert made.agent.spec == {"seed": 2}
    assert made.notes == ["job_agent: 'llm' unavailable (no key); using 'heuristic'"]


def test_an_unavailable_backend_with_nothing_else_to_take_is_refused_with_its_reason() -> None:
    """No fallback at all, or the unavailable backend is itself the fallback: refused, never silently
    instantiated anyway."""
    with pytest.raises(InputError) as caught:
        _registry(fallback=False, reason="no key").create(Role.JOB_AGENT, "llm")
    assert caught.value.message == "job_agent backend 'llm' is unavailable: no key"
    reg = AgentRegistry()
    reg.register(Role.JOB_AGENT, "llm", _factory("llm"), available=lambda _spec: "no key", fallback=True)
    with pytest.raises(InputError) as caught:
        reg.create(Role.JOB_AGENT, "llm")
    assert caught.value.message == "job_agent backend 'llm' is unavailable: no key"


def test_only_a_fallback_registration_sets_the_fallback_and_the_last_one_wins() -> None:
    reg = _registry(reason="no key")
    reg.register(Role.JOB_AGENT, "cpsat", _factory("cpsat"))  # not a fallback: heuristic stays it
    assert reg.create(Role.JOB_AGENT, "llm").backend == "heuristic"
    reg.register(Role.JOB_AGENT, "cpsat", _factory("cpsat"), fallback=True)
    assert reg.create(Role.JOB_AGENT, "llm").backend == "cpsat"
    # Registering a backend again replaces its factory (and, without `available`, it is always available).
    reg.register(Role.JOB_AGENT, "llm", _factory("llm2"))
    made = reg.create(Role.JOB_AGENT, "llm")
    assert (made.backend, made.agent.backend, made.notes) == ("llm", "llm2", [])


# -- the built-in registry -----------------------------------------------------------------------------------

def test_the_built_in_registry_lists_every_shipped_backend() -> None:
    reg = default_registry()
    assert {role: reg.backends(role) for role in Role} == {
        Role.JOB_AGENT: ["cpsat", "heuristic", "llm", "simulated"],
        Role.SUPERVISOR: ["cpsat", "heuristic", "llm", "simulated"],
        Role.VALIDATOR: ["independent"],
        Role.REPAIRER: ["lcrp"],
        Role.OPTIMIZER: ["cpsat", "heuristic", "llm", "none"]}


@pytest.mark.parametrize(("role", "fallback"), [
    (Role.JOB_AGENT, "heuristic"), (Role.SUPERVISOR, "heuristic"), (Role.VALIDATOR, "independent"),
    (Role.REPAIRER, "lcrp"), (Role.OPTIMIZER, "heuristic")])
def test_every_built_in_role_has_its_fallback(role: Role, fallback: str) -> None:
    made = default_registry().create(role, "quantum")
    assert made.backend == fallback
    assert made.notes == [f"{role}: no 'quantum' backend registered; using {fallback!r}"]


def test_job_agents_heuristic_and_cpsat_are_the_exact_earliest_fit_planner() -> None:
    reg = default_registry()
    assert isinstance(reg.create(Role.JOB_AGENT, "heuristic").agent, HeuristicPlanner)
    assert isinstance(reg.create(Role.JOB_AGENT, "cpsat").agent, HeuristicPlanner)


@pytest.mark.parametrize(("backend", "mode"), [
    ("heuristic", MergeMode.PRIORITY), ("cpsat", MergeMode.PRIORITY),
    ("llm", MergeMode.UNION), ("simulated", MergeMode.UNION)])
def test_llm_proposals_are_merged_literally_and_the_exact_ones_by_priority(backend: str, mode: MergeMode) -> None:
    """An LLM's (or the simulator's) mistakes must reach the validator: their supervisor takes the union."""
    made = default_registry().create(Role.SUPERVISOR, backend)
    assert isinstance(made.agent, Supervisor) and made.agent.mode is mode and made.notes == []


def test_the_validator_is_the_independent_one() -> None:
    assert isinstance(default_registry().create(Role.VALIDATOR, "independent").agent, ValidatorRole)


def test_the_repairer_takes_every_knob_from_the_spec() -> None:
    spec = {"method": "full", "budget": 2.5, "seed": 7, "workers": 3, "effort": 0.5, "tolerance": 0.1,
            "deterministic": False}
    agent = default_registry().create(Role.REPAIRER, "lcrp", spec).agent
    assert isinstance(agent, RepairerRole)
    assert (agent.method, agent.budget, agent.seed, agent.workers, agent.effort, agent.tolerance,
            agent.deterministic) == ("full", 2.5, 7, 3, 0.5, 0.1, False)


def test_the_repairer_defaults_are_lcrp_with_ten_seconds_two_workers_and_determinism() -> None:
    agent = default_registry().create(Role.REPAIRER, "lcrp").agent
    assert isinstance(agent, RepairerRole)
    assert (agent.method, agent.budget, agent.seed, agent.workers, agent.effort, agent.tolerance,
            agent.deterministic) == ("lcrp", 10.0, 0, 2, 1.0, 0.0, True)


@pytest.mark.parametrize(("backend", "solver"), [("heuristic", "heuristic"), ("cpsat", "cpsat"), ("llm", "cpsat")])
def test_the_optimizer_backends_take_their_knobs_from_the_spec(backend: str, solver: str) -> None:
    """``llm`` asks for an optimizer too: CP-SAT improves the merged plan."""
    spec = {"time_limit": 1.5, "workers": 3, "seed": 7, "deterministic": False}
    agent = default_registry().create(Role.OPTIMIZER, backend, spec).agent
    assert isinstance(agent, OptimizerRole)
    assert (agent.backend, agent.time_limit, agent.workers, agent.seed, agent.deterministic) == (
        solver, 1.5, 3, 7, False)


@pytest.mark.parametrize(("backend", "solver"), [("heuristic", "heuristic"), ("cpsat", "cpsat"), ("llm", "cpsat")])
def test_the_optimizer_defaults_are_ten_seconds_two_workers_seed_0_and_determinism(backend: str,
                                                                                     solver: str) -> None:
    agent = default_registry().create(Role.OPTIMIZER, backend).agent
    assert isinstance(agent, OptimizerRole)
    assert (agent.backend, agent.time_limit, agent.workers, agent.seed, agent.deterministic) == (
        solver, 10.0, 2, 0, True)


def test_optimizer_none_passes_the_supervisors_plan_through_unchanged() -> None:
    agent = default_registry().create(Role.OPTIMIZER, "none").agent
    assert isinstance(agent, PassThroughOptimizer) and agent.name == "optimizer"
    instance = get_instance("ft06")
    plan = dispatch(instance)
    improved = agent.improve(instance, plan)
    assert improved == Improvement(schedule=plan, method="none", seconds=0.0, limits={})
    assert improved.schedule is plan


# -- the LLM backend: available with an endpoint or recorded answers -----------------------------------------

def test_the_llm_job_agent_without_endpoint_or_replay_falls_back_and_says_why() -> None:
    reg = default_registry()
    specs: list[dict[str, Any]] = [{}, {"settings": Settings(llm=LlmSettings(base_url=""))}, {"replay_events": []}]
    for spec in specs:
        made = reg.create(Role.JOB_AGENT, "llm", spec)
        assert made.backend == "heuristic" and isinstance(made.agent, HeuristicPlanner), spec
        assert made.notes == [f"job_agent: 'llm' unavailable ({NO_ENDPOINT}); using 'heuristic'"], spec


def _one_answer(job: int = 0) -> tuple[Any, Exchange]:
    """A job agent's context on ft06 and a recorded answer for it."""
    ctx = build_job_contexts(get_instance("ft06"))[job]
    return ctx, Exchange(role="job", job=ctx.job, attempt=ctx.attempt, model="recorded", messages=job_messages(ctx),
                         response='{"operations": []}', prompt_tokens=11, completion_tokens=5)


def test_an_llm_job_agent_with_an_endpoint_is_the_llm_planner_on_that_endpoint() -> None:
    settings = Settings(llm=LlmSettings(base_url="http://127.0.0.1:9/v1", model="m-1"))
    recorder = ExchangeRecorder()
    made = default_registry().create(Role.JOB_AGENT, "llm", {"settings": settings, "recorder": recorder})
    assert made.backend == "llm" and made.notes == []
    assert isinstance(made.agent, LlmPlanner) and made.agent.name == "llm"
    assert made.agent.settings == settings.llm and made.agent.recorder is recorder
    assert not isinstance(made.agent.transport, ReplayTransport)


def _capture_metrics(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    observed: list[dict[str, Any]] = []
    monkeypatch.setattr(metrics, "observe_llm_exchange", observed.append)
    return observed


def test_a_replayed_llm_job_agent_needs_no_endpoint_and_reports_each_exchange_to_metrics_and_the_caller(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded answers make the backend available without an endpoint; every exchange's usage goes to the
    Prometheus metrics and to the caller's ``on_usage``, the same dict to both."""
    observed = _capture_metrics(monkeypatch)
    extra: list[dict[str, Any]] = []
    ctx, answer = _one_answer()
    offline = Settings(llm=LlmSettings(base_url=None))
    made = default_registry().create(Role.JOB_AGENT, "llm", {"settings": offline, "replay_events": [answer],
                                                             "on_usage": extra.append})
    assert made.backend == "llm" and made.notes == [] and isinstance(made.agent, LlmPlanner)
    assert isinstance(made.agent.transport, ReplayTransport) and made.agent.transport.remaining() == 1
    made.agent.propose(ctx)
    assert len(observed) == 1 and extra == observed
    assert observed[0]["role"] == "job" and observed[0]["prompt_tokens"] == 11


def test_without_an_on_usage_of_its_own_the_llm_job_agent_still_feeds_the_metrics(
        monkeypatch: pytest.MonkeyPatch) -> None:
    observed = _capture_metrics(monkeypatch)
    ctx, answer = _one_answer()
    recorder = ExchangeRecorder()
    offline = Settings(llm=LlmSettings(base_url=None))
    agent = default_registry().create(Role.JOB_AGENT, "llm", {"settings": offline, "replay_events": [answer],
                                                              "recorder": recorder}).agent
    agent.propose(ctx)
    assert [u["completion_tokens"] for u in observed] == [5]
    assert [e.response for e in recorder.exchanges] == ['{"operations": []}']


# -- the simulated backend: the declared stand-in for an endpoint ---------------------------------------------

def test_the_simulated_job_agent_is_an_llm_planner_over_the_seeded_simulator(monkeypatch: pytest.MonkeyPatch) -> None:
    observed = _capture_metrics(monkeypatch)
    model = ErrorModel(entry_error_rate=0.0)
    recorder = ExchangeRecorder()
    made = default_registry().create(Role.JOB_AGENT, "simulated",
                                     {"error_model": model, "seed": "4", "recorder": recorder})
    agent = made.agent
    assert made.backend == "simulated" and made.notes == []
    assert isinstance(agent, LlmPlanner) and agent.name == "simulated" and agent.recorder is recorder
    assert isinstance(agent.transport, SimulatedTransport)
    assert agent.transport.model is model and agent.transport.seed == 4
    assert agent.settings == LlmSettings()  # no settings: the defaults
    ctx = build_job_contexts(get_instance("ft06"))[1]
    assert agent.propose(ctx).operations == HeuristicPlanner().propose(ctx).operations  # no mistakes: exact
    assert len(observed) == 1 and len(recorder.exchanges) == 1


def test_the_simulated_job_agent_defaults_to_the_stated_error_model_and_seed_0() -> None:
    settings = Settings(llm=LlmSettings(model="sim-2"))
    agent = default_registry().create(Role.JOB_AGENT, "simulated", {"settings": settings}).agent
    assert isinstance(agent, LlmPlanner) and isinstance(agent.transport, SimulatedTransport)
    assert agent.transport.model == ErrorModel() and agent.transport.seed == 0
    assert agent.settings == settings.llm


def test_a_recorded_simulated_session_replays_and_reports_usage_to_the_caller(
        monkeypatch: pytest.MonkeyPatch) -> None:
    observed = _capture_metrics(monkeypatch)
    extra: list[dict[str, Any]] = []
    ctx, answer = _one_answer(job=2)
    event = {"type": EventType.LLM_EXCHANGE, "seq": 1, "payload": answer.model_dump(mode="json")}
    agent = default_registry().create(Role.JOB_AGENT, "simulated",
                                      {"replay_events": [event], "on_usage": extra.append}).agent
    assert isinstance(agent, LlmPlanner) and agent.name == "simulated"
    assert isinstance(agent.transport, ReplayTransport) and agent.transport.remaining() == 1
    proposal = agent.propose(ctx)
    assert proposal.backend == "simulated" and agent.transport.remaining() == 0
    assert len(observed) == 1 and extra == observed and observed[0]["prompt_tokens"] == 11



def test_recorded_answers_without_settings_make_a_working_llm_job_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Recorded answers alone make the backend available (no endpoint to contact), so they alone must make a
    working agent: it used to raise KeyError('settings') for a spec the availability check had accepted."""
    observed = _capture_metrics(monkeypatch)
    ctx, answer = _one_answer()
    made = default_registry().create(Role.JOB_AGENT, "llm", {"replay_events": [answer]})
    assert made.backend == "llm" and made.notes == [] and isinstance(made.agent, LlmPlanner)
    assert made.agent.settings == LlmSettings() and isinstance(made.agent.transport, ReplayTransport)
    made.agent.propose(ctx)
    assert [u["prompt_tokens"] for u in observed] == [11]
