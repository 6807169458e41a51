"""What one ALAS run is asked to do."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.bounds import MAX_FAULTS, MAX_FEEDBACK_ROUNDS, MAX_LOCAL_DISRUPTIONS, MAX_WAIT_SECONDS, MAX_WORKERS
from alas_argo.jssp.repair.tabu import DEFAULT_FIRST_EDIT, FirstEdit
from alas_argo.seeds import MAX_SEED

__all__ = ["Optimizer", "Planner", "RepairMethodName", "RunConfig", "Variant"]

#: The planner backends a run may name (a name outside them was run with the registry's fallback, under the
#: unknown name in the summary).
Planner = Literal["heuristic", "cpsat", "llm", "simulated"]
Optimizer = Literal["auto", "heuristic", "cpsat", "none"]
#: The values of alas_argo.jssp.repair.RepairMethod (a test pins the equality).
RepairMethodName = Literal["lcrp", "aor", "right-shift", "full", "full-stable"]


class Variant(StrEnum):
    """Pipeline variants of the ALAS paper's ablation."""

    FULL = "full"
    NO_REPAIR = "no_repair"  #: violations are detected but nothing repairs them
    NO_VALIDATOR = "no_validator"  #: plans are committed without independent validation


class RunConfig(BaseModel):
    """One run of the five-layer pipeline."""

    model_config = ConfigDict(frozen=True)

    instance: str = Field(description="Bundled instance name or instance file path.")
    planner: Planner = Field("cpsat", description="Planner backend: heuristic, cpsat, llm or simulated (a declared, "
                         "seeded stand-in for an LLM endpoint: alas_argo.agents.simulated).")
    optimizer: Optimizer = Field("auto", description="auto (the planner's default), heuristic, cpsat, or none: the "
                           "supervisor's merged plan is the plan (with llm / simulated job agents: the LLM in "
                           "charge, asked in job order and given the validator's feedback).")
    feedback_rounds: int = Field(5, ge=0, le=MAX_FEEDBACK_ROUNDS,
                                 description="K: rounds in which the validator's violations go "
                                 "back to the job agents responsible (LLM in charge only) before the patch.")
    disrupt: str | None = Field(None, description="breakdown, shock, mixed, or a disruption JSON file "
                                "(one disruption object or a list of them); None for no disruption.")
    disruptions: int = Field(1, ge=1, le=MAX_LOCAL_DISRUPTIONS,
                             description="How many disruptions a generated sequence holds.")
    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of every randomized choice.")
    time_limit: float = Field(10.0, gt=0, le=MAX_WAIT_SECONDS, description="Nominal seconds for the optimizer "
                              "(CP-SAT / LNS), at most a year; see "
                              "`deterministic`.")
    repair_method: RepairMethodName = Field("lcrp", description="Repair method after a disruption.")
    repair_budget: float = Field(5.0, gt=0, le=MAX_WAIT_SECONDS, description="Nominal seconds for each repair, at "
                                 "most a year; see `deterministic`.")
    repair_effort: float = Field(1.0, gt=0, le=100, description="LCRP's time-box multiplier (see alas repair).")
    repair_tolerance: float = Field(0.0, ge=0, le=0.1, description="Makespan LCRP may give up, as a share, for "
                                    "fewer moved operations (see alas repair --tolerance); 0: none.")
    repair_first_edit: FirstEdit = Field(DEFAULT_FIRST_EDIT, description="LCRP's first edit: tabu (the default, a "
                                         "compiled tabu search) or redispatch (CP-SAT alone).")
    workers: int = Field(2, ge=1, le=MAX_WORKERS, description="CP-SAT workers and parallel job agents.")
    max_revalidations: int = Field(3, ge=1, le=20, description="Loop guard of validate -> repair -> validate.")
    variant: Variant = Field(Variant.FULL, description="Ablation variant.")
    faults: int = Field(0, ge=0, le=MAX_FAULTS, description="Structural faults injected into the supervisor's plan "
                        "(ablation and demonstrations).")
    agent_timeout: float = Field(60.0, gt=0, le=MAX_WAIT_SECONDS, description="Seconds one job agent may take.")
    deterministic: bool = Field(True, description="Limit every CP-SAT solve (optimizer and repairs) by "
                                "deterministic time on one search worker, so that the same inputs give the same "
                                "plans (replay, resume); False: wall-clock limits on `workers` workers.")
