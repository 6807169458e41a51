"""The agent roles (job agents with bounded contexts, supervisor, validator, repairer, optimizer), the planner
backends (heuristic; CP-SAT through the optimizer; an OpenAI-compatible LLM) and the agent factory.

The LLM backend (:mod:`alas_argo.agents.llm`) is imported only when it is asked for.
"""

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, PlannerBackend, ProposedOperation
from alas_argo.agents.heuristic import HeuristicPlanner, earliest_fit
from alas_argo.agents.registry import AgentRegistry, Instantiated, Role, default_registry
from alas_argo.agents.roles import OptimizerBackend, OptimizerRole, RepairerRole, ValidatorRole
from alas_argo.agents.supervisor import MergeMode, Supervisor, priority_decode

__all__ = [
    "AgentRegistry",
    "BusyWindow",
    "HeuristicPlanner",
    "Instantiated",
    "JobContext",
    "JobProposal",
    "MergeMode",
    "OptimizerBackend",
    "OptimizerRole",
    "PlannerBackend",
    "ProposedOperation",
    "RepairerRole",
    "Role",
    "Supervisor",
    "ValidatorRole",
    "build_job_contexts",
    "default_registry",
    "earliest_fit",
    "priority_decode",
]
