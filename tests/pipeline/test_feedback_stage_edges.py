"""The merge node's feedback session, called directly on real Stages (tests/pipeline/test_pipeline_llm_in_charge.py
runs it inside whole runs): what each round writes to the log (the payload contract `alas log replay` reads and the
violations trace `alas run` shows), a failing job agent answered by the heuristic fallback and counted, and the
trace of the last session when the merge node was retried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alas_argo.agents.contracts import JobContext, JobProposal
from alas_argo.agents.registry import Role
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import Event, EventType, ExecutionLog
from alas_argo.log.replay import replay_log
from alas_argo.pipeline import RunConfig, Stages, Variant
from alas_argo.pipeline.feedback_stage import feedback_trace, run_feedback_session
from alas_argo.runtime.context import NodeContext
from tests.pipeline.pipeline_helpers import open_log

ABZ5 = get_instance("abz5")
#: Simulated LLM agents in charge on abz5, seed 2: the first draft has violations, the feedback fixes them.
IN_CHARGE = RunConfig(instance="abz5", planner="simulated", optimizer="none", seed=2, time_limit=1, repair_budget=1)
PROPOSED_KEYS = {"role", "planner", "feedback", "fallbacks", "plan"}
VALIDATION_KEYS = {"instance", "plan", "baseline", "disruption", "report", "iteration"}


def _merge(attempt: int = 1) -> NodeContext:
    return NodeContext(node_id="merge", role="supervisor", attempt=attempt, run_id="r", workflow="w")


def _session(log: ExecutionLog, config: RunConfig = IN_CHARGE, attempt: int = 1) -> dict[str, Any]:
    return run_feedback_session(Stages(config, ABZ5, log), _merge(attempt))


def _of(log: ExecutionLog, *types: EventType) -> list[Event]:
    return [e for e in log.events() if e.type in types]


def test_each_round_records_its_draft_then_the_validators_verdict_on_it(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    out = _session(log, attempt=2)
    events = _of(log, EventType.PLAN_PROPOSED, EventType.VALIDATION_PASSED, EventType.VALIDATION_FAILED)
    drafts, checks = events[0::2], events[1::2]
    assert len(drafts) == len(checks) >= 2 and all(e.type is EventType.PLAN_PROPOSED for e in drafts)
    assert all((e.node_id, e.attempt) == ("merge", 2) for e in events)
    for n, (draft, check) in enumerate(zip(drafts, checks, strict=True)):
        assert set(draft.payload) == PROPOSED_KEYS and set(check.payload) == VALIDATION_KEYS
        assert draft.payload["role"] == "supervisor" and draft.payload["planner"] == "simulated"
        assert draft.payload["fallbacks"] == 0
        assert draft.payload["feedback"]["round"] == check.payload["iteration"] == n
        assert draft.payload["feedback"]["checked"] is True
        # The verdict is on this draft, of this instance, with no baseline or disruption (a first plan).
        assert check.payload["plan"] == draft.payload["plan"]
        assert check.payload["instance"] == {"name": "abz5"}
        assert check.payload["baseline"] is None and check.payload["disruption"] is None
        report = validate(ABZ5, Schedule.model_validate(draft.payload["plan"]))
        assert check.payload["report"] == report.to_json()
        assert check.type is (EventType.VALIDATION_PASSED if report.valid else EventType.VALIDATION_FAILED)
        assert draft.payload["feedback"]["violations"] == len(report.violations)
    assert checks[0].type is EventType.VALIDATION_FAILED and checks[-1].type is EventType.VALIDATION_PASSED
    # The node's output: the last draft as the plan, the trace the run summary shows, the fallbacks.
    assert out["plan"] == drafts[-1].payload["plan"] and out["fallbacks"] == 0
    assert out["makespan"] == Schedule.model_validate(out["plan"]).makespan
    assert out["feedback"] == [e.payload["feedback"]["violations"] for e in drafts]
    assert feedback_trace(log.events()) == [e.payload["feedback"] for e in drafts]
    # `alas log replay` re-checks every verdict from the payloads alone.
    replay = replay_log(log, repairs=False)
    assert replay.parity and len(replay.steps) == len(checks)


def test_without_the_validator_one_unchecked_round_and_no_verdict_is_recorded(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    out = _session(log, IN_CHARGE.model_copy(update={"variant": Variant.NO_VALIDATOR}))
    assert _of(log, EventType.VALIDATION_PASSED, EventType.VALIDATION_FAILED) == []
    [draft] = _of(log, EventType.PLAN_PROPOSED)
    assert draft.payload["feedback"]["round"] == 0 and draft.payload["feedback"]["checked"] is False
    assert draft.payload["feedback"]["violations"] > 0  # counted (measurement), not fed back
    assert out["plan"] == draft.payload["plan"]


class FailingFor:
    """The configured job agents, except that job ``job`` answers nothing usable (an empty proposal)."""

    def __init__(self, backend: Any, job: int) -> None:
        self.backend, self.job, self.name = backend, job, backend.name

    def propose(self, ctx: JobContext) -> JobProposal:
        if ctx.job == self.job:
            return JobProposal(job=ctx.job, operations=[], backend=self.name, notes=["no operations"])
        answer: JobProposal = self.backend.propose(ctx)
        return answer


def test_a_job_agent_that_answers_nothing_is_planned_by_the_heuristic_and_counted(tmp_path: Path) -> None:
    log = open_log(tmp_path)
    stages = Stages(IN_CHARGE, ABZ5, log)
    real = stages.agent(Role.JOB_AGENT)
    stages.agent = lambda role: FailingFor(real, 3) if role is Role.JOB_AGENT else real  # type: ignore[method-assign]
    out = run_feedback_session(stages, _merge())
    drafts = _of(log, EventType.PLAN_PROPOSED)
    assert out["fallbacks"] == 1 and all(e.payload["fallbacks"] == 1 for e in drafts)
    # Job 3 is in the first draft all the same (the heuristic's answer), every one of its operations.
    first = Schedule.model_validate(drafts[0].payload["plan"])
    assert sorted(o.step for o in first.operations if o.job == 3) == list(range(len(ABZ5.jobs[3])))


def _event(seq: int, node: str, payload: dict[str, Any]) -> Event:
    return Event(seq=seq, timestamp="2026-12-06T00:00:00.000000Z", run_id="r", node_id=node,
                 type=EventType.PLAN_PROPOSED, payload=payload, prev_hash="x", hash="x")


def _proposed(seq: int, round_: int, violations: int) -> Event:
    return _event(seq, "merge", {"role": "supervisor", "feedback": {"round": round_, "violations": violations}})


def test_the_trace_is_the_last_sessions_rounds_in_order(tmp_path: Path) -> None:
    """A retried merge node starts again at round 0: only that session counts; other plan.proposed events
    (a job agent's fallback note, a plain merge) and a feedback without a round (taken as round 0) too."""
    first = [_proposed(1, 0, 9), _proposed(2, 1, 4)]
    retried = [_proposed(3, 0, 7), _proposed(4, 2, 0), _proposed(5, 1, 2)]
    noise = _event(6, "agents", {"job": 1, "fallback": "heuristic", "reason": "x"})
    trace = feedback_trace([*first, *retried, noise])
    assert trace == [{"round": 0, "violations": 7}, {"round": 1, "violations": 2}, {"round": 2, "violations": 0}]
    assert feedback_trace([*first, noise]) == [{"round": 0, "violations": 9}, {"round": 1, "violations": 4}]
    assert feedback_trace([noise]) == []
    unnumbered = _event(7, "merge", {"feedback": {"violations": 5}})
    assert feedback_trace([*first, unnumbered]) == [{"violations": 5}]
    assert feedback_trace([unnumbered, _proposed(8, 1, 2)]) == [{"violations": 5}, {"round": 1, "violations": 2}]
    assert feedback_trace([_proposed(1, 1, 3), _proposed(2, 2, 1)]) == [{"round": 1, "violations": 3},
                                                                       {"round": 2, "violations": 1}]
