"""The custom resources the operator reconciles: PlanRun and Disruption (group ``alas.dev``).

The specs are validated twice on purpose: by the CRD's OpenAPI schema in the API server (``operators/crds``,
so ``kubectl apply`` rejects garbage early) and by the pydantic models here (so the reconciler never trusts
what it reads, e.g. after a CRD was edited by hand). The field names are the CRD's (camelCase).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from alas_argo.errors import InputError, first_error
from alas_argo.jssp.catalog import get_instance, suite
from alas_argo.jssp.disruption import DisruptionEvent
from alas_argo.repeats import repeated
from alas_argo.seeds import MAX_SEED

__all__ = [
    "API_VERSION",
    "DISRUPTION_PLURAL",
    "GROUP",
    "PLANRUN_PLURAL",
    "VERSION",
    "DisruptionSpec",
    "Phase",
    "PlanRunSpec",
    "Planner",
    "Resource",
    "parse_spec",
]

GROUP = "alas.dev"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
PLANRUN_PLURAL = "planruns"
DISRUPTION_PLURAL = "disruptions"


#: A PlanRun's disruption scenario: what the workflows' first step takes (none plans only).
Scenario = Literal["none", "breakdown", "shock", "mixed"]


class Phase(StrEnum):
    """The ``.status.phase`` of both resources."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    INVALID = "Invalid"

    @property
    def terminal(self) -> bool:
        """Whether nothing more will happen for this generation of the spec."""
        return self in (Phase.SUCCEEDED, Phase.FAILED, Phase.INVALID)


class Planner(StrEnum):
    """Planner backends a PlanRun may ask for (mirrors the agent registry's names)."""

    HEURISTIC = "heuristic"
    CPSAT = "cpsat"
    LLM = "llm"


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class PlanRunSpec(_Spec):
    """What to plan: one instance (the plan workflow) or a suite (the benchmark fan-out)."""

    instance: str | None = Field(None, min_length=1, max_length=63, description="A bundled instance name.")
    suite: str | None = Field(None, min_length=1, max_length=63, description="A suite name (fan-out).")
    planner: Planner = Field(Planner.CPSAT, description="Planner backend.")
    # The kinds a workflow's first step takes (none plans only); anything else used to pass here and fail
    # the workflow's pods (the PlanRun's own description even named "duration", which no step knows).
    scenarios: list[Scenario] = Field(
        default_factory=lambda: list[Scenario](["none"]), min_length=1, max_length=16,
        description="Disruption scenarios to run, each once: none (plan only), breakdown, shock, mixed.")
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1, max_length=64,
                             description="Random seeds, each once; one case per (instance, scenario, seed).")
    time_limit: float = Field(10.0, gt=0, le=3600, alias="timeLimit", description="Seconds per solve.")
    parallelism: int = Field(4, ge=1, le=256, description="Pods running at once in the fan-out.")

    @model_validator(mode="after")
    def _one_target(self) -> PlanRunSpec:
        if (self.instance is None) == (self.suite is None):
            raise ValueError("give exactly one of instance or suite")
        if any(not 0 <= s <= MAX_SEED for s in self.seeds):
            raise ValueError(f"seeds must be integers from 0 to {MAX_SEED}")
        # The CRD's list-type set makes the API server refuse these; a resource it did not check is Invalid
        # here rather than a workflow whose first step refuses the repeat (or, before, ran it twice).
        for name, items in (("scenarios", self.scenarios), ("seeds", self.seeds)):
            twice = repeated(items)
            if twice:
                raise ValueError(f"{name} lists {', '.join(twice)} more than once")
        # Names the schema cannot list: an unknown one used to create a workflow whose pods all failed; now
        # the PlanRun is Invalid at once, naming it (the operator's image holds the same catalog as the pods').
        try:
            if self.instance is not None:
                get_instance(self.instance)
            else:
                suite(str(self.suite))
        except InputError as e:
            raise ValueError(str(e)) from None
        return self

    @property
    def fan_out(self) -> bool:
        """Whether this run is a benchmark fan-out over a suite."""
        return self.suite is not None


class DisruptionSpec(_Spec):
    """Events revealed at ``time`` for a run, named directly (``run``) or through the PlanRun that started
    it (``planRun``, resolved from its ``.status.runId``); the controller repairs the run's current plan."""

    run: str | None = Field(None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                            description="Run id in the execution log.")
    plan_run: str | None = Field(None, alias="planRun", min_length=1, max_length=253,
                                 description="Name of a PlanRun in the same namespace.")
    time: int = Field(ge=0, description="Reveal time of the events.")
    events: list[DisruptionEvent] = Field(min_length=1, max_length=1000, description="What happened.")
    # The names of alas_argo.jssp.repair.RepairMethod (a test pins the equality; not imported here so the
    # operator does not load the solver stack).
    method: Literal["lcrp", "aor", "right-shift", "full", "full-stable"] = Field(
        "lcrp", description="Repair method.")

    @model_validator(mode="after")
    def _one_target(self) -> DisruptionSpec:
        if (self.run is None) == (self.plan_run is None):
            raise ValueError("give exactly one of run or planRun")
        return self

    def body(self) -> dict[str, Any]:
        """The JSON body of the controller's ``POST /runs/<run>/disruptions``."""
        return {"time": self.time, "events": [e.model_dump(mode="json") for e in self.events],
                "method": self.method}


S = TypeVar("S", bound=_Spec)


class Resource(BaseModel):
    """The parts of any custom object the reconciler reads (metadata, spec, status)."""

    model_config = ConfigDict(frozen=True)

    name: str
    namespace: str
    uid: str
    generation: int = 1
    spec: dict[str, Any] = Field(default_factory=dict)
    status: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_object(cls, obj: dict[str, Any]) -> Resource:
        """Read a custom object as returned by the Kubernetes API."""
        meta = obj.get("metadata") or {}
        return cls(name=meta.get("name", ""), namespace=meta.get("namespace", "default"),
                   uid=meta.get("uid", ""), generation=int(meta.get("generation") or 1),
                   spec=dict(obj.get("spec") or {}), status=dict(obj.get("status") or {}))


def parse_spec(model: type[S], resource: Resource, kind: str) -> S:
    """Validate ``resource.spec`` as ``model``.

    Raises:
        InputError: naming the resource and the first offending field.
    """
    try:
        return model.model_validate(resource.spec)
    except ValidationError as e:
        field, msg = first_error(e)
        # A rule over the whole spec has no field (it used to read "invalid spec.spec: ...").
        raise InputError(f"invalid {f'spec.{field}' if field else 'spec'}: {msg}",
                         where=f"{kind} {resource.namespace}/{resource.name}") from None
