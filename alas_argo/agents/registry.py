"""The agent factory: instantiate each role from its spec through a registry of implementations.

Discovery first, the fallback second: a role asks for a backend by capability (``heuristic``, ``cpsat``,
``llm``); when that backend is registered and available (an LLM needs a configured endpoint or recorded
answers) it is used, otherwise the role's fallback implementation is, and the substitution is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from alas_argo.agents.contracts import PlannerBackend
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.errors import InputError

__all__ = ["AgentRegistry", "Instantiated", "PassThroughOptimizer", "Role", "default_registry"]


class Role(StrEnum):
    """Agent roles of the ALAS pipeline."""

    JOB_AGENT = "job_agent"
    SUPERVISOR = "supervisor"
    VALIDATOR = "validator"
    REPAIRER = "repairer"
    OPTIMIZER = "optimizer"


Factory = Callable[[dict[str, Any]], Any]
Availability = Callable[[dict[str, Any]], str | None]  # None when available, else the reason it is not


@dataclass
class _Entry:
    factory: Factory
    available: Availability


@dataclass(frozen=True)
class Instantiated:
    """An agent and how it was found."""

    role: Role
    requested: str
    backend: str
    agent: Any
    notes: list[str] = field(default_factory=list)


class AgentRegistry:
    """Role -> backend -> factory, with a fallback backend per role."""

    def __init__(self) -> None:
        self._entries: dict[Role, dict[str, _Entry]] = {}
        self._fallback: dict[Role, str] = {}

    def register(self, role: Role, backend: str, factory: Factory, *, available: Availability | None = None,
                 fallback: bool = False) -> None:
        """Register ``factory`` for (role, backend); ``fallback`` makes it the role's default."""
        self._entries.setdefault(role, {})[backend] = _Entry(factory, available or (lambda _spec: None))
        if fallback:
            self._fallback[role] = backend

    def backends(self, role: Role) -> list[str]:
        """Registered backends of a role."""
        return sorted(self._entries.get(role, {}))

    def create(self, role: Role | str, backend: str, spec: dict[str, Any] | None = None) -> Instantiated:
        """Instantiate ``role`` with ``backend``, or with the role's fallback when it is unavailable."""
        role = Role(role)
        spec = dict(spec or {})
        entries = self._entries.get(role, {})
        notes: list[str] = []
        chosen = backend
        if backend not in entries:
            if role not in self._fallback:
                raise InputError(f"no {backend!r} implementation of role {role} (known: {self.backends(role)})")
            notes.append(f"{role}: no {backend!r} backend registered; using {self._fallback[role]!r}")
            chosen = self._fallback[role]
        else:
            reason = entries[backend].available(spec)
            if reason is not None:
                if role not in self._fallback or self._fallback[role] == backend:
                    raise InputError(f"{role} backend {backend!r} is unavailable: {reason}")
                notes.append(f"{role}: {backend!r} unavailable ({reason}); using {self._fallback[role]!r}")
                chosen = self._fallback[role]
        return Instantiated(role=role, requested=backend, backend=chosen,
                            agent=entries[chosen].factory(spec), notes=notes)


def _llm_available(spec: dict[str, Any]) -> str | None:
    settings = spec.get("settings")
    if spec.get("replay_events"):
        return None
    if settings is None or not getattr(settings.llm, "base_url", None):
        return "no endpoint configured (set OPENAI_BASE_URL or --llm-base-url, or use --llm-replay RUN)"
    return None


def _llm_factory(spec: dict[str, Any]) -> PlannerBackend:
    from alas_argo import metrics
    from alas_argo.agents.llm import make_llm_backend  # only when the LLM backend is asked for
    from alas_argo.settings import LlmSettings

    extra = spec.get("on_usage")

    def on_usage(usage: dict[str, Any]) -> None:
        metrics.observe_llm_exchange(usage)  # tokens, calls, latency and failures as Prometheus metrics
        if extra is not None:
            extra(usage)

    # Recorded answers alone make the backend available (_llm_available): no settings then, nothing to contact.
    settings = spec.get("settings")
    backend: PlannerBackend = make_llm_backend(settings if settings is not None else LlmSettings(),
                                               replay_events=spec.get("replay_events"),
                                               recorder=spec.get("recorder"), on_usage=on_usage)
    return backend


