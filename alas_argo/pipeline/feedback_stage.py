"""The merge node when the LLM is in charge (``--optimizer none`` with llm or simulated job agents).

The supervisor node runs the feedback session (:mod:`alas_argo.agents.feedback`): the job agents are asked in
job order, the merged draft is validated, and each agent gets its own violations back for up to
``feedback_rounds`` rounds. Every draft version is written to the log as a ``plan.proposed`` event carrying
its round (what ``alas run`` shows as the violations trace), with the validator's verdict on it as a
``validation.*`` event that ``alas log replay`` can re-check. What remains invalid after the last round goes
to the blueprint's revalidation loop, whose deterministic patch is the last resort (not under no_repair).
Under no_validator nothing is validated inside the run: the agents' first answers are the plan, and the round
0 record only counts what is wrong with it (measurement, not control).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from alas_argo.agents.feedback import FeedbackRound, feedback_rounds, first_proposals
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.registry import Role
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.verdict import ValidationReport
from alas_argo.log import Event, EventType
from alas_argo.pipeline.config import Variant
from alas_argo.runtime.context import NodeContext

if TYPE_CHECKING:
    from alas_argo.agents.contracts import JobContext
    from alas_argo.jssp.instance import Instance
    from alas_argo.log import ExecutionLog
    from alas_argo.pipeline.config import RunConfig


class Stages(Protocol):
    """What the session needs of :class:`alas_argo.pipeline.stages.Stages` (a protocol: that module calls this
    one, so importing it back would close a circle)."""

    config: RunConfig
    instance: Instance
    contexts: list[JobContext]
    log: ExecutionLog
    ref: Any

    def agent(self, role: Role) -> Any: ...

__all__ = ["feedback_trace", "run_feedback_session"]


def run_feedback_session(stages: Stages, ctx: NodeContext) -> dict[str, Any]:
    """Propose, validate, feed back (module doc); the output is the last draft, as the merge node's plan."""
    config = stages.config
    backend = stages.agent(Role.JOB_AGENT)
    checked = config.variant is not Variant.NO_VALIDATOR
    proposals, fallbacks = first_proposals(stages.instance, backend, stages.contexts, fallback=HeuristicPlanner())

    def on_round(r: FeedbackRound, plan: Schedule, report: ValidationReport) -> None:
        stages.log.record(EventType.PLAN_PROPOSED, node_id=ctx.node_id, attempt=ctx.attempt, payload={
            "role": "supervisor", "planner": config.planner, "feedback": r.to_json() | {"checked": checked},
            "fallbacks": fallbacks, "plan": plan.to_json()})
        if checked:
            stages.log.record(EventType.VALIDATION_PASSED if report.valid else EventType.VALIDATION_FAILED,
                              node_id=ctx.node_id, attempt=ctx.attempt, payload={
                                  "instance": stages.ref, "plan": plan.to_json(), "baseline": None,
                                  "disruption": None, "report": report.to_json(), "iteration": r.round})

    session = feedback_rounds(stages.instance, backend, stages.contexts, proposals,
                              rounds=config.feedback_rounds if checked else 0, fallbacks=fallbacks,
                              on_round=on_round)
    return {"plan": session.plan.to_json(), "makespan": session.plan.makespan, "feedback": session.trace,
            "fallbacks": fallbacks}


def feedback_trace(events: list[Event]) -> list[dict[str, Any]]:
    """The rounds of the last feedback session in ``events`` (empty when none ran)."""
    rounds: dict[int, dict[str, Any]] = {}
    for e in events:
        if e.type is EventType.PLAN_PROPOSED and isinstance(e.payload.get("feedback"), dict):
            r = e.payload["feedback"]
            if int(r.get("round", 0)) == 0:
                rounds = {}  # a retried merge node starts its session again
            rounds[int(r.get("round", 0))] = dict(r)
    return [rounds[k] for k in sorted(rounds)]
