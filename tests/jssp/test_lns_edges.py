"""LNS pinned where tests/jssp/test_lns.py only checks "valid and never worse": a single move on every window
of a small case, where each neighbourhood puts its window, which neighbourhood the shares pick, how the window
grows and shrinks, the refusal of each constraint LNS does not model, and what the result reports.

The search's own choices (which window, which seed) are not pinned: only what holds for any of them.
"""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp import lns
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, SolveStatus
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.lns import LnsConfig, Neighbourhood, improve
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.sequencing import Sequences
from alas_argo.jssp.validate import validate


def test_an_optimal_move_never_worsens_the_makespan(tiny: Instance) -> None:
    # The sequences a window is cut from are a solution of the move's model, and the model's estimate (end +
    # tail of what follows, earliest starts from what precedes) bounds the exact makespan of what it returns:
    # so a move solved to optimality is never worse, on any window. A lower bound from a job predecessor or a
    # machine predecessor outside the window, or a tail, lost or miscounted breaks this on some window of tiny.
    seqs = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={})
    assert seqs.makespan == 17
    order = seqs.start_order()
    for size in range(1, len(order) + 1):
        for first in range(len(order) - size + 1):
            clock = SearchClock()
            moved = lns._move(seqs, order[first:first + size], 2.0, 1, 7, clock)
            assert moved is not None, (first, size)
            candidate, optimal = moved
            assert optimal, (first, size)
            assert clock.solves == 2  # the estimate, then (solved to optimality) the compaction at that estimate
            assert candidate.makespan <= 17, (first, size, candidate.makespan)
            assert validate(tiny, candidate.to_schedule()).valid
    # The whole instance as one window: tiny's optimum.
    whole = lns._move(seqs, order, 2.0, 1, 7, SearchClock())
    assert whole is not None and whole[0].makespan == 11 and whole[1]


def _contiguous(order: list[int], window: list[int]) -> bool:
    first = order.index(window[0])
    return order[first:first + len(window)] == window


def test_a_window_is_a_run_in_start_order_and_can_reach_the_end() -> None:
    instance = get_instance("ft06")
    seqs = Sequences.from_schedule(instance, dispatch(instance, "spt"), durations={})
    order = seqs.start_order()
    firsts = set()
    for seed in range(200):
        window = lns._window(seqs, 10, Neighbourhood.WINDOW, random.Random(seed))
        assert len(window) == 10 and _contiguous(order, window)
        firsts.add(order.index(window[0]))
    # Every start from 0 to n - size, and no later one (which would cut the window short).
    assert firsts == set(range(len(order) - 10 + 1))
    assert lns._window(seqs, 100, Neighbourhood.WINDOW, random.Random(0)) == order  # larger than the instance


def test_a_critical_window_holds_a_critical_operation() -> None:
    instance = get_instance("ft06")
    seqs = Sequences.from_schedule(instance, dispatch(instance, "spt"), durations={})
    order, critical = seqs.start_order(), set(seqs.critical_path())
    assert len(critical) < len(order)
    for seed in range(50):
        # A window of one is its pivot: always an operation of a critical path.
        assert set(lns._window(seqs, 1, Neighbourhood.CRITICAL, random.Random(seed))) <= critical
        window = lns._window(seqs, 8, Neighbourhood.CRITICAL, random.Random(seed))
        assert len(window) == 8 and _contiguous(order, window) and critical & set(window)


def test_a_machines_window_keeps_to_a_few_machines_around_a_critical_operation() -> None:
    instance = get_instance("ft06")  # 6 machines: the pivot's and 6 // 4 = 1 drawn, so at most two
    seqs = Sequences.from_schedule(instance, dispatch(instance, "spt"), durations={})
    order, critical = seqs.start_order(), set(seqs.critical_path())
    for seed in range(50):
        window = lns._window(seqs, 6, Neighbourhood.MACHINES, random.Random(seed))
        assert 1 <= len(window) <= 6
        assert len({seqs.machine[op] for op in window}) <= 2
        assert critical & set(window) or len(window) == 6  # the pivot is in unless the run filled up first
        positions = [order.index(op) for op in window]
        assert positions == sorted(positions) and positions[-1] - positions[0] < 4 * 6  # within the span
    # Every operation of the span on the chosen machines, in start order, up to the size.
    big = lns._window(seqs, 36, Neighbourhood.MACHINES, random.Random(3))
    machines = {seqs.machine[op] for op in big}
    assert big == [op for op in order if seqs.machine[op] in machines]


