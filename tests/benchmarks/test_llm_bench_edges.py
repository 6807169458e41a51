"""`alas bench llm`'s figures at their edges: each one as the module doc defines it, from answers whose plan is
known exactly (a scripted endpoint), and what each variant does with the rounds it is given.

The scripted transport answers the whole-instance prompts with one fixed plan of ``tiny`` (makespan 14), so
the validity, makespan, gap, optimal rate, at-best flag, model and token flags of a row are known in advance;
the simulator drives the job-agent variants, whose figures are checked against what was recorded."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from alas_argo.agents.baselines import single_messages
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, LlmUnavailable, Message, estimate_tokens
from alas_argo.agents.llm_recording import ExchangeRecorder
from alas_argo.agents.simulated import SimulatedTransport
from alas_argo.benchmarks import llm_bench
from alas_argo.benchmarks.llm_bench import (
    LlmVariant,
    family_of,
    optimal_rate,
    plan_static,
    run_case,
    run_llm_bench,
    tokens_cost,
)
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.validate import validate
from alas_argo.settings import LlmSettings

pytestmark = pytest.mark.usefixtures("no_ambient_endpoint")

# A valid plan of tiny (tests/conftest.py) with makespan 14; tiny's optimum is 11.
PLAN = [(0, 0, 0, 0, 3), (0, 1, 1, 4, 6), (0, 2, 2, 7, 9), (1, 0, 0, 3, 5), (1, 1, 2, 9, 10), (1, 2, 1, 10, 14),
        (2, 0, 1, 0, 4), (2, 1, 2, 4, 7), (2, 2, 0, 7, 8)]
REJECTION = '{"approved": false, "problems": [{"job": 1, "step": 2, "problem": "starts late"}]}'


class Scripted:
    """The whole-instance roles' endpoint: the planner/single agent answers ``plan``, the critic ``critique``;
    each role its own model name, the critic's tokens estimated."""

    def __init__(self, plan: list[tuple[int, int, int, int, int]] = PLAN, critique: str = REJECTION) -> None:
        self.plan = plan
        self.critique = critique
        self.keys: list[ExchangeKey] = []

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        self.keys.append(key)
        if key.role == "critic":
            return ChatResult(text=self.critique, model="m-a", prompt_tokens=10, completion_tokens=5, estimated=True)
        ops = [{"job": j, "step": s, "machine": m, "start": a, "end": b} for j, s, m, a, b in self.plan]
        return ChatResult(text=json.dumps({"operations": ops}), model="m-" + key.role[0], prompt_tokens=100,
                          completion_tokens=50)


def _with_best(instance: Instance, best: int | None) -> Instance:
    return instance.model_copy(update={"upper_bound": best})


def test_the_scripted_plan_is_valid_with_makespan_14(tiny: Instance) -> None:
    planner = LlmPlanner(LlmSettings(), transport=Scripted())
    plan, trace, rounds, patched = plan_static(tiny, LlmVariant.SINGLE_AGENT, planner)
    assert validate(tiny, plan).valid and plan.makespan == 14
    assert (trace, rounds, patched) == ([], 0, False)


def test_optimal_rate_is_capped_at_100_and_zero_without_a_plan_or_a_best_known() -> None:
    assert optimal_rate(True, 50, 55) == 100.0  # better than the best known: capped
    assert optimal_rate(True, 55, None) == 0.0 and optimal_rate(True, 0, 55) == 0.0


def test_tokens_cost_prices_each_side_per_million_rounded_to_six_places() -> None:
    prices = {"both": {"prompt_per_1m": 1.5, "completion_per_1m": 4.0}, "in": {"prompt_per_1m": 2.0},
              "out": {"completion_per_1m": 3.0}, "tiny": {"prompt_per_1m": 1.234}}
    assert tokens_cost("both", 2_000_000, 500_000, prices) == 5.0
    assert tokens_cost("in", 1_000_000, 1_000_000, prices) == 2.0  # no completion price: completions free
    assert tokens_cost("out", 1_000_000, 1_000_000, prices) == 3.0  # no prompt price: prompts free
    assert tokens_cost("tiny", 1, 0, prices) == 0.000001
    assert tokens_cost("other", 10, 10, prices) is None and tokens_cost("both", 10, 10, None) is None


def test_family_is_the_name_without_its_trailing_number() -> None:
    assert [family_of(n) for n in ("ft06", "la01", "abz5", "swv10", "ta001", "tiny")] == [
        "ft", "la", "abz", "swv", "ta", "tiny"]


