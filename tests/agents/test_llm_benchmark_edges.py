"""The planner comparison behind ``alas bench llm --compare`` at its edges, without an endpoint: what each job agent
is shown (its own job, the horizon, only the windows earlier jobs reserved on its machines, sorted), when a job
falls back (no answer, an unusable answer; never on refused credentials), what a job with no answer and no
fallback leaves out, and the figures of a row (raw union vs decoded plan, the calls and tokens this run spent,
the bound, CP-SAT's own knobs).

Stand-in backends answer from scripts, so every value asserted is exact; tests/cli/test_llm_commands.py runs the
comparison end to end against a scripted HTTP endpoint."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from alas_argo.agents import llm_benchmark
from alas_argo.agents.contracts import BusyWindow, JobContext, JobProposal, ProposedOperation
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.llm import LlmPlanner
from alas_argo.agents.llm_benchmark import BenchRow, bench_agents, bench_cpsat, compare_planners, propose_in_job_order
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, LlmAuthError, LlmUnavailable, Message
from alas_argo.jssp.cpsat import SolveRequest, SolveResult
from alas_argo.jssp.instance import Instance
from alas_argo.settings import LlmSettings

Answer = Callable[[JobContext], JobProposal]


class Backend:
    """A job agent answering from ``answer`` (a proposal, or raising); it keeps every context it is given."""

    def __init__(self, answer: Answer, name: str = "stand-in") -> None:
        self.answer = answer
        self.name = name
        self.seen: list[JobContext] = []

    def propose(self, ctx: JobContext) -> JobProposal:
        self.seen.append(ctx)
        return self.answer(ctx)


def _chain(ctx: JobContext, shift: int = 0) -> JobProposal:
    """The job's steps back to back from ``shift`` (ignoring every busy window: overlaps are the point)."""
    ops, t = [], shift
    for step, (machine, duration) in enumerate(ctx.operations):
        ops.append(ProposedOperation(job=ctx.job, step=step, machine=machine, start=t, end=t + duration))
        t += duration
    return JobProposal(job=ctx.job, operations=ops, backend="stand-in")


def _empty(ctx: JobContext) -> JobProposal:
    return JobProposal(job=ctx.job, operations=[], backend="stand-in", notes=["unusable answer"])


def test_each_job_sees_its_own_job_the_horizon_and_only_earlier_reservations_on_its_machines(tiny: Instance) -> None:
    # tiny: job 0 = m0 3, m1 2, m2 2; job 1 = m0 2, m2 1, m1 4; job 2 = m1 4, m2 3, m0 1 (horizon 22).
    backend = Backend(_chain)
    proposals, fallbacks = propose_in_job_order(tiny, backend)
    assert fallbacks == 0 and [p.job for p in proposals] == [0, 1, 2]
    first, second, third = backend.seen
    assert [c.job for c in backend.seen] == [0, 1, 2] and all(c.instance == "tiny" for c in backend.seen)
    assert [c.horizon for c in backend.seen] == [22, 22, 22]
    assert first.operations == [(0, 3), (1, 2), (2, 2)] and first.busy == []
    # Job 0's chain as "reserved" windows, sorted by (machine, start); job 2 then sees jobs 0 and 1's (a tie on
    # (machine, start) keeps the order they were reserved in).
    assert second.busy == [BusyWindow(machine=0, start=0, end=3), BusyWindow(machine=1, start=3, end=5),
                           BusyWindow(machine=2, start=5, end=7)]
    assert [(w.machine, w.start, w.end) for w in third.busy] == [
        (0, 0, 3), (0, 0, 2), (1, 3, 5), (1, 3, 7), (2, 2, 3), (2, 5, 7)]
    assert all(w.reason == "reserved" for w in third.busy)


def test_windows_are_kept_only_for_the_machines_a_job_visits_and_never_empty_ones() -> None:
    # Job 0 runs on machines 0 and 1 only; its zero-length step reserves nothing. Job 1 visits machine 1 only.
    instance = Instance(name="two", jobs=[[(0, 4), (1, 0), (1, 2)], [(1, 3)]])
    backend = Backend(_chain)
    propose_in_job_order(instance, backend)
    assert backend.seen[1].busy == [BusyWindow(machine=1, start=4, end=6)]
    assert backend.seen[1].horizon == 9


def test_an_unusable_answer_or_a_failed_call_falls_back_for_that_job_only(tiny: Instance) -> None:
    def answer(ctx: JobContext) -> JobProposal:
        if ctx.job == 1:
            raise LlmUnavailable("down")
        return _empty(ctx) if ctx.job == 2 else _chain(ctx)

    heuristic = Backend(HeuristicPlanner().propose, "heuristic")
    proposals, fallbacks = propose_in_job_order(tiny, Backend(answer), heuristic)
    assert fallbacks == 2 and [c.job for c in heuristic.seen] == [1, 2]
    assert [p.backend for p in proposals] == ["stand-in", "heuristic", "heuristic"]
    # The fallback sees the same context, so its proposal avoids what job 0 reserved.
    assert heuristic.seen[0].busy == [BusyWindow(machine=0, start=0, end=3), BusyWindow(machine=1, start=3, end=5),
                                      BusyWindow(machine=2, start=5, end=7)]


def test_without_a_fallback_an_unusable_answer_is_kept_and_no_answer_is_left_out(tiny: Instance) -> None:
    def answer(ctx: JobContext) -> JobProposal:
        if ctx.job == 0:
            raise LlmUnavailable("down")
        return _empty(ctx)

    proposals, fallbacks = propose_in_job_order(tiny, Backend(answer))
    assert fallbacks == 0 and [(p.job, p.operations) for p in proposals] == [(1, []), (2, [])]


