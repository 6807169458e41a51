"""The message gate's edges: a step the job does not have is rejected (even when every real step is there),
a message with none of the job's operations is rejected with that one reason, and an augmented message carries
the gate's clarifications both as the verdict's reasons and as ``gate:`` notes after the sender's own."""

from __future__ import annotations

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobContext, JobProposal, ProposedOperation
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm_parsing import review_operations
from alas_argo.agents.message_gate import GateAction, MessageGate
from alas_argo.jssp.catalog import get_instance


def _ctx() -> JobContext:
    """Job 0 of ft06: six steps on machines 2, 0, 1, 3, 5, 4, no release time, no busy window."""
    return build_job_contexts(get_instance("ft06"))[0]


def _good(ctx: JobContext) -> list[ProposedOperation]:
    return HeuristicPlanner().propose(ctx).operations


def _with(ops: list[ProposedOperation], notes: list[str] | None = None) -> JobProposal:
    return JobProposal(job=0, operations=ops, backend="t", notes=notes or [])


def _op(step: int, start: int = 30, job: int = 0) -> ProposedOperation:
    return ProposedOperation(job=job, step=step, machine=0, start=start, end=start + 1)


@pytest.mark.parametrize(("extra", "named"), [([6], [6]), ([-1], [-1]), ([9, -1, 9], [-1, 9])])
def test_a_step_the_job_does_not_have_is_rejected_even_with_every_real_step(extra: list[int],
                                                                            named: list[int]) -> None:
    # Step 6 is one past the last of job 0's six steps: the bound is strict. Without the reject, the message
    # would only be augmented (review_operations notes an unknown step) and delivered.
    ctx = _ctx()
    message = _with([*_good(ctx), *(_op(s) for s in extra)])
    gate = MessageGate()
    verdict = gate.check(ctx, message)
    assert verdict.action is GateAction.REJECT
    reasons = [f"step(s) {named} do not exist (job 0 has 6 steps)"]
    if len(extra) > len(named):
        reasons.append(f"step(s) {[9]} are given more than once: give every step exactly once")
    assert verdict.reasons == reasons
    assert verdict.proposal is message and message.notes == []
    assert gate.counts == {"deliver": 0, "augment": 0, "reject": 1}


def test_all_four_reasons_are_given_together_in_order() -> None:
    ctx = _ctx()
    good = _good(ctx)
    verdict = MessageGate().check(ctx, _with([good[0], good[0], good[2], _op(7)]))
    assert verdict.action is GateAction.REJECT
    assert verdict.reasons == ["step(s) [7] do not exist (job 0 has 6 steps)",
                               "step(s) [1, 3, 4, 5] are missing: give every step exactly once",
                               "step(s) [0] are given more than once: give every step exactly once"]


@pytest.mark.parametrize("ops", [[], [_op(s, job=1) for s in range(6)]], ids=["empty", "another job only"])
def test_a_message_with_no_operation_of_the_job_is_rejected_with_that_reason_alone(
        ops: list[ProposedOperation]) -> None:
    verdict = MessageGate().check(_ctx(), _with(ops))
    assert verdict.action is GateAction.REJECT
    assert verdict.reasons == ["the message holds no operation of this job"]


def test_an_augmented_message_carries_the_clarifications_as_reasons_and_as_gate_notes() -> None:
    ctx = _ctx()
    good = _good(ctx)
    wrong_machine = good[0].model_copy(update={"machine": 5})
    late = good[2].model_copy(update={"end": good[2].end + 2})
    ops = [wrong_machine, good[1], late, *good[3:]]
    clarifications = review_operations(ctx, ops)
    assert clarifications == ["step 0 on machine 5, but it must run on machine 2",
                              "step 2 lasts 8, but its duration is 6",
                              "step 3 starts at 10, before step 2 ends at 12"]
    message = _with(ops, notes=["parsed from a fenced block"])
    gate = MessageGate()
    verdict = gate.check(ctx, message)
    assert verdict.action is GateAction.AUGMENT
    assert verdict.reasons == clarifications
    assert verdict.proposal.notes == ["parsed from a fenced block", *(f"gate: {c}" for c in clarifications)]
    assert verdict.proposal.operations == ops
    assert message.notes == ["parsed from a fenced block"]  # the sender's message itself is not changed
    assert gate.counts == {"deliver": 0, "augment": 1, "reject": 0}


def test_a_clean_message_is_delivered_as_is_with_no_reasons() -> None:
    ctx = _ctx()
    message = _with(_good(ctx), notes=["n"])
    verdict = MessageGate().check(ctx, message)
    assert (verdict.action, verdict.proposal, verdict.reasons) == (GateAction.DELIVER, message, [])


def test_another_jobs_operation_is_dropped_before_delivery_not_merged() -> None:
    # Job 0's six good steps plus two operations of other jobs: outside job 0's bounded context. Delivered as
    # they were, the supervisor would merge them beside those jobs' own answers and the validator would blame
    # jobs 1 and 3 for duplicates they did not write; the review would also misread job 1's step 4 as job 0's.
    ctx = _ctx()
    good = _good(ctx)
    message = _with([*good, _op(4, job=1), _op(0, job=3)], notes=["mine"])
    gate = MessageGate()
    verdict = gate.check(ctx, message)
    reason = ("operation(s) (job 1, step 4), (job 3, step 0) of other jobs dropped: an agent proposes only for its "
              "own job 0")
    assert verdict.action is GateAction.AUGMENT
    assert verdict.reasons == [reason]
    assert verdict.proposal.operations == good
    assert verdict.proposal.notes == ["mine", f"gate: {reason}"]
    assert len(message.operations) == 8  # the sender's message itself is left as it was
    assert gate.counts == {"deliver": 0, "augment": 1, "reject": 0}