def test_a_valid_plan_s_figures(tiny: Instance) -> None:
    row = run_case(_with_best(tiny, 11), LlmVariant.SINGLE_AGENT, 7, Scripted())
    assert (row.instance, row.family, row.variant, row.seed) == ("tiny", "tiny", "single_agent", 7)
    assert (row.valid, row.makespan, row.best_known, row.at_best) == (True, 14, 11, False)
    assert row.gap_percent == 27.273 and row.optimal_rate == 78.571  # 300/11 and 1100/14, to 3 places
    assert (row.model, row.simulated, row.tokens_estimated) == ("m-s", False, False)
    assert (row.calls, row.prompt_tokens, row.completion_tokens, row.cost_usd) == (1, 100, 50, None)
    assert (row.rounds, row.trace, row.first_violations, row.patched) == (0, "", None, False)
    assert row.agent_prompt_tokens is None
    assert row.single_prompt_tokens == estimate_tokens("".join(m["content"] for m in single_messages(tiny)))
    assert (row.context_scope, row.context_cache_hits, row.context_cache_misses, row.gate) == ("normal", 0, 0, "-")


def test_a_plan_at_the_best_known_is_at_best_with_no_gap(tiny: Instance) -> None:
    row = run_case(_with_best(tiny, 14), LlmVariant.SINGLE_AGENT, 0, Scripted())
    assert (row.at_best, row.gap_percent, row.optimal_rate) == (True, 0.0, 100.0)


def test_without_a_best_known_there_is_no_gap_no_rate_and_no_best(tiny: Instance) -> None:
    row = run_case(tiny, LlmVariant.SINGLE_AGENT, 0, Scripted())
    assert (row.valid, row.best_known, row.at_best, row.gap_percent, row.optimal_rate) == (True, None, False, None, 0.0)


def test_an_invalid_plan_has_no_gap_and_is_never_at_best_however_short(tiny: Instance) -> None:
    # Every operation at time 0: makespan 4, far below the best known, and invalid.
    short = [(j, s, m, 0, d) for j, ops in enumerate(tiny.jobs) for s, (m, d) in enumerate(ops)]
    row = run_case(_with_best(tiny, 11), LlmVariant.SINGLE_AGENT, 0, Scripted(plan=short))
    assert (row.valid, row.makespan, row.at_best, row.gap_percent, row.optimal_rate) == (False, 4, False, None, 0.0)


def test_an_empty_plan_has_no_makespan_and_a_failed_call_no_model(tiny: Instance) -> None:
    class Down:
        def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
            raise LlmUnavailable("down")

    row = run_case(_with_best(tiny, 11), LlmVariant.SINGLE_AGENT, 0, Down())
    assert (row.valid, row.makespan, row.gap_percent, row.model, row.simulated) == (False, None, None, "-", False)
    empty = run_case(tiny, LlmVariant.SINGLE_AGENT, 0, Scripted(plan=[]))
    assert (empty.makespan, empty.model) == (None, "m-s")


def test_planner_critic_uses_every_turn_it_is_given_and_names_both_models(tiny: Instance) -> None:
    # The critic never approves: one planner answer, then per turn a critique and a revision.
    transport = Scripted()
    row = run_case(_with_best(tiny, 11), LlmVariant.PLANNER_CRITIC, 0, transport, rounds=2,
                   prices={"m-a,m-p": {"prompt_per_1m": 1e6}})
    assert [(k.role, k.attempt) for k in transport.keys] == [
        ("planner", 0), ("critic", 0), ("planner", 1), ("critic", 1), ("planner", 2)]
    assert (row.rounds, row.calls, row.model, row.tokens_estimated) == (2, 5, "m-a,m-p", True)
    assert (row.prompt_tokens, row.cost_usd) == (320, 320.0)
    assert run_case(tiny, LlmVariant.PLANNER_CRITIC, 0, Scripted()).rounds == 5  # the default: 5 turns
    assert run_case(tiny, LlmVariant.PLANNER_CRITIC, 0, Scripted(critique="Looks good."), rounds=3).rounds == 0
    planner = LlmPlanner(LlmSettings(), transport=Scripted())
    assert plan_static(tiny, LlmVariant.PLANNER_CRITIC, planner)[2] == 5


def test_alas_patches_only_when_its_rounds_end_invalid_and_the_ablations_never(ft06: Instance) -> None:
    def case(variant: LlmVariant, rounds: int) -> llm_bench.LlmCaseRow:
        return run_case(ft06, variant, 0, SimulatedTransport(seed=0), rounds=rounds)

    cut_short = case(LlmVariant.ALAS, 0)  # no feedback round: the first draft is invalid, the patch makes it valid
    assert (cut_short.valid, cut_short.patched, cut_short.rounds) == (True, True, 0)
    assert cut_short.trace == str(cut_short.first_violations) and cut_short.first_violations
    converged = case(LlmVariant.ALAS, 5)  # the agents fix their drafts within the rounds: no patch
    assert (converged.valid, converged.patched) == (True, False)
    assert re.fullmatch(r"[1-9]\d*( > \d+)+ > 0", converged.trace)
    assert converged.rounds == converged.trace.count(" > ") and converged.first_violations == int(
        converged.trace.split(" > ")[0])
    no_repair = case(LlmVariant.NO_REPAIR, 1)
    assert (no_repair.valid, no_repair.patched, no_repair.rounds) == (False, False, 1)
    no_validator = case(LlmVariant.NO_VALIDATOR, 5)
    assert (no_validator.valid, no_validator.patched, no_validator.rounds) == (False, False, 0)
    single = case(LlmVariant.SINGLE_AGENT, 5)
    assert (single.calls, single.rounds, single.patched, single.trace) == (1, 0, False, "")


