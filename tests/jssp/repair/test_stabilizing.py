"""Pulling a repaired plan back towards the plan in force: held operations stay, moves never grow."""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

import pytest

from alas_argo.jssp import searching
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair, stabilizing
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations
from alas_argo.jssp.repair.resolving import full
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.stabilizing import MIN_SECONDS, settled, stabilized
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate
from tests.jssp.strategies import plan_at


def _case() -> tuple[ExecutionState, Disruption, Schedule]:
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=120, events=[MachineBreakdown(machine=1, start=120, duration=70)])
    st = ExecutionState.at(inst, plan, d)
    # A makespan-only re-solve: short, and careless about where it puts operations.
    return st, d, full(st, aor(st), budget=0.5, workers=1).schedule


def _mild_case() -> tuple[ExecutionState, Disruption, Schedule]:
    """la01, a short breakdown late: the all-operations-right-shift repair moves 20 of 34 free operations, and
    every job keeps some operation at its planned start (what tells chosen jobs apart from the others)."""
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=200, events=[MachineBreakdown(machine=1, start=200, duration=30)])
    st = ExecutionState.at(inst, plan, d)
    return st, d, aor(st)


def _validator(st: ExecutionState, d: Disruption) -> Callable[[Schedule], bool]:
    return lambda p: validate(st.instance, p, disruption=d, baseline=st.baseline).valid


def _delayed(plan: Schedule, key: tuple[int, int]) -> Schedule:
    """``plan`` with one operation started a unit later."""
    ops = [o.model_copy(update={"start": o.start + 1, "end": o.end + 1}) if o.key == key else o
           for o in plan.operations]
    return Schedule.from_operations(plan.instance, ops)


def test_stabilized_moves_fewer_and_holds_everything_outside_its_region() -> None:
    st, d, plan = _case()
    base = st.baseline
    planned = base.starts()
    # The late part: there the re-solve moved operations it did not have to.
    region = {k for k in st.free if planned[k] >= 400}
    notes: list[str] = []

    def is_valid(p: Schedule) -> bool:
        return validate(st.instance, p, disruption=d, baseline=base).valid

    out = stabilized(st, plan, region, 1.0, seed=0, workers=1, is_valid=is_valid, notes=notes)
    assert is_valid(out) and out.makespan <= plan.makespan
    assert moved_operations(base, out) < moved_operations(base, plan)
    assert all(out.starts()[k] == plan.starts()[k] for k in st.free - region)
    # At the same makespan the note says how many moved before and after, and nothing of a makespan.
    assert out.makespan == plan.makespan
    said = re.fullmatch(r"fewest moves in \d+\.\d\d s \(\d+ count solves\): (\d+) -> (\d+) moved", notes[-1])
    assert said is not None
    assert [int(x) for x in said.groups()] == [moved_operations(base, plan), moved_operations(base, out)]
    # No time, no model: the plan comes back untouched.
    assert stabilized(st, plan, region, MIN_SECONDS / 2, seed=0, workers=1, is_valid=is_valid, notes=[]) is plan


def test_settled_never_returns_a_plan_the_validator_rejects() -> None:
    st, d, plan = _case()
    assert settled(st, plan, plan.makespan, set(), lambda _p: False) is plan
    kept = settled(st, plan, plan.makespan, set(), lambda p: validate(st.instance, p, disruption=d,
                                                                       baseline=st.baseline).valid)
    assert moved_operations(st.baseline, kept) <= moved_operations(st.baseline, plan)


def test_a_moved_operation_of_the_work_in_progress_counts_wip_weight_times() -> None:
    st, _d, plan = _mild_case()
    moved = moved_keys(st.baseline, plan)
    wip_moved = len(moved & st.wip())
    assert 0 < wip_moved < len(moved)  # the case moves both kinds
    assert stabilizing.weighted_moves(st, plan) == len(moved) + (stabilizing.WIP_WEIGHT - 1) * wip_moved
    assert stabilizing.weighted_moves(st, st.baseline) == 0


def test_settled_puts_back_a_needless_move_unless_it_is_held() -> None:
    st, d, plan = _mild_case()
    is_valid, base, planned = _validator(st, d), st.baseline, st.baseline.starts()
    still = [k for k in sorted(st.free) if plan.starts()[k] == planned[k]]
    # The first operation at its planned start that can start a unit later at the same makespan.
    key = next(k for k in still if is_valid(_delayed(plan, k)) and _delayed(plan, k).makespan == plan.makespan)
    late = _delayed(plan, key)
    assert moved_operations(base, late) == moved_operations(base, plan) + 1
    back = settled(st, late, late.makespan, set(), is_valid)
    assert back.starts()[key] == planned[key] and moved_operations(base, back) == moved_operations(base, plan)
    assert back.makespan <= late.makespan
    # Held where ``late`` has it: nothing to gain, and ``late`` itself comes back.
    assert settled(st, late, late.makespan, {key}, is_valid) is late
    # Holding another operation (kept in place anyway) does not stop the one that can go back.
    other = next(k for k in still if k != key)
    also = settled(st, late, late.makespan, {other}, is_valid)
    assert also.starts()[key] == planned[key] and also.starts()[other] == late.starts()[other]


