"""Validating a job agent's message before it is delivered to the supervisor (SagaLLM §3-4).

The gate checks what can be checked from the sender's own bounded context — not the plan, which remains the
independent validator's business — and takes one of SagaLLM's three actions:

- **reject**: the message is structurally unusable for its job (no operation, a step the job does not have,
  a step missing or given twice). It is not delivered; the agent is asked again once with the reasons as
  feedback, and a second rejection counts as no answer;
- **augment**: the message is usable but the sender's own context shows problems (a wrong machine or
  duration, steps out of order, a busy window overlapped, a fixed step moved) or it holds operations of other
  jobs. It is delivered with those clarifications attached (``gate:`` notes) for the supervisor and the log,
  and without the other jobs' operations (as :func:`~alas_argo.agents.llm_parsing.parse_answer` drops them);
- **deliver**: nothing to say.

Every verdict is counted, so a benchmark can report how much the gate stopped before any plan was merged.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from enum import StrEnum

from alas_argo.agents.contracts import JobContext, JobProposal
from alas_argo.agents.llm_parsing import review_operations

__all__ = ["GateAction", "GateVerdict", "MessageGate"]


class GateAction(StrEnum):
    """What the gate does with a message."""

    DELIVER = "deliver"
    AUGMENT = "augment"
    REJECT = "reject"


@dataclass(frozen=True)
class GateVerdict:
    """The gate's decision on one message, with the reasons (feedback for a rejection)."""

    action: GateAction
    proposal: JobProposal
    reasons: list[str] = field(default_factory=list)


class MessageGate:
    """Checks job-agent messages before delivery and counts its verdicts (module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: dict[str, int] = dict.fromkeys((a.value for a in GateAction), 0)

    def check(self, ctx: JobContext, proposal: JobProposal) -> GateVerdict:
        """The verdict on ``proposal`` as an answer to ``ctx``."""
        steps = len(ctx.operations)
        seen = [o.step for o in proposal.operations if o.job == ctx.job]
        reasons: list[str] = []
        if not seen:
            reasons.append("the message holds no operation of this job")
        unknown = sorted({s for s in seen if not 0 <= s < steps})
        if unknown:
            reasons.append(f"step(s) {unknown} do not exist (job {ctx.job} has {steps} steps)")
        missing = [s for s in range(steps) if s not in seen]
        if seen and missing:
            reasons.append(f"step(s) {missing} are missing: give every step exactly once")
        twice = sorted({s for s in seen if seen.count(s) > 1})
        if twice:
            reasons.append(f"step(s) {twice} are given more than once: give every step exactly once")
        if reasons:
            return self._count(GateVerdict(GateAction.REJECT, proposal, reasons))
        own = [o for o in proposal.operations if o.job == ctx.job]
        foreign = sorted((o.job, o.step) for o in proposal.operations if o.job != ctx.job)
        # Another job's operation is outside the sender's bounded context: delivered, the supervisor would merge
        # it beside that job's own agent's answer, and the validator would blame that job for the duplicate.
        clarifications = [f"operation(s) {', '.join(f'(job {j}, step {s})' for j, s in foreign)} of other jobs "
                          f"dropped: an agent proposes only for its own job {ctx.job}"] if foreign else []
        clarifications += review_operations(ctx, own)
        if not clarifications:
            return self._count(GateVerdict(GateAction.DELIVER, proposal))
        augmented = proposal.model_copy(update={"operations": own,
                                                "notes": [*proposal.notes, *(f"gate: {c}" for c in clarifications)]})
        return self._count(GateVerdict(GateAction.AUGMENT, augmented, clarifications))

    def _count(self, verdict: GateVerdict) -> GateVerdict:
        with self._lock:
            self.counts[verdict.action.value] += 1
        return verdict
