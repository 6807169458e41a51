"""Edges of the validator-feedback session: what each agent is told and given (its own violations, and at the
minimal scope only the windows of the jobs they name), why an ask gave nothing, fallbacks, failed re-asks that
keep the previous entries, every round's record and its validation against the disruption, and the patch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.context_scope import ContextCache, ContextScope
from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, ProposedOperation
from alas_argo.agents.feedback import (
    FeedbackRound,
    ask_agent,
    feedback_rounds,
    first_proposals,
    patch_plan,
    violations_by_job,
)
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm_client import LlmAuthError, LlmUnavailable
from alas_argo.agents.message_gate import MessageGate
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import validate
from alas_argo.jssp.verdict import ValidationReport

#: Jobs 0 and 1 both start on machine 0 (an agent alone puts both at 0: job 1 overlaps job 0); job 2 alone on
#: machine 2, which job 1 visits after machine 0.
TRIO = Instance(name="trio", jobs=[[(0, 2), (1, 2)], [(0, 3), (2, 2)], [(2, 1)]])

Answer = Callable[[JobContext], JobProposal]


def _alone(ctx: JobContext) -> JobProposal:
    """The earliest chain of the job as if no other job held a machine (what an agent that ignores the busy
    windows proposes)."""
    return HeuristicPlanner().propose(ctx.model_copy(update={"busy": []}))


def _proposal(job: int, ops: list[tuple[int, int, int, int]], notes: list[str] | None = None) -> JobProposal:
    """A proposal of ``job`` from (step, machine, start, end) tuples."""
    return JobProposal(job=job, backend="scripted", notes=notes or [], operations=[
        ProposedOperation(job=job, step=s, machine=m, start=a, end=b) for s, m, a, b in ops])


class Agents:
    """Job agents that answer round 0 from ``first`` (default: alone), later rounds from ``later`` (default: the
    exact heuristic over the context given), and record every context they are given."""

    name = "scripted"

    def __init__(self, first: dict[int, Answer] | None = None, later: dict[int, Answer] | None = None) -> None:
        self.first = first or {}
        self.later = later or {}
        self.seen: list[JobContext] = []

    def propose(self, ctx: JobContext) -> JobProposal:
        self.seen.append(ctx)
        answers = self.first if ctx.attempt == 0 else self.later
        return answers.get(ctx.job, _alone if ctx.attempt == 0 else HeuristicPlanner().propose)(ctx)

    def asked(self, attempt: int) -> dict[int, JobContext]:
        return {c.job: c for c in self.seen if c.attempt == attempt}


def _down(text: str) -> Answer:
    def answer(ctx: JobContext) -> JobProposal:
        raise LlmUnavailable(text)
    return answer


def _wrong_duration(ctx: JobContext) -> JobProposal:
    """Job 2's one step lasting 2 instead of 1, after job 1 is done with machine 2."""
    return _proposal(ctx.job, [(0, 2, 5, 7)])


def test_at_the_minimal_scope_an_agent_is_given_the_windows_of_the_jobs_its_violations_name() -> None:
    """Round 0: job 1 starts on machine 0 while job 0 runs (the overlap names job 0), job 2 lasts too long (a
    violation naming no other job). Round 1 at the minimal scope: job 1 sees job 0's window on machine 0 and
    nothing else, job 2 sees no window; both answers fit and the draft is valid."""
    contexts = build_job_contexts(TRIO)
    agents = Agents(first={2: _wrong_duration})
    cache = ContextCache(ContextScope.MINIMAL)
    proposals, _ = first_proposals(TRIO, agents, contexts, cache=cache)
    assert all(c.busy == [] for c in agents.seen)  # round 0 at the minimal scope: no violation, no window
    session = feedback_rounds(TRIO, agents, contexts, proposals, rounds=3, cache=cache)
    assert session.rounds[0].by_code == {"machine_overlap": 1, "wrong_duration": 1}
    assert session.rounds[1].jobs_asked == [1, 2]
    again = agents.asked(1)
    assert again[1].busy == [BusyWindow(machine=0, start=0, end=2)] and again[1].scope == "minimal"
    assert again[2].busy == []
    assert session.trace == [2, 0] and session.valid
    assert session.plan.starts() == {(0, 0): 0, (0, 1): 2, (1, 0): 2, (1, 1): 5, (2, 0): 0}


