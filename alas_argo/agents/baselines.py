"""The paper's baselines (§4.1.1), through the same client, recording and accounting as the job agents.

- **single agent**: one prompt holds the whole instance; the model's answer is the plan. No validator, no
  log, no repair.
- **planner / critic**: a lean two-agent conversation without an independent validator or log: a planner
  answers the whole instance, a critic (another model turn) reviews it, the planner revises after a
  critique, until the critic approves or ``turns`` revisions are spent. The critic judges by itself:
  whatever it misses stays in the plan.

Both are judged afterwards by the independent validator, like every variant. The temperature is the
endpoint's setting (``--llm-temperature``, 1.0 in the paper).

After a disruption (``state``, the plan in force seen from the reveal time) both re-plan the whole instance
in one prompt that also carries the started operations to copy, the reveal time, the machines' downtime and
the changed durations (:data:`REPLAN_RULES`); the critic reviews against the same document.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from alas_argo.agents.contracts import ProposedOperation
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ExchangeKey, LlmAuthError, LlmEndpointError, Message
from alas_argo.agents.llm_parsing import ParseError, extract_json
from alas_argo.agents.llm_prompts import CONTEXT_MARKER
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["REPLAN_RULES", "BaselineResult", "critic_messages", "instance_document", "planner_critic", "single_agent",
           "single_messages"]

SINGLE_SYSTEM_PROMPT = """\
You schedule a whole job-shop instance. Every job's operations run in step order; each operation runs on its
machine for exactly its duration (end = start + duration); a machine runs one operation at a time.
Minimise the makespan. Answer with JSON only, in exactly this shape:
{"operations": [{"job": J, "step": S, "machine": M, "start": T, "end": E}, ...]}
with one entry per operation of every job, all values integers."""

CRITIC_SYSTEM_PROMPT = """\
You review a job-shop schedule written by a planner. Check step order within every job, exact durations,
the machines, one operation at a time per machine, and that every operation appears exactly once.
Answer with JSON only: {"approved": true|false, "problems": [{"job": J, "problem": "..."}, ...]}"""


#: What a whole-instance prompt adds after a disruption (the job agents' prompt states the same rules).
REPLAN_RULES = """\
A disruption was revealed at time "release". Operations listed in "fixed" have already started: copy their
job, step, machine, start and end unchanged. Every other operation starts at or after "release" and must not
overlap any "downtime" window of its machine. The durations in "jobs" are the current ones."""


def instance_document(instance: Instance, state: ExecutionState | None = None) -> dict[str, Any]:
    """The whole instance as the single-agent and planner prompts carry it (after a disruption, with the
    started operations, the reveal time, the downtime and the current durations of ``state``)."""
    if state is None:
        return {"instance": instance.name, "task": "schedule",
                "jobs": [[{"machine": m, "duration": d} for m, d in ops] for ops in instance.jobs]}
    starts = state.baseline.starts()
    return {"instance": instance.name, "task": "replan",
            "jobs": [[{"machine": m, "duration": state.durations[(j, s)]} for s, (m, _) in enumerate(ops)]
                     for j, ops in enumerate(instance.jobs)],
            "release": state.time,
            "fixed": [{"job": j, "step": s, "machine": instance.machine(j, s), "start": starts[(j, s)],
                       "end": starts[(j, s)] + state.durations[(j, s)]} for j, s in sorted(state.frozen)],
            "downtime": [{"machine": m, "start": lo, "end": hi} for m, lo, hi in state.downtimes]}


def _ops_json(ops: list[ProposedOperation]) -> list[dict[str, int]]:
    return [o.model_dump() for o in ops]


def single_messages(instance: Instance, previous: list[ProposedOperation] | None = None,
                    critique: list[dict[str, Any]] | None = None,
                    state: ExecutionState | None = None) -> list[Message]:
    """The whole-instance prompt (with the previous answer and the critique on a planner's revision; after a
    disruption, with ``state``)."""
    doc = instance_document(instance, state)
    if previous is not None:
        doc |= {"previous": _ops_json(previous), "critique": critique or []}
    ask = f"Schedule instance {instance.name}." if state is None else \
        f"Re-plan instance {instance.name} after the disruption revealed at time {state.time}."
    lines = [ask, CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":"))]
    if previous is not None:
        lines.append("A reviewer rejected your previous schedule (see previous and critique): revise it.")
    lines.append('Reply with {"operations": [...]} only.')
    system = SINGLE_SYSTEM_PROMPT if state is None else SINGLE_SYSTEM_PROMPT + "\n" + REPLAN_RULES
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]


def critic_messages(instance: Instance, ops: list[ProposedOperation],
                    state: ExecutionState | None = None) -> list[Message]:
    """The critic's prompt: the instance (after a disruption, as the planner saw it) and the planner's schedule."""
    doc = instance_document(instance, state) | {"task": "review", "schedule": _ops_json(ops)}
    user = "\n".join([f"Review this schedule for instance {instance.name}.",
                      CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":")),
                      'Reply with {"approved": ..., "problems": [...]} only.'])
    system = CRITIC_SYSTEM_PROMPT if state is None else CRITIC_SYSTEM_PROMPT + "\n" + REPLAN_RULES
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass
class BaselineResult:
    """A baseline's final plan (possibly invalid, possibly empty) and how the conversation went."""

    plan: Schedule
    turns: int
    notes: list[str] = field(default_factory=list)


