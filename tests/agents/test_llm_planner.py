"""The LLM planner end to end against a scripted endpoint: every mistake a model makes is caught by the
independent validator, the final plan is valid, endpoint failures are typed, and costs are counted."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobProposal, PlannerBackend
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner, is_unusable, make_llm_backend
from alas_argo.agents.llm_client import HttpChatClient, LlmAuthError, LlmEndpointError, LlmUnavailable
from alas_argo.agents.llm_recording import ExchangeRecorder
from alas_argo.agents.supervisor import MergeMode, Supervisor
from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings, load_settings
from tests.agents.llm_server import Reply, ScriptedLlmServer, context_of, running_server

#: A valid schedule of the `tiny` fixture (makespan 20), per job: (step, machine, start, end).
GOOD = {
    0: [(0, 0, 0, 3), (1, 1, 3, 5), (2, 2, 5, 7)],
    1: [(0, 0, 3, 5), (1, 2, 7, 8), (2, 1, 8, 12)],
    2: [(0, 1, 12, 16), (1, 2, 16, 19), (2, 0, 19, 20)],
}


def answer(job: int, ops: list[tuple[int, int, int, int]] | None = None) -> str:
    rows = GOOD[job] if ops is None else ops
    return json.dumps({"operations": [{"job": job, "step": s, "machine": m, "start": a, "end": b}
                                      for s, m, a, b in rows]})


def replace(job: int, step: int, machine: int, start: int, end: int) -> list[tuple[int, int, int, int]]:
    return [(step, machine, start, end) if s == step else (s, m, a, b) for s, m, a, b in GOOD[job]]


#: name -> (the job whose answer is wrong, the wrong answer text, the violation code the validator must report)
MISTAKES: dict[str, tuple[int, str, str]] = {
    "overlap": (1, answer(1, replace(1, 0, 0, 0, 2)), "machine_overlap"),
    "precedence": (0, answer(0, replace(0, 1, 1, 2, 4)), "precedence"),
    "missing_job": (2, '{"operations": []}', "missing_operation"),
    "missing_operation": (1, answer(1, GOOD[1][:2]), "missing_operation"),
    "wrong_duration": (2, answer(2, replace(2, 0, 1, 12, 15)), "wrong_duration"),
    "wrong_machine": (0, answer(0, replace(0, 2, 1, 5, 7)), "wrong_machine"),
    "truncated_json": (1, answer(1)[:70], "missing_operation"),
    "prose": (2, "Job 2 goes first on machine 1, then machine 2, then machine 0, as early as possible.",
              "missing_operation"),
    "other_jobs_ops": (2, answer(1), "missing_operation"),
    "duplicate": (0, answer(0, [*GOOD[0], GOOD[0][2]]), "duplicate_operation"),
}


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


def by_job(answers: dict[int, str], **reply: object) -> Callable[[dict[str, object]], Reply]:
    """A route answering each job agent from ``answers`` (keyed by the job in its prompt's context)."""
    return lambda request: Reply(content=answers[context_of(request)["job"]], **reply)  # type: ignore[arg-type]


def planner(server: ScriptedLlmServer, recorder: ExchangeRecorder | None = None, **kw: object) -> LlmPlanner:
    settings = load_settings(llm={"base_url": server.url, "model": "test-model", "timeout": 2.0,
                                  "max_retries": 0, **kw})
    return LlmPlanner(settings, recorder=recorder)


def propose_all(backend: PlannerBackend, instance: Instance) -> list[JobProposal]:
    return [backend.propose(ctx) for ctx in build_job_contexts(instance)]


def test_is_a_planner_backend(llm_server: ScriptedLlmServer) -> None:
    assert isinstance(planner(llm_server), PlannerBackend)
    assert planner(llm_server).name == "llm"


def test_good_answers_union_is_valid(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.route = by_job({j: answer(j) for j in GOOD})
    proposals = propose_all(planner(llm_server), tiny)
    schedule = Supervisor(MergeMode.UNION).merge(tiny, proposals)
    assert validate(tiny, schedule).valid
    assert schedule.makespan == 20
    assert all(p.notes == [] and p.backend == "llm" for p in proposals)


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_each_mistake_is_caught_and_the_final_plan_is_valid(
        mistake: str, llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    job, text, code = MISTAKES[mistake]
    answers = {j: answer(j) for j in GOOD}
    answers[job] = text
    llm_server.route = by_job(answers)
    proposals = propose_all(planner(llm_server), tiny)  # never raises on a bad answer
    union = Supervisor(MergeMode.UNION).merge(tiny, proposals)
    report = validate(tiny, union)
    assert not report.valid
    assert code in {v.code for v in report.violations}, report.violations
    assert any(job in (v.scope.get("job"), v.scope.get("other_job")) for v in report.violations if v.code == code)
    if code != "machine_overlap":  # an overlap with another job is invisible inside the bounded context
        assert proposals[job].notes, "the agent notes what it could see was wrong"
    # What the pipeline does with it: fall back per unusable job, then the priority decode as the patch.
    fallback = HeuristicPlanner()
    ctxs = build_job_contexts(tiny)
    usable = [p if not is_unusable(p) else fallback.propose(ctxs[p.job]) for p in proposals]
    final = Supervisor(MergeMode.PRIORITY).merge(tiny, usable)
    assert validate(tiny, final).valid


def test_unusable_answers_are_flagged(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.route = by_job({0: "I'd rather not.", 1: answer(1)[:30], 2: answer(2)})
    p = planner(llm_server)
    proposals = propose_all(p, tiny)
    assert [is_unusable(x) for x in proposals] == [True, True, False]
    assert proposals[0].notes == ["unusable answer: the model answered in prose without any JSON"]
    assert proposals[1].notes == ["unusable answer: the model's answer holds no complete JSON "
                                  "(truncated or malformed)"]
    assert p.usage["unusable"] == 2 and p.usage["exchanges"] == 3


def test_cut_off_answer_is_noted(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.script(Reply(content=answer(0)[:100], finish_reason="length"))
    proposal = planner(llm_server).propose(build_job_contexts(tiny)[0])
    assert "the answer was cut off at the completion token limit" in proposal.notes
    assert [o.step for o in proposal.operations] == [0]


def test_usage_is_counted_per_call_and_in_total(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.route = by_job({j: answer(j) for j in GOOD}, usage={"prompt_tokens": 100, "completion_tokens": 40})
    seen: list[dict[str, object]] = []
    p = LlmPlanner(LlmSettings(base_url=llm_server.url, max_retries=0), on_usage=seen.append)
    proposals = propose_all(p, tiny)
    assert proposals[0].usage["total_tokens"] == 140 and proposals[0].usage["calls"] == 1
    total = p.usage
    assert (total["calls"], total["exchanges"], total["prompt_tokens"], total["completion_tokens"],
            total["total_tokens"], total["failures"]) == (3, 3, 300, 120, 420, 0)
    assert total["latency_s"] > 0
    assert len(seen) == 3 and seen[0]["role"] == "job"


def test_retries_are_counted_as_calls(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.script(Reply(status=429, headers={"Retry-After": "0"}), Reply(content=answer(0)))
    p = planner(llm_server, max_retries=2)
    assert not is_unusable(p.propose(build_job_contexts(tiny)[0]))
    assert p.usage["calls"] == 2 and p.usage["exchanges"] == 1


def test_no_answer_raises_a_typed_error_and_is_recorded(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.script(Reply(status=503), Reply(status=401))
    recorder = ExchangeRecorder()
    p = planner(llm_server, recorder)
    ctx = build_job_contexts(tiny)[0]
    with pytest.raises(LlmUnavailable):
        p.propose(ctx)
    with pytest.raises(LlmAuthError):
        p.propose(ctx)
    statuses = [(e.status, e.error_type) for e in recorder.exchanges]
    assert statuses == [("error", "LlmUnavailable"), ("error", "LlmAuthError")]
    assert p.usage["failures"] == 2


def test_model_that_never_answers_does_not_hang(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.script(Reply(content=answer(0), delay=30))
    p = planner(llm_server, timeout=0.2)
    with pytest.raises(LlmEndpointError, match="no answer within"):
        p.propose(build_job_contexts(tiny)[0])


def test_supervisor_merge_answer(llm_server: ScriptedLlmServer, tiny: Instance) -> None:
    llm_server.route = by_job({j: answer(j) for j in GOOD})
    p = planner(llm_server)
    proposals = propose_all(p, tiny)
    merged = "```json\n" + json.dumps({"operations": [o.model_dump() for q in proposals for o in q.operations]}) \
        + "\n```"
    llm_server.script(Reply(content=merged))
    result = p.supervise("tiny", proposals)
    assert len(result.operations) == 9 and result.notes == ["answer wrapped in a code fence"]
    request = llm_server.requests[-1]
    assert len(context_of(request)["proposals"]) == 3
    assert p.recorder.exchanges[-1].role == "supervisor"


def test_make_llm_backend_needs_an_endpoint_or_a_replay() -> None:
    with pytest.raises(InputError, match="no LLM endpoint configured"):
        make_llm_backend(LlmSettings())
    with pytest.raises(InputError, match=r"recorded no llm\.exchange events"):
        make_llm_backend(LlmSettings(), replay_events=[{"type": "run.started", "payload": {}}])
    backend = make_llm_backend(LlmSettings(base_url="http://127.0.0.1:9/v1", api_key="k", timeout=1.5))
    assert isinstance(backend.transport, HttpChatClient) and backend.transport.timeout == 1.5