def test_each_agent_is_told_its_own_violations_and_nothing_else() -> None:
    contexts = build_job_contexts(TRIO)
    agents = Agents(first={2: _wrong_duration})
    proposals, _ = first_proposals(TRIO, agents, contexts)
    drafts: list[ValidationReport] = []
    feedback_rounds(TRIO, agents, contexts, proposals, rounds=1,
                    on_round=lambda r, plan, report: drafts.append(report))
    told = {j: c.feedback for j, c in agents.asked(1).items()}
    assert told == {1: ["plan draft v0: operation (job 1, step 0) starts at 0 on machine 0 while (job 0, step 0) "
                        "runs until 2"],
                    2: ["plan draft v0: operation (job 2, step 0) lasts 2 but its duration is 1"]}
    assert violations_by_job(TRIO, drafts[0]) == {j: [m.removeprefix("plan draft v0: ") for m in ms]
                                                  for j, ms in told.items()}


def test_a_violation_naming_a_job_the_instance_lacks_goes_to_no_agent() -> None:
    """An agent's entry for job 3 of a 3-job instance is the validator's ``unknown_operation`` of job 3: no
    agent owns it (there is none for job 3), and the session ends instead of failing on the lookup: with no
    agent to tell, another round would merge and validate the same draft again."""
    contexts = build_job_contexts(TRIO)
    stray = _proposal(1, [(0, 0, 2, 5), (1, 2, 5, 7)])
    stray.operations.append(ProposedOperation(job=3, step=0, machine=0, start=20, end=21))
    agents = Agents(first={1: lambda ctx: stray, 2: lambda ctx: _proposal(2, [(0, 2, 0, 1)])})
    proposals, _ = first_proposals(TRIO, agents, contexts)
    session = feedback_rounds(TRIO, agents, contexts, proposals, rounds=3)
    report = validate(TRIO, session.plan)
    assert [(str(v.code), v.scope["job"]) for v in report.violations] == [("unknown_operation", 3)]
    assert violations_by_job(TRIO, report) == {}
    assert session.trace == [1] and [r.round for r in session.rounds] == [0]


def test_why_an_ask_gave_nothing() -> None:
    ctx = build_job_contexts(TRIO)[0]
    empty = Agents(first={0: lambda c: _proposal(0, [], notes=["no JSON", "no operations", "cut off", "fourth"])})
    assert ask_agent(empty, ctx) == (None, "unusable answer: no JSON; no operations; cut off")
    down = Agents(first={0: _down("endpoint down")})
    assert ask_agent(down, ctx) == (None, "no answer: endpoint down")
    answer, reason = ask_agent(down, ctx, fallback=HeuristicPlanner())
    assert reason == "no answer: endpoint down" and answer is not None
    assert answer.operations == HeuristicPlanner().propose(ctx).operations
    assert answer.notes == ["fallback for job 0: no answer: endpoint down"]

    def refused(c: JobContext) -> JobProposal:
        raise LlmAuthError("401 from the endpoint")
    with pytest.raises(LlmAuthError):  # a wrong key is not hidden behind a fallback for every job
        ask_agent(Agents(first={0: refused}), ctx, fallback=HeuristicPlanner())


def test_a_message_rejected_twice_says_why_the_second_time() -> None:
    ctx = build_job_contexts(TRIO)[0]
    twice = _proposal(0, [(0, 0, 0, 2), (0, 0, 0, 2)])  # step 1 missing and step 0 given twice: two reasons
    gate = MessageGate()
    reasons = gate.check(ctx, twice).reasons
    assert len(reasons) == 2
    agents = Agents(first={0: lambda c: twice})
    assert ask_agent(agents, ctx, gate=MessageGate()) == (None, "message rejected twice: " + "; ".join(reasons))
    assert agents.seen[1].feedback == [f"message rejected: {r}" for r in reasons]
    answer, reason = ask_agent(agents, ctx, fallback=HeuristicPlanner(), gate=MessageGate())
    assert answer is not None and answer.notes == [f"fallback for job 0: {reason}"]


