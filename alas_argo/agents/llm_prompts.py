"""The prompts of the LLM backend: one per job agent (bounded context) and one for the supervisor.

A job agent's prompt holds only what :class:`~alas_argo.agents.contracts.JobContext` gives it: its own
job's operations, the release time, the steps already started, and the busy windows of the machines its job
visits. Nothing about other jobs' operations reaches it, so the prompt stays small whatever the instance
size. The context travels as one JSON line after a fixed ``CONTEXT:`` marker, which keeps the prompt
machine-checkable (tests read it back) and the wording stable across runs (replays match).
"""

from __future__ import annotations

import json
from typing import Any

from alas_argo.agents.contracts import JobContext, JobProposal
from alas_argo.agents.llm_client import Message

__all__ = ["CONTEXT_MARKER", "JOB_SYSTEM_PROMPT", "SUPERVISOR_SYSTEM_PROMPT", "context_document",
           "job_messages", "supervisor_messages"]

#: The line prefix before the JSON context in every user prompt.
CONTEXT_MARKER = "CONTEXT:"

JOB_SYSTEM_PROMPT = """\
You are a job agent in a job-shop scheduler. You schedule the operations of ONE job.
Rules:
- Each operation runs on its given machine for exactly its given duration: end = start + duration.
- Operations of the job run in step order: a step starts at or after the previous step's end.
- No operation starts before the release time.
- Steps listed in "fixed" have already started: copy their start and end unchanged.
- An operation must not overlap any busy window of its machine ([start, end) intervals).
- Prefer the earliest feasible start for every step.
Answer with JSON only, no prose, in exactly this shape:
{"operations": [{"job": J, "step": S, "machine": M, "start": T, "end": E}, ...]}
with one entry per step of the job, all values integers."""

SUPERVISOR_SYSTEM_PROMPT = """\
You are the supervisor of a job-shop scheduler. Job agents proposed times for their own jobs without seeing
each other. Merge their proposals into one schedule: keep every job's step order and durations, keep fixed
(already started) operations unchanged, and delay operations so that no two overlap on a machine.
Answer with JSON only, no prose, in exactly this shape:
{"operations": [{"job": J, "step": S, "machine": M, "start": T, "end": E}, ...]}
with one entry per operation of every job, all values integers."""


def context_document(ctx: JobContext) -> dict[str, Any]:
    """The JSON context a job agent's prompt carries: its job only, and the machine windows it needs."""
    machines = {m for m, _ in ctx.operations}
    busy = sorted((w for w in ctx.busy if w.machine in machines or ctx.scope == "full"),
                  key=lambda w: (w.machine, w.start, w.end))
    return {
        "instance": ctx.instance,
        "job": ctx.job,
        "operations": [{"step": s, "machine": m, "duration": d} for s, (m, d) in enumerate(ctx.operations)],
        "release": ctx.release,
        "fixed": [{"step": s, "start": a, "end": b} for s, (a, b) in sorted(ctx.fixed.items())],
        "busy": [{"machine": w.machine, "start": w.start, "end": w.end, "reason": w.reason} for w in busy],
        "horizon": ctx.horizon,
    }


def job_messages(ctx: JobContext) -> list[Message]:
    """The chat messages that ask a job agent to schedule ``ctx.job`` (with feedback on a re-ask)."""
    lines = [f"Schedule job {ctx.job} of instance {ctx.instance}.",
             CONTEXT_MARKER + " " + json.dumps(context_document(ctx), separators=(",", ":"))]
    if ctx.feedback:
        lines.append(f"Your previous answer (attempt {ctx.attempt - 1}) was rejected:")
        lines.extend(f"- {message}" for message in ctx.feedback)
        lines.append("Fix these problems.")
    lines.append('Reply with {"operations": [...]} only.')
    return [{"role": "system", "content": JOB_SYSTEM_PROMPT}, {"role": "user", "content": "\n".join(lines)}]


def supervisor_messages(instance: str, proposals: list[JobProposal],
                        fixed: dict[int, dict[int, tuple[int, int]]] | None = None) -> list[Message]:
    """The chat messages that ask the supervisor to merge the job agents' proposals.

    Args:
        instance: Instance name.
        proposals: One proposal per job agent.
        fixed: Optional per job, the started steps as step -> (start, end).
    """
    doc = {
        "instance": instance,
        "proposals": [{"job": p.job, "operations": [o.model_dump() for o in p.operations]}
                      for p in sorted(proposals, key=lambda p: p.job)],
        "fixed": [{"job": j, "step": s, "start": a, "end": b}
                  for j, steps in sorted((fixed or {}).items()) for s, (a, b) in sorted(steps.items())],
    }
    user = "\n".join([f"Merge the job agents' proposals for instance {instance}.",
                      CONTEXT_MARKER + " " + json.dumps(doc, separators=(",", ":")),
                      'Reply with {"operations": [...]} only.'])
    return [{"role": "system", "content": SUPERVISOR_SYSTEM_PROMPT}, {"role": "user", "content": user}]