@pytest.mark.parametrize(("shares", "kind"), [((1.0, 0.0), Neighbourhood.CRITICAL),
                                              ((0.0, 1.0), Neighbourhood.MACHINES),
                                              ((0.0, 0.0), Neighbourhood.WINDOW)])
def test_the_shares_pick_the_neighbourhood(monkeypatch: pytest.MonkeyPatch, shares: tuple[float, float],
                                           kind: Neighbourhood) -> None:
    kinds: list[Any] = []
    real = lns._window

    def recording(seqs: Sequences, size: int, kind: Neighbourhood, rng: random.Random) -> list[int]:
        kinds.append(kind)
        return real(seqs, size, kind, rng)

    monkeypatch.setattr(lns, "_window", recording)
    instance = get_instance("ft06")
    start = dispatch(instance, "spt")
    result = improve(SolveRequest(instance, time_limit=0.3, seed=4), start,
                     config=LnsConfig(initial_size=8, critical_share=shares[0], machines_share=shares[1]))
    assert kinds and set(kinds) == {kind}
    assert validate(instance, result.schedule).valid and result.objective <= start.makespan


def _sizes(monkeypatch: pytest.MonkeyPatch, config: LnsConfig, outcome: str) -> list[int]:
    """The window sizes of successive moves when every move ends as ``outcome``: ``none`` (nothing found),
    ``feasible`` (ran out of time) or ``optimal``; each move charged the least a step costs."""
    sizes: list[int] = []
    real = lns._window

    def recording(seqs: Sequences, size: int, kind: Neighbourhood, rng: random.Random) -> list[int]:
        sizes.append(size)
        return real(seqs, size, kind, rng)

    def move(seqs: Sequences, relaxed: list[int], time_limit: float, workers: int, seed: int,
             clock: SearchClock) -> tuple[Sequences, bool] | None:
        clock.charge_nothing()
        return None if outcome == "none" else (seqs, outcome == "optimal")

    monkeypatch.setattr(lns, "_window", recording)
    monkeypatch.setattr(lns, "_move", move)
    instance = get_instance("ft06")  # 36 operations
    improve(SolveRequest(instance, time_limit=0.06, seed=1), dispatch(instance, "spt"), config=config)
    return sizes


@pytest.mark.parametrize("outcome", ["none", "feasible"])
def test_the_window_shrinks_after_a_move_that_found_nothing_or_ran_out_of_time(
        monkeypatch: pytest.MonkeyPatch, outcome: str) -> None:
    # The first size is the initial one capped by the instance (40 -> 36), then * 0.85 down to min_size.
    sizes = _sizes(monkeypatch, LnsConfig(), outcome)
    assert sizes[:9] == [36, 30, 25, 21, 17, 14, 11, 10, 10]


def test_the_window_grows_after_an_optimal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    # By the factor, by at least one, never past max_size nor the instance.
    assert _sizes(monkeypatch, LnsConfig(initial_size=10, grow=1.5), "optimal")[:6] == [10, 15, 22, 33, 36, 36]
    assert _sizes(monkeypatch, LnsConfig(initial_size=10, grow=1.0, max_size=13), "optimal")[:5] == \
        [10, 11, 12, 13, 13]
    # A window smaller than min_size on a small instance starts at the instance's size.
    assert _sizes(monkeypatch, LnsConfig(initial_size=5, min_size=50), "none")[:2] == [36, 50]


@pytest.mark.parametrize("constraint", [{"fixed": {(0, 0): 0}}, {"min_starts": {(0, 0): 3}},
                                        {"downtimes": [(0, 0, 5)]}, {"precedences": [((0, 0), (1, 0))]}])
def test_each_constraint_lns_does_not_model_is_refused(ft06: Instance, constraint: dict[str, Any]) -> None:
    with pytest.raises(InputError, match=r"^LNS handles static requests only \(no fixed, min_starts, downtimes, "
                                         r"precedences\)$"):
        improve(SolveRequest(ft06, **constraint), dispatch(ft06, "spt"))


