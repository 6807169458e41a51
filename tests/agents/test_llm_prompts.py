"""The prompts: a job agent sees only its own job and the machine windows it needs."""

from __future__ import annotations

import json
from typing import Any

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, ProposedOperation
from alas_argo.agents.llm_prompts import CONTEXT_MARKER, context_document, job_messages, supervisor_messages
from alas_argo.jssp.instance import Instance


def context_in(messages: list[dict[str, str]]) -> dict[str, Any]:
    line = next(x for x in messages[-1]["content"].splitlines() if x.startswith(CONTEXT_MARKER))
    return dict(json.loads(line[len(CONTEXT_MARKER):]))


def test_job_prompt_holds_only_its_own_job(ft06: Instance) -> None:
    fixed = {(0, 0): (0, 1), (1, 0): (0, 8)}
    ctxs = build_job_contexts(ft06, release=5, fixed=fixed, downtimes=[(2, 10, 20)])
    for ctx in ctxs:
        messages = job_messages(ctx)
        assert [m["role"] for m in messages] == ["system", "user"]
        doc = context_in(messages)
        assert doc["job"] == ctx.job and doc["release"] == 5
        assert [(o["machine"], o["duration"]) for o in doc["operations"]] == [
            tuple(op) for op in ft06.jobs[ctx.job]]
        machines = {m for m, _ in ft06.jobs[ctx.job]}
        assert all(w["machine"] in machines for w in doc["busy"])
        # Another job's (machine, duration) sequence never appears: the context is bounded.
        assert doc == context_document(ctx)
    doc0 = context_in(job_messages(ctxs[0]))
    assert doc0["fixed"] == [{"step": 0, "start": 0, "end": 1}]
    assert {"machine": 2, "start": 10, "end": 20, "reason": "downtime"} in doc0["busy"]


def test_busy_windows_of_other_machines_are_left_out() -> None:
    ctx = JobContext(instance="x", job=0, operations=[(0, 2), (1, 3)], horizon=30,
                     busy=[BusyWindow(machine=5, start=0, end=9), BusyWindow(machine=1, start=4, end=6)])
    assert context_document(ctx)["busy"] == [{"machine": 1, "start": 4, "end": 6, "reason": "reserved"}]


def test_prompt_asks_for_strict_json_and_carries_feedback(tiny: Instance) -> None:
    ctx = build_job_contexts(tiny, feedback={1: ["step 2 overlaps job 0 on machine 1"]}, attempt=1)[1]
    system, user = (m["content"] for m in job_messages(ctx))
    assert '{"operations": [{"job": J, "step": S, "machine": M, "start": T, "end": E}' in system
    assert "JSON only" in system
    assert "attempt 0) was rejected" in user and "- step 2 overlaps job 0 on machine 1" in user
    first = job_messages(build_job_contexts(tiny)[1])[1]["content"]
    assert "rejected" not in first


def test_supervisor_prompt_carries_every_proposal() -> None:
    proposals = [JobProposal(job=j, backend="llm", operations=[
        ProposedOperation(job=j, step=0, machine=j, start=0, end=2)]) for j in (1, 0)]
    messages = supervisor_messages("tiny", proposals, fixed={0: {0: (0, 2)}})
    doc = context_in(messages)
    assert [p["job"] for p in doc["proposals"]] == [0, 1]
    assert doc["fixed"] == [{"job": 0, "step": 0, "start": 0, "end": 2}]
