"""The message gate: structurally unusable messages are rejected and re-asked once, visible problems are
attached as clarifications, clean messages pass; the session counts every verdict."""

from __future__ import annotations

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobContext, JobProposal, ProposedOperation
from alas_argo.agents.feedback import ask_agent, feedback_rounds, first_proposals
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.message_gate import GateAction, MessageGate
from alas_argo.agents.simulated import ErrorKind, ErrorModel, SimulatedTransport
from alas_argo.jssp.catalog import get_instance
from alas_argo.settings import LlmSettings


def _ctx() -> JobContext:
    return build_job_contexts(get_instance("ft06"))[0]


def _with(ops: list[ProposedOperation]) -> JobProposal:
    return JobProposal(job=0, operations=ops, backend="t")


def test_verdicts() -> None:
    ctx = _ctx()
    good = HeuristicPlanner().propose(ctx)
    gate = MessageGate()
    assert gate.check(ctx, good).action is GateAction.DELIVER
    dropped = gate.check(ctx, _with(good.operations[1:]))
    assert dropped.action is GateAction.REJECT and "step(s) [0] are missing" in dropped.reasons[0]
    twice = gate.check(ctx, _with([*good.operations, good.operations[2]]))
    assert twice.action is GateAction.REJECT and "more than once" in twice.reasons[0]
    late = good.operations[1].model_copy(update={"end": good.operations[1].end + 3})
    augmented = gate.check(ctx, _with([good.operations[0], late, *good.operations[2:]]))
    assert augmented.action is GateAction.AUGMENT and any(n.startswith("gate: step 1 lasts") for n in
                                                          augmented.proposal.notes)
    assert gate.counts == {"deliver": 1, "augment": 1, "reject": 2}


class _Scripted:
    name = "scripted"

    def __init__(self, answers: list[JobProposal]) -> None:
        self.answers = answers
        self.asked: list[JobContext] = []

    def propose(self, ctx: JobContext) -> JobProposal:
        self.asked.append(ctx)
        return self.answers.pop(0)


def test_a_rejected_message_is_asked_again_with_the_reasons() -> None:
    ctx = _ctx()
    good = HeuristicPlanner().propose(ctx)
    agent = _Scripted([_with(good.operations[:2]), good])
    proposal, reason = ask_agent(agent, ctx, gate=MessageGate())
    assert reason is None and proposal == good
    assert agent.asked[1].feedback[0].startswith("message rejected: step(s) [2, 3, 4, 5] are missing")
    twice = _Scripted([_with(good.operations[:2]), _with(good.operations[:3])])
    assert ask_agent(twice, ctx, gate=MessageGate())[0] is None


def test_delivered_messages_are_complete() -> None:
    """With the gate, a job is either absent (rejected twice) or has every step exactly once."""
    from alas_argo.jssp.validate import validate

    instance = get_instance("la01")
    model = ErrorModel(kind_weights={ErrorKind.MISSING: 1.0, ErrorKind.DUPLICATE: 1.0})
    contexts = build_job_contexts(instance)
    gate = MessageGate()
    planner = LlmPlanner(LlmSettings(), transport=SimulatedTransport(model, seed=0))
    proposals, failed = first_proposals(instance, planner, contexts, gate=gate)
    session = feedback_rounds(instance, planner, contexts, proposals, rounds=0, gate=gate)
    report = validate(instance, session.plan)
    incomplete = {v.scope["job"] for v in report.violations if str(v.code) in ("missing_operation",
                                                                                "duplicate_operation")}
    assert gate.counts["reject"] > 0 and failed == instance.num_jobs - len(proposals)
    assert incomplete == set(range(instance.num_jobs)) - set(proposals)