def test_round_zero_falls_back_per_job_and_counts_it() -> None:
    contexts = build_job_contexts(TRIO)
    agents = Agents(first={1: _down("timed out")})
    proposals, fallbacks = first_proposals(TRIO, agents, contexts, fallback=HeuristicPlanner())
    assert fallbacks == 1 and sorted(proposals) == [0, 1, 2]
    assert proposals[1].notes == ["fallback for job 1: no answer: timed out"]
    # The fallback answered job 1's own context, with job 0's windows on machine 0.
    assert proposals[1].operations == HeuristicPlanner().propose(agents.asked(0)[1]).operations
    alone, fallbacks = first_proposals(TRIO, Agents(first={1: _down("timed out")}), contexts)
    assert fallbacks == 1 and sorted(alone) == [0, 2]


def test_a_new_proposal_invalidates_the_contexts_built_over_the_old_one() -> None:
    """The cache outlives one round 0: when job 0 answers differently, job 1's context is rebuilt."""
    contexts = build_job_contexts(TRIO)
    cache = ContextCache()
    first = Agents(first={0: HeuristicPlanner().propose})
    first_proposals(TRIO, first, contexts, cache=cache)
    assert first.asked(0)[1].busy == [BusyWindow(machine=0, start=0, end=2)]
    later = Agents(first={0: lambda c: _proposal(0, [(0, 0, 4, 6), (1, 1, 6, 8)])})
    first_proposals(TRIO, later, contexts, cache=cache)
    assert later.asked(0)[1].busy == [BusyWindow(machine=0, start=4, end=6)]
    assert cache.versions == {0: 2, 1: 2, 2: 2}


def test_every_new_proposal_of_a_feedback_round_is_announced_to_the_cache() -> None:
    contexts = build_job_contexts(TRIO)
    agents = Agents(first={2: _wrong_duration})
    cache = ContextCache()
    proposals, _ = first_proposals(TRIO, agents, contexts, cache=cache)
    feedback_rounds(TRIO, agents, contexts, proposals, rounds=2, cache=cache)
    assert cache.versions == {0: 1, 1: 2, 2: 2}  # jobs 1 and 2 answered again in round 1


def _stubborn() -> Agents:
    """Jobs 0 and 1 overlapping on machine 0 in every round."""
    return Agents(later={1: _alone})


def test_every_round_is_recorded_from_its_draft_and_handed_to_the_listener() -> None:
    contexts = build_job_contexts(TRIO)
    agents = _stubborn()
    proposals, _ = first_proposals(TRIO, agents, contexts)
    del proposals[2]  # job 2 gave nothing in round 0
    heard: list[tuple[FeedbackRound, Schedule, ValidationReport]] = []
    session = feedback_rounds(TRIO, agents, contexts, proposals, rounds=3, fallbacks=1,
                              on_round=lambda r, plan, report: heard.append((r, plan, report)))
    assert len(heard) == len(session.rounds) == 4 and session.fallbacks == 1
    for i, (r, plan, report) in enumerate(heard):
        assert r is session.rounds[i] and r.round == i
        assert report == validate(TRIO, plan)
        assert r.entries == len(plan.operations) and r.makespan == plan.makespan
        assert r.violations == len(report.violations)
        assert r.by_code == dict(sorted(Counter(str(v.code) for v in report.violations).items()))
        assert r.to_json() == {"round": i, "draft_version": i, "entries": r.entries, "violations": r.violations,
                               "by_code": r.by_code, "jobs_asked": r.jobs_asked, "makespan": r.makespan,
                               "failed_jobs": r.failed_jobs}
    assert heard[-1][1] == session.plan
    assert (session.rounds[0].jobs_asked, session.rounds[0].failed_jobs) == ([0, 1], [2])
    assert session.rounds[0].entries == 4 and session.rounds[0].makespan == 5
    assert session.rounds[1].jobs_asked == [1, 2] and session.rounds[1].entries == 5
    assert [(r.jobs_asked, r.failed_jobs) for r in session.rounds[2:]] == [([1], []), ([1], [])]
    assert session.proposals == {0: proposals[0], 1: _alone(contexts[1]), 2: HeuristicPlanner().propose(
        agents.asked(1)[2])}