def _simulated_factory(spec: dict[str, Any]) -> PlannerBackend:
    from alas_argo import metrics
    from alas_argo.agents.llm import LlmPlanner
    from alas_argo.agents.llm_recording import ReplayTransport, exchanges_from_events
    from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
    from alas_argo.settings import LlmSettings

    extra = spec.get("on_usage")

    def on_usage(usage: dict[str, Any]) -> None:
        metrics.observe_llm_exchange(usage)
        if extra is not None:
            extra(usage)

    transport: Any = SimulatedTransport(spec.get("error_model") or ErrorModel(), seed=int(spec.get("seed", 0)))
    if spec.get("replay_events"):  # a recorded simulated session replays like a recorded endpoint
        transport = ReplayTransport(exchanges_from_events(spec["replay_events"]))
    settings = spec.get("settings")
    llm = settings.llm if settings is not None else LlmSettings()
    planner = LlmPlanner(llm, transport=transport, recorder=spec.get("recorder"), on_usage=on_usage)
    planner.name = "simulated"
    return planner


class PassThroughOptimizer:
    """``--optimizer none``: the supervisor's plan is the plan (the LLM-only setting of the paper)."""

    name = "optimizer"

    def improve(self, instance: Any, schedule: Any) -> Any:
        """The plan unchanged."""
        from alas_argo.agents.roles import Improvement

        return Improvement(schedule=schedule, method="none", seconds=0.0, limits={})


def default_registry() -> AgentRegistry:
    """The registry with every implementation this package ships."""
    from alas_argo.agents.roles import OptimizerRole, RepairerRole, ValidatorRole
    from alas_argo.agents.supervisor import MergeMode, Supervisor
    from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT

    reg = AgentRegistry()
    # Job agents: the heuristic earliest-fit chain is exact for one job, so the cpsat capability maps to it
    # too; CP-SAT earns its keep in the optimizer role, over the whole plan.
    reg.register(Role.JOB_AGENT, "heuristic", lambda _s: HeuristicPlanner(), fallback=True)
    reg.register(Role.JOB_AGENT, "cpsat", lambda _s: HeuristicPlanner())
    reg.register(Role.JOB_AGENT, "llm", _llm_factory, available=_llm_available)
    # A declared stand-in for an endpoint (agents.simulated): same parsing, recording and accounting.
    reg.register(Role.JOB_AGENT, "simulated", _simulated_factory)
    reg.register(Role.SUPERVISOR, "heuristic", lambda _s: Supervisor(MergeMode.PRIORITY), fallback=True)
    reg.register(Role.SUPERVISOR, "cpsat", lambda _s: Supervisor(MergeMode.PRIORITY))
    # LLM proposals are merged literally: their mistakes must reach the validator, not be smoothed over.
    reg.register(Role.SUPERVISOR, "llm", lambda _s: Supervisor(MergeMode.UNION))
    reg.register(Role.SUPERVISOR, "simulated", lambda _s: Supervisor(MergeMode.UNION))
    reg.register(Role.VALIDATOR, "independent", lambda _s: ValidatorRole(), fallback=True)
    reg.register(Role.REPAIRER, "lcrp", lambda s: RepairerRole(
        s.get("method", "lcrp"), budget=s.get("budget", 10.0), seed=s.get("seed", 0), workers=s.get("workers", 2),
        effort=s.get("effort", 1.0), tolerance=s.get("tolerance", 0.0), deterministic=s.get("deterministic", True),
        first_edit=s.get("first_edit", DEFAULT_FIRST_EDIT)),
        fallback=True)
    reg.register(Role.OPTIMIZER, "heuristic", lambda s: OptimizerRole(
        "heuristic", time_limit=s.get("time_limit", 10.0), workers=s.get("workers", 2), seed=s.get("seed", 0),
        deterministic=s.get("deterministic", True)), fallback=True)
    reg.register(Role.OPTIMIZER, "cpsat", lambda s: OptimizerRole(
        "cpsat", time_limit=s.get("time_limit", 10.0), workers=s.get("workers", 2), seed=s.get("seed", 0),
        deterministic=s.get("deterministic", True)))
    reg.register(Role.OPTIMIZER, "llm", lambda s: OptimizerRole(
        "cpsat", time_limit=s.get("time_limit", 10.0), workers=s.get("workers", 2), seed=s.get("seed", 0),
        deterministic=s.get("deterministic", True)))
    reg.register(Role.OPTIMIZER, "none", lambda _s: PassThroughOptimizer())
    return reg