def test_a_plan_that_cannot_move_less_comes_back_itself_and_unnoted() -> None:
    st, d, plan = _mild_case()
    is_valid = _validator(st, d)
    calm = stabilized(st, plan, set(st.free), 1.0, seed=0, workers=1, is_valid=is_valid, notes=[])
    assert moved_operations(st.baseline, calm) < moved_operations(st.baseline, plan)
    notes: list[str] = []
    # Counted again: at best as many moves, and a plan that only ties is not taken (nor noted).
    assert stabilized(st, calm, set(st.free), 1.0, seed=0, workers=1, is_valid=is_valid, notes=notes) is calm
    assert notes == []


def test_a_makespan_limit_above_the_plan_buys_fewer_moves_and_the_note_says_what_it_cost() -> None:
    st, d, plan = _case()
    is_valid, base = _validator(st, d), st.baseline

    def trade(limit: int, notes: list[str]) -> Schedule:
        return stabilized(st, plan, set(st.free), 1.0, seed=0, workers=1, is_valid=is_valid, notes=notes,
                          every=True, chunk=300, makespan_limit=limit, clock=SearchClock())

    at_plan = trade(plan.makespan, [])
    limit = int(plan.makespan * 1.05)
    notes: list[str] = []
    traded = trade(limit, notes)
    assert is_valid(traded) and plan.makespan < traded.makespan <= limit
    assert moved_operations(base, traded) < moved_operations(base, at_plan) <= moved_operations(base, plan)
    assert notes[-1].endswith(f"moved, makespan {plan.makespan} -> {traded.makespan}")


def test_a_count_the_validator_rejects_leaves_the_plan_and_says_so() -> None:
    st, _d, plan = _case()
    notes: list[str] = []
    assert stabilized(st, plan, set(st.free), 1.0, seed=0, workers=1, is_valid=lambda _p: False,
                      notes=notes) is plan
    assert notes == ["fewest moves: candidate rejected by the validator"]


def test_many_moved_operations_are_counted_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    st, d, plan = _case()
    base = st.baseline
    region = set(st.free)
    freed: list[int] = []
    real = stabilizing.fewest_moves

    chunks: list[set[tuple[int, int]]] = []

    def spy(request: SolveRequest, reference: dict[tuple[int, int], int],
            weights: dict[tuple[int, int], int] | None = None) -> Schedule | None:
        freed.append(st.instance.num_operations - len(request.fixed))
        chunks.append(region - set(request.fixed))
        return real(request, reference, weights)

    monkeypatch.setattr(stabilizing, "CHUNK", 8)
    monkeypatch.setattr(stabilizing, "fewest_moves", spy)
    notes: list[str] = []

    def is_valid(p: Schedule) -> bool:
        return validate(st.instance, p, disruption=d, baseline=base).valid

    moved = moved_operations(base, plan)
    assert moved > 2 * 8
    out = stabilized(st, plan, region, 1.0, seed=0, workers=1, is_valid=is_valid, notes=notes)
    # The first pass: consecutive chunks of 8 of the moved operations, not all of them at once; it gains, so a
    # second pass follows with the boundaries shifted by half a chunk (its first chunk is 4).
    first = [min(8, moved - i) for i in range(0, moved, 8)]
    assert freed[:len(first)] == first
    assert freed[len(first):len(first) + 2] == [4, 8]
    planned = base.starts()
    for earlier, later in pairwise(chunks[:len(first)]):  # consecutive planned starts, in order
        assert max((planned[k], k) for k in earlier) < min((planned[k], k) for k in later)
    assert is_valid(out) and out.makespan <= plan.makespan
    assert moved_operations(base, out) < moved_operations(base, plan)
    assert notes[-1].startswith("fewest moves") and f"({len(freed)} count solves)" in notes[-1]