def test_the_default_is_five_rounds_and_no_fallback() -> None:
    contexts = build_job_contexts(TRIO)
    agents = _stubborn()
    proposals, _ = first_proposals(TRIO, agents, contexts)
    session = feedback_rounds(TRIO, agents, contexts, proposals)
    assert len(session.rounds) == 6 and session.fallbacks == 0 and not session.valid


def test_a_failed_re_ask_keeps_the_previous_entries_and_the_round_says_so() -> None:
    """With the gate, job 1's incomplete answers in round 1 are rejected twice: job 1 keeps its round-0
    entries and the round lists it as failed; job 2, asked after it, is still asked and fixed."""
    contexts = build_job_contexts(TRIO)
    incomplete = Agents(first={2: _wrong_duration}, later={1: lambda c: _proposal(1, [(0, 0, 2, 5)])})
    gate = MessageGate()
    proposals, _ = first_proposals(TRIO, incomplete, contexts, gate=gate)
    session = feedback_rounds(TRIO, incomplete, contexts, proposals, rounds=1, gate=gate)
    assert session.rounds[1].jobs_asked == [1, 2] and session.rounds[1].failed_jobs == [1]
    assert session.proposals[1] == proposals[1]
    assert session.proposals[2] != proposals[2] and session.rounds[1].by_code == {"machine_overlap": 1}
    assert gate.counts["reject"] == 2


def test_every_draft_is_validated_against_the_disruption_and_its_baseline() -> None:
    """Job 0's agent keeps starting its unstarted step before the reveal time (``started_in_past``, seen only
    with the baseline) and job 1's keeps running through machine 1's downtime (seen only with the disruption),
    so every round's verdict names both."""
    duo = Instance(name="duo", jobs=[[(0, 4), (0, 4)], [(1, 4), (1, 4)]])
    baseline = Schedule.from_operations("duo", [Operation(job=j, step=s, machine=j, start=4 * s, end=4 * s + 4)
                                                for j in (0, 1) for s in (0, 1)])
    disruption = Disruption(time=2, events=[MachineBreakdown(machine=1, start=5, duration=2)])
    early = _proposal(0, [(0, 0, 0, 4), (1, 0, 1, 5)])
    agents = Agents(first={0: lambda c: early, 1: HeuristicPlanner().propose},
                    later={0: lambda c: early, 1: HeuristicPlanner().propose})
    contexts = build_job_contexts(duo)  # the agents ignore the disruption: the validator must not
    proposals, _ = first_proposals(duo, agents, contexts)
    heard: list[tuple[Schedule, ValidationReport]] = []
    session = feedback_rounds(duo, agents, contexts, proposals, rounds=2, disruption=disruption,
                              baseline=baseline, on_round=lambda r, plan, report: heard.append((plan, report)))
    assert len(session.rounds) == 3
    for r, (plan, report) in zip(session.rounds, heard, strict=True):
        assert report == validate(duo, plan, disruption=disruption, baseline=baseline)
        assert {"started_in_past", "downtime_overlap"} <= set(r.by_code)


def test_the_patch_follows_the_draft_s_start_times() -> None:
    """Job 1 starts first in the draft (both on machine 0, overlapping): the patch keeps that order."""
    solo = Instance(name="solo", jobs=[[(0, 2)], [(0, 3)]])
    draft = Schedule.from_operations("solo", [Operation(job=1, step=0, machine=0, start=0, end=3),
                                              Operation(job=0, step=0, machine=0, start=1, end=3)])
    patched = patch_plan(solo, draft)
    assert validate(solo, patched).valid and patched.starts() == {(1, 0): 0, (0, 0): 3}