def test_what_the_result_reports(ft06: Instance) -> None:
    start = dispatch(ft06, "spt")
    events: list[ProgressEvent] = []
    reference = {key: op.start for key, op in start.by_key().items() if key[0] < 3}  # jobs 0-2 only
    began = time.monotonic()
    result = improve(SolveRequest(ft06, time_limit=0.5, seed=3, reference=reference), start, bound=50,
                     progress=events.append)
    elapsed = time.monotonic() - began
    # 55 is ft06's optimum: a bound of 50 is never reached, so the result is FEASIBLE with the bound kept.
    assert result.status is SolveStatus.FEASIBLE and result.bound == 50
    assert result.objective == result.schedule.makespan < start.makespan and result.improved
    assert result.total_shift == sum(abs(op.start - reference[key]) for key, op in result.schedule.by_key().items()
                                     if key in reference)
    assert 0 <= result.seconds <= elapsed
    # One event per improvement of the makespan, each strictly better, the last the result's.
    assert events and all(e.phase == "lns" and e.bound == 50 for e in events)
    makespans = [e.makespan for e in events]
    assert makespans == sorted(set(makespans), reverse=True) and makespans[0] < start.makespan
    assert makespans[-1] == result.objective
    assert all(0 <= e.seconds <= result.seconds for e in events)


def test_no_reference_no_shift_and_a_reached_bound_is_optimal(ft06: Instance) -> None:
    start = dispatch(ft06, "spt")
    result = improve(SolveRequest(ft06, time_limit=0.5, seed=3), start, bound=start.makespan)
    # Already at the bound: no move at all, the (left-shifted) incumbent back, proven optimal against it.
    assert result.total_shift is None and result.status is SolveStatus.OPTIMAL
    assert result.objective == result.bound == start.makespan and not result.improved
    assert result.limits["solves"] == 0


def test_the_same_seed_gives_the_same_plan(ft06: Instance) -> None:
    start = dispatch(ft06, "spt")
    runs = [improve(SolveRequest(ft06, time_limit=0.3, seed=9), start, config=LnsConfig(machines_share=0.3))
            for _ in range(2)]
    assert runs[0].schedule == runs[1].schedule and runs[0].limits == runs[1].limits


def test_wall_clock_budget_on_several_workers(ft06: Instance) -> None:
    # deterministic=False: each move's solver gets the request's workers (one only under a deterministic
    # limit). Nothing about time is asserted, only that the run completes valid and never worse.
    start = dispatch(ft06, "spt")
    result = improve(SolveRequest(ft06, time_limit=0.3, seed=1, workers=2, deterministic=False), start,
                     config=LnsConfig(initial_size=12, move_time=0.1))
    assert validate(ft06, result.schedule).valid and result.objective <= start.makespan
    assert result.limits["deterministic"] is False and result.limits["search_workers"] == 2


def test_a_move_no_worse_in_both_measures_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # "Kept when the makespan, then the sum of job completion times, is no worse": a tie is taken, so the
    # search can walk across plateaus. Two equal jobs on one machine: either order has makespan 4 and
    # completions 2 + 4; the move offers job 1 first, and the result is that order.
    pair = Instance(name="pair", jobs=[[(0, 2)], [(0, 2)]])
    first = dispatch(pair, "spt")
    assert first.by_key()[0, 0].start == 0
    seqs = Sequences.from_schedule(pair, first, durations={})
    other = seqs.resequenced({0: 1, 1: 0})
    assert other is not None and (other.makespan, other.completion) == (seqs.makespan, seqs.completion) == (4, 6)

    def move(seqs: Sequences, relaxed: list[int], time_limit: float, workers: int, seed: int,
             clock: SearchClock) -> tuple[Sequences, bool] | None:
        clock.charge_nothing()
        return other, False

    monkeypatch.setattr(lns, "_move", move)
    result = improve(SolveRequest(pair, time_limit=0.06, seed=1), first)
    assert result.schedule.starts() == {(0, 0): 2, (1, 0): 0}
    assert result.objective == 4 and not result.improved