def test_chunks_stop_when_the_time_box_is_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each count charged 0.02 nominal s: of 0.1 s, four chunks of the first pass run (the fifth would start with
    0.02 s left, under MIN_SECONDS) and what they found comes back."""
    st, d, plan = _case()
    real = stabilizing.fewest_moves
    solves: list[float] = []

    def costly(request: SolveRequest, reference: dict[tuple[int, int], int],
               weights: dict[tuple[int, int], int] | None = None) -> Schedule | None:
        clock = request.search_clock()
        began = clock.now()
        solves.append(began)
        found = real(request, reference, weights)
        clock.charge_at_least(began, 0.02)
        return found

    monkeypatch.setattr(stabilizing, "CHUNK", 8)
    monkeypatch.setattr(stabilizing, "fewest_moves", costly)
    clock = SearchClock()
    out = stabilized(st, plan, set(st.free), 0.1, seed=0, workers=1, is_valid=_validator(st, d), notes=[],
                     clock=clock)
    assert moved_operations(st.baseline, plan) > 5 * 8  # a first pass of six chunks, had there been time
    assert len(solves) == 4 and clock.now() == pytest.approx(0.08)
    assert isinstance(out, Schedule) and _validator(st, d)(out)
    assert moved_operations(st.baseline, out) <= moved_operations(st.baseline, plan)


@pytest.mark.parametrize("charge_from", [0, 5, 10**6])
def test_count_solves_on_large_instances_are_charged_for_the_operations_they_hold(
        monkeypatch: pytest.MonkeyPatch, charge_from: int) -> None:
    """la01 stands in for a large instance (the threshold lowered): each count solve is charged at least
    COUNT_CHARGE_PER_OP per free operation beyond searching.UNCHARGED_OPERATIONS, here 0.03 nominal s, so a
    time box of 0.1 s runs three; at a threshold above la01's free operations the charges are CP-SAT's alone,
    and more fit."""
    st, d, plan = _case()
    held = max(0, len(st.free) - charge_from)
    charged: list[float] = []
    real = stabilizing._fewest

    def recorded(*args: object) -> Schedule:
        clock = args[7]
        assert isinstance(clock, SearchClock)
        began = clock.now()
        out = real(*args)  # type: ignore[arg-type]
        charged.append(clock.now() - began)
        return out

    monkeypatch.setattr(stabilizing, "CHUNK", 8)
    monkeypatch.setattr(searching, "UNCHARGED_OPERATIONS", charge_from)
    monkeypatch.setattr(stabilizing, "COUNT_CHARGE_PER_OP", 0.03 / max(1, held))
    monkeypatch.setattr(stabilizing, "_fewest", recorded)
    stabilized(st, plan, set(st.free), 0.1, seed=0, workers=1, is_valid=_validator(st, d), notes=[],
               clock=SearchClock())
    if held:
        assert len(charged) == 3 and all(c >= 0.03 for c in charged)
    else:
        assert len(charged) > 3 and min(charged) < 0.03


def test_moving_work_in_progress_costs_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """ft06, mixed seed 5: at the same makespan and as many moved operations, the WIP term keeps one more
    started-or-next operation in place (measured: 4 WIP moved without the term, 3 with it)."""
    inst = get_instance("ft06")
    base = dispatch(inst, "mwkr")
    d = generate_disruption(inst, base, "mixed", seed=5)
    st = ExecutionState.at(inst, base, d)
    plan = full(st, aor(st), budget=1.0, workers=1).schedule
    counts: dict[int, tuple[int, int]] = {}
    for weight in (1, stabilizing.WIP_WEIGHT):
        monkeypatch.setattr(stabilizing, "WIP_WEIGHT", weight)
        out = stabilizing.stabilized(st, plan, set(st.free), 2.0, seed=0, workers=1, notes=[], clock=SearchClock(),
                                     is_valid=lambda p: validate(inst, p, disruption=d, baseline=base).valid)
        assert out.makespan <= plan.makespan
        moved = moved_keys(base, out)
        counts[weight] = (len(moved), len(moved & st.wip()))
    assert stabilizing.WIP_WEIGHT > 1
    assert counts == {1: (14, 4), stabilizing.WIP_WEIGHT: (14, 3)}


def test_a_trade_counts_over_the_moved_operations_and_whole_random_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``every`` (LCRP's trade stage), after one count over the whole region the counts free only what the
    plan moves plus every operation of a few random jobs, each from the plan the last one left; the result is
    reproducible (the same neighbourhoods for the same seed) and never worse."""
    st, d, plan = _mild_case()
    base = st.baseline
    planned = base.starts()
    region = set(st.free)
    Keys = set[tuple[int, int]]
    freed: list[tuple[Keys, Keys, dict[tuple[int, int], int]]] = []
    real = stabilizing.fewest_moves

    def spy(request: SolveRequest, reference: dict[tuple[int, int], int],
            weights: dict[tuple[int, int], int] | None = None) -> Schedule | None:
        assert request.hint is not None
        hint = request.hint.starts()
        freed.append((region - set(request.fixed), {k for k in region if hint[k] != planned[k]}, hint))
        return real(request, reference, weights)

    monkeypatch.setattr(stabilizing, "fewest_moves", spy)
    # A first count too short to finish, so that the neighbourhoods have moves left to win.
    monkeypatch.setattr(stabilizing, "NEIGHBOURHOOD_FIRST", 0.001)
    # The trade's own chunk (300: every operation at once) decides, not the stabilization's.
    monkeypatch.setattr(stabilizing, "CHUNK", 8)
    is_valid = _validator(st, d)

    def trade() -> Schedule:
        return stabilized(st, plan, region, 1.0, seed=3, workers=1, is_valid=is_valid, notes=[], every=True,
                          chunk=300, makespan_limit=plan.makespan, clock=SearchClock())

    out = trade()
    assert is_valid(out) and out.makespan <= plan.makespan
    assert stabilizing.weighted_moves(st, out) < stabilizing.weighted_moves(st, plan)
    (first, _, _), *rest = freed
    assert first == region and len(rest) >= 2
    for editable, moved, _ in rest:
        assert moved <= editable < region
        jobs = {j for j, _ in editable - moved}
        assert 1 <= len(jobs) <= stabilizing.NEIGHBOURHOOD_JOBS
        assert {k for k in region if k[0] in jobs} <= editable  # whole jobs, not a few of their operations
    # Each count starts from the plan the counts before it left, not from the plan before the neighbourhoods.
    assert len({tuple(sorted(hint.items())) for _, _, hint in rest}) > 1
    neighbourhoods = [editable for editable, _, _ in freed]
    freed.clear()
    assert trade() == out and [editable for editable, _, _ in freed] == neighbourhoods  # seeded