def test_the_gate_and_the_cache_see_every_job_agent_answer(ft06: Instance) -> None:
    """With the gate on, every job agent's answer gets one verdict, in the first round and in the feedback rounds;
    at every scope, every question a job agent is asked resolves its context through the cache once."""
    recorder = ExchangeRecorder()
    row = run_case(ft06, LlmVariant.ALAS, 0, SimulatedTransport(seed=0), rounds=2, gate=True, recorder=recorder)
    words = row.gate.split(" ")
    assert words[0::2] == ["deliver", "augment", "reject"]
    answers = [e for e in recorder.exchanges if e.role == "job"]
    assert sum(int(n) for n in words[1::2]) == len(answers) == row.calls > 6  # the feedback rounds' too
    for scope in ("minimal", "full"):
        recorder = ExchangeRecorder()
        row = run_case(ft06, LlmVariant.ALAS, 0, SimulatedTransport(seed=0), rounds=2, scope=scope, recorder=recorder)
        asked = [e for e in recorder.exchanges if e.role == "job"]
        assert (row.context_scope, row.context_cache_hits + row.context_cache_misses) == (scope, len(asked))
        assert len(asked) > 6 and row.gate == "-"


def test_agent_prompt_tokens_average_the_first_questions_only(ft06: Instance) -> None:
    recorder = ExchangeRecorder()
    row = run_case(ft06, LlmVariant.ALAS, 0, SimulatedTransport(seed=0), rounds=2, recorder=recorder)
    first = [estimate_tokens("".join(m["content"] for m in e.messages)) for e in recorder.exchanges
             if e.role == "job" and e.attempt == 0]
    assert len(first) == 6 and any(e.attempt > 0 for e in recorder.exchanges)  # re-asks exist and are left out
    assert row.agent_prompt_tokens == round(sum(first) / 6, 1) and sum(first) % 6  # a mean that is not whole


def test_seconds_are_the_clock_s_difference_to_four_places(monkeypatch: pytest.MonkeyPatch, tiny: Instance) -> None:
    ticks: Iterator[float] = iter([50.0, 52.345678])
    monkeypatch.setattr(llm_bench, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    assert run_case(tiny, LlmVariant.SINGLE_AGENT, 0, Scripted()).seconds == 2.3457


def test_the_bench_hands_every_knob_to_every_case(tiny: Instance) -> None:
    rows = run_llm_bench([_with_best(tiny, 11)], [LlmVariant.PLANNER_CRITIC, LlmVariant.ALAS], [3, 4],
                         lambda i, v, s: Scripted() if v is LlmVariant.PLANNER_CRITIC else SimulatedTransport(seed=s),
                         rounds=1, prices={"m-a,m-p": {"completion_per_1m": 1e6}, "simulated": {}}, gate=True)
    assert [(r.variant, r.seed) for r in rows] == [("planner_critic", 3), ("planner_critic", 4), ("alas", 3),
                                                   ("alas", 4)]
    assert [r.rounds for r in rows[:2]] == [1, 1] and rows[0].cost_usd == 105.0
    assert rows[0].tokens_estimated  # one critique, the only estimated exchange of the case, is enough
    assert rows[0].gate == "deliver 0 augment 0 reject 0" and rows[2].cost_usd == 0.0
    defaults = run_llm_bench([tiny], [LlmVariant.PLANNER_CRITIC], [0], lambda i, v, s: Scripted())
    assert (defaults[0].rounds, defaults[0].gate, defaults[0].cost_usd) == (5, "-", None)


def test_with_the_gate_on_a_rejected_message_s_second_ask_is_not_a_first_prompt(ft06: Instance) -> None:
    """The figure is one job agent's first prompt (bench/README.md): the gate asks a rejected message again at
    attempt 0 with the reasons added, and that longer second prompt must not count as another job's first one."""
    recorder = ExchangeRecorder()
    row = run_case(ft06, LlmVariant.ALAS, 0, SimulatedTransport(seed=0), rounds=0, gate=True, recorder=recorder)
    asked = [e for e in recorder.exchanges if e.role == "job" and e.attempt == 0]
    again = [e for e in asked if "message rejected: " in e.messages[-1]["content"]]
    assert len(asked) == 7 and len(again) == 1 and row.gate.endswith("reject 1")  # job 5 asked twice
    first = [estimate_tokens("".join(m["content"] for m in e.messages)) for e in asked if e not in again]
    assert [e.job for e in asked if e not in again] == [0, 1, 2, 3, 4, 5]
    assert row.agent_prompt_tokens == round(sum(first) / 6, 1)