def test_refused_credentials_stop_the_comparison_instead_of_falling_back(tiny: Instance) -> None:
    def answer(ctx: JobContext) -> JobProposal:
        raise LlmAuthError("401 from the endpoint")

    heuristic = Backend(HeuristicPlanner().propose, "heuristic")
    with pytest.raises(LlmAuthError, match="401 from the endpoint"):
        propose_in_job_order(tiny, Backend(answer), heuristic)
    assert heuristic.seen == []


def test_a_row_reports_the_raw_union_and_the_decoded_plan(tiny: Instance) -> None:
    # Every job's chain from 0: the union overlaps on machines (m0: jobs 0/1; m1: 2/0 and 0/1; m2: 2/0, the
    # validator's overlaps of neighbours by start), the priority decode makes it feasible.
    instance = tiny.model_copy(update={"lower_bound": 9})
    row = bench_agents(instance, Backend(_chain), fallback=None)
    assert (row.instance, row.planner, row.valid, row.raw_valid, row.fallbacks) == ("tiny", "stand-in", True, False, 0)
    assert row.violations == 4 and row.makespan >= 11 and row.lower_bound == 9
    assert (row.calls, row.tokens) == (0, 0)  # not an LLM planner: nothing counted
    clean = bench_agents(tiny, HeuristicPlanner())
    assert (clean.raw_valid, clean.violations, clean.valid, clean.lower_bound) == (True, 0, True, None)


class Scripted:
    """An endpoint answering every job agent with its heuristic chain as JSON, 7 prompt + 3 completion tokens."""

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        ops = [{"job": key.job, "step": 0, "machine": 0, "start": 0, "end": 1}]
        return ChatResult(text=f'{{"operations": {ops}}}'.replace("'", '"'), model="scripted", prompt_tokens=7,
                          completion_tokens=3)


def test_an_llm_row_counts_only_the_calls_and_tokens_of_its_own_instance(tiny: Instance) -> None:
    planner = LlmPlanner(LlmSettings(), transport=Scripted())
    bench_agents(tiny, planner)  # an earlier instance's usage stays out of the next row
    row = bench_agents(tiny, planner, fallback=HeuristicPlanner())
    assert (row.calls, row.tokens) == (3, 30)
    assert planner.usage["calls"] == 6


def test_cpsat_gets_the_limit_workers_and_seed_and_its_row_the_instance_s_bound(
        monkeypatch: pytest.MonkeyPatch, ft06: Instance) -> None:
    seen: list[SolveRequest] = []
    real = llm_benchmark.optimize

    def optimize(request: SolveRequest) -> SolveResult:
        seen.append(request)
        return real(request)

    monkeypatch.setattr(llm_benchmark, "optimize", optimize)
    row = bench_cpsat(ft06, time_limit=0.5, workers=1, seed=3)
    assert (seen[0].time_limit, seen[0].workers, seen[0].seed) == (0.5, 1, 3)
    assert (row.instance, row.planner, row.valid, row.lower_bound) == ("ft06", "cpsat", True, 55)
    assert row.makespan >= 55 and (row.raw_valid, row.violations, row.calls) == (None, 0, 0)
    bench_cpsat(ft06, time_limit=0.5)
    assert (seen[1].workers, seen[1].seed) == (2, 0)


def test_compare_gives_llm_heuristic_cpsat_per_instance_in_order_with_progress(
        monkeypatch: pytest.MonkeyPatch, tiny: Instance) -> None:
    calls: list[dict[str, Any]] = []

    def bench_cpsat(instance: Instance, *, time_limit: float, workers: int, seed: int) -> BenchRow:
        calls.append({"instance": instance.name, "time_limit": time_limit, "workers": workers, "seed": seed})
        return BenchRow(instance.name, "cpsat", 11, True, 0.0)

    monkeypatch.setattr(llm_benchmark, "bench_cpsat", bench_cpsat)
    other = tiny.model_copy(update={"name": "tiny2"})

    def failing(ctx: JobContext) -> JobProposal:
        raise LlmUnavailable("down")

    seen: list[BenchRow] = []
    rows = compare_planners([tiny, other], Backend(failing, "llm"), time_limit=1.5, workers=3, seed=4,
                            progress=seen.append)
    assert [(r.instance, r.planner) for r in rows] == [
        ("tiny", "llm"), ("tiny", "heuristic"), ("tiny", "cpsat"),
        ("tiny2", "llm"), ("tiny2", "heuristic"), ("tiny2", "cpsat")]
    assert seen == rows
    assert rows[0].fallbacks == 3 and rows[1].fallbacks == 0  # the llm row falls back to the heuristic agent
    assert calls[0] == {"instance": "tiny", "time_limit": 1.5, "workers": 3, "seed": 4}
    compare_planners([tiny], Backend(_chain, "llm"), time_limit=1.0)
    assert calls[-1] == {"instance": "tiny", "time_limit": 1.0, "workers": 2, "seed": 0}  # the defaults


def _clock(monkeypatch: pytest.MonkeyPatch, *times: float) -> None:
    """The module's ``time.perf_counter`` answering ``times`` in turn (no wall clock is read)."""
    ticks: Iterator[float] = iter(times)
    monkeypatch.setattr(llm_benchmark, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))


def test_a_row_s_seconds_are_the_clock_s_difference_to_three_decimals(monkeypatch: pytest.MonkeyPatch,
                                                                      tiny: Instance, ft06: Instance) -> None:
    _clock(monkeypatch, 100.0, 101.23456)
    assert bench_agents(tiny, HeuristicPlanner()).seconds == 1.235
    _clock(monkeypatch, 7.0, 7.5004)
    assert bench_cpsat(ft06, time_limit=0.5).seconds == 0.5