def test_settled_keeps_what_settling_gains_when_restoring_more_would_end_later() -> None:
    """la02 (a dispatching plan), the generator's breakdown seed 1, a 0.3 s makespan-only re-solve: restoring
    every needless move would end the plan later (860 against 789), so only those that end by its makespan go
    back; what settling and they gain is kept, and an operation the caller holds stays put."""
    inst = get_instance("la02")
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, "breakdown", seed=1)
    st = ExecutionState.at(inst, plan, d)
    careless = full(st, aor(st), budget=0.3, workers=1).schedule
    is_valid = _validator(st, d)
    out = settled(st, careless, careless.makespan, set(), is_valid)
    assert is_valid(out) and out.makespan <= careless.makespan
    assert moved_operations(plan, out) < moved_operations(plan, careless)
    back = [k for k in sorted(st.free) if out.starts()[k] != careless.starts()[k]]
    held = {back[0]}
    kept = settled(st, careless, careless.makespan, held, is_valid)
    assert kept.starts()[back[0]] == careless.starts()[back[0]]
    assert is_valid(kept) and moved_operations(plan, kept) < moved_operations(plan, careless)


def test_a_count_that_moves_more_operations_but_less_work_in_progress_says_so() -> None:
    """A small random case (7 jobs, 3 machines, machine 0 down for 6 at 24) repaired with a tolerance of 0.02: the
    trade's count keeps work in progress in place by moving one more operation (3 -> 4 moved, weighted 9 -> 7, at
    the same makespan). The note gives the weighted counts, not just a count that went up."""
    inst = Instance(name="random", jobs=[
        [(2, 6), (1, 11), (0, 3)], [(1, 19), (2, 10), (0, 12)], [(1, 14), (0, 4), (2, 5)], [(2, 3), (0, 19), (1, 6)],
        [(0, 20), (1, 18), (2, 13)], [(2, 2), (0, 12), (1, 16)], [(2, 14), (1, 15), (0, 1)]])
    starts = {(1, 0): 0, (4, 0): 0, (5, 0): 0, (6, 0): 2, (3, 0): 16, (1, 1): 19, (4, 1): 20, (5, 1): 20, (0, 0): 29,
              (3, 1): 32, (2, 0): 38, (4, 2): 38, (1, 2): 51, (5, 2): 52, (2, 1): 63, (2, 2): 67, (6, 1): 68,
              (0, 1): 83, (6, 2): 83, (0, 2): 94, (3, 2): 94}
    plan = plan_at(inst, starts)
    d = Disruption(time=24, events=[MachineBreakdown(machine=0, start=24, duration=6)])
    st = ExecutionState.at(inst, plan, d)
    untraded = repair(inst, plan, d, "lcrp", budget=2, workers=1)
    traded = repair(inst, plan, d, "lcrp", budget=2, workers=1, tolerance=0.02)
    assert (untraded.makespan, untraded.moved_operations, stabilizing.weighted_moves(st, untraded.schedule)) == (
        100, 3, 9)
    assert (traded.makespan, traded.moved_operations, stabilizing.weighted_moves(st, traded.schedule)) == (100, 4, 7)
    assert re.fullmatch(r"fewest moves in \d+\.\d\d s \(\d+ count solves\): 3 -> 4 moved "
                        r"\(weighted, work in progress x4: 9 -> 7\)", traded.notes[-1])