def _schedule(instance: Instance, ops: list[ProposedOperation]) -> Schedule:
    return Schedule.from_operations(instance.name, [Operation(**o.model_dump()) for o in ops if o.start >= 0
                                                    and o.end >= o.start])


def _ask(planner: LlmPlanner, messages: list[Message], key: ExchangeKey,
         notes: list[str]) -> list[ProposedOperation]:
    try:
        answer = planner.ask_operations(messages, key)
    except LlmAuthError:
        raise
    except LlmEndpointError as e:
        notes.append(f"{key.role} turn {key.attempt}: no answer: {e}")
        return []
    notes.extend(answer.notes)
    return answer.operations


def single_agent(instance: Instance, planner: LlmPlanner, *, state: ExecutionState | None = None) -> BaselineResult:
    """One prompt for the whole instance (after a disruption: re-plan it from ``state``); the answer is the plan."""
    notes: list[str] = []
    ops = _ask(planner, single_messages(instance, state=state), ExchangeKey(role="single", job=None, attempt=0), notes)
    return BaselineResult(plan=_schedule(instance, ops), turns=1, notes=notes)


def _critique(text: str) -> list[dict[str, Any]]:
    """The critic's problems; an answer that is not a review counts as approval (nothing to act on)."""
    try:
        doc, _ = extract_json(text)
    except ParseError:
        return []
    if not isinstance(doc, dict) or doc.get("approved") is True:
        return []
    problems = doc.get("problems")
    return [p for p in problems if isinstance(p, dict)] if isinstance(problems, list) else []


def planner_critic(instance: Instance, planner: LlmPlanner, *, turns: int = 5,
                   state: ExecutionState | None = None) -> BaselineResult:
    """Planner and critic take turns until the critic approves or ``turns`` revisions are spent (after a
    disruption, both work on the re-plan from ``state``)."""
    notes: list[str] = []
    ops = _ask(planner, single_messages(instance, state=state), ExchangeKey(role="planner", job=None, attempt=0), notes)
    used = 1
    for turn in range(1, turns + 1):
        try:
            review = planner.ask_text(critic_messages(instance, ops, state),
                                      ExchangeKey(role="critic", job=None, attempt=turn - 1))
        except LlmAuthError:
            raise
        except LlmEndpointError as e:
            notes.append(f"critic turn {turn - 1}: no answer: {e}")
            break
        problems = _critique(review)
        if not problems:
            break
        revised = _ask(planner, single_messages(instance, ops, problems, state),
                       ExchangeKey(role="planner", job=None, attempt=turn), notes)
        used += 1
        if revised:
            ops = revised
    return BaselineResult(plan=_schedule(instance, ops), turns=used, notes=notes)
