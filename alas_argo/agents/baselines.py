"""The paper's baselines (§4.1.1), through the same client, recording and accounting as the job agents.

- **single agent**: one prompt holds the whole instance; the model's answer is the plan. No validator, no
  log, no repair.
- **planner / critic**: a lean two-agent conversation without an independent validator or log: a planner
  answers the whole instance, a critic (another model turn) reviews it, the planner revises after a
  critique, until the critic approves or ``turns`` revisions are spent. The critic judges by itself:
  whatever it misses stays in the plan.

Both are judged afterwards by the independent validator, like every variant. The temperature is the
endpoint's setting (``--llm-temperature``, 1.0 in the paper).
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
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

__all__ = ["BaselineResult", "critic_messages", "instance_document", "planner_critic", "single_agent",
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


def instance_document(instance: Instance) -> dict[str, Any]:
    """The whole instance as the single-agent and planner prompts carry it."""
    return {"instance": instance.name, "task": "schedule",
            "jobs": [[{"machine": m, "duration": d} for m, d in ops] for ops in instance.jobs]}


def _ops_json(ops: list[ProposedOperation]) -> list[dict[str, int]]:
    return [o.model_dump() for o in ops]


def single_messages(instance: Instance, previous: list[ProposedOperation] | None = None,
                    critique: list[dict[str, Any]] | None = None) -> list[Message]:
    """The whole-instance prompt (with the previous answer and the critique on a planner's revision)."""
    doc = instance_document(instance)
    if previous is not None:
        doc |= {"previous": _ops_json(previous), "critique": critique or []}
    lines = [f"Schedule instance {instance.name}.", CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":"))]
    if previous is not None:
        lines.append("A reviewer rejected your previous schedule (see previous and critique): revise it.")
    lines.append('Reply with {"operations": [...]} only.')
    return [{"role": "system", "content": SINGLE_SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]


def critic_messages(instance: Instance, ops: list[ProposedOperation]) -> list[Message]:
    """The critic's prompt: the instance and the planner's schedule."""
    doc = instance_document(instance) | {"task": "review", "schedule": _ops_json(ops)}
    user = "\n".join([f"Review this schedule for instance {instance.name}.",
                      CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":")),
                      'Reply with {"approved": ..., "problems": [...]} only.'])
    return [{"role": "system", "content": CRITIC_SYSTEM_PROMPT}, {"role": "user", "content": user}]


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


def single_agent(instance: Instance, planner: LlmPlanner) -> BaselineResult:
    """One prompt for the whole instance; the answer is the plan."""
    notes: list[str] = []
    ops = _ask(planner, single_messages(instance), ExchangeKey(role="single", job=None, attempt=0), notes)
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


def planner_critic(instance: Instance, planner: LlmPlanner, *, turns: int = 5) -> BaselineResult:
    """Planner and critic take turns until the critic approves or ``turns`` revisions are spent."""
    notes: list[str] = []
    ops = _ask(planner, single_messages(instance), ExchangeKey(role="planner", job=None, attempt=0), notes)
    used = 1
    for turn in range(1, turns + 1):
        try:
            review = planner.ask_text(critic_messages(instance, ops),
                                      ExchangeKey(role="critic", job=None, attempt=turn - 1))
        except LlmAuthError:
            raise
        except LlmEndpointError as e:
            notes.append(f"critic turn {turn - 1}: no answer: {e}")
            break
        problems = _critique(review)
        if not problems:
            break
        revised = _ask(planner, single_messages(instance, ops, problems),
                       ExchangeKey(role="planner", job=None, attempt=turn), notes)
        used += 1
        if revised:
            ops = revised
    return BaselineResult(plan=_schedule(instance, ops), turns=used, notes=notes)
