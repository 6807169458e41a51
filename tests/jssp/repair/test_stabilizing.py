"""Pulling a repaired plan back towards the plan in force: held operations stay, moves never grow."""

from __future__ import annotations

import pytest

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair import stabilizing
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations
from alas_argo.jssp.repair.resolving import full
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.stabilizing import MIN_SECONDS, settled, stabilized
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate


def _case() -> tuple[ExecutionState, Disruption, Schedule]:
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=120, events=[MachineBreakdown(machine=1, start=120, duration=70)])
    st = ExecutionState.at(inst, plan, d)
    # A makespan-only re-solve: short, and careless about where it puts operations.
    return st, d, full(st, aor(st), budget=0.5, workers=1).schedule


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
    assert notes and notes[-1].startswith("fewest moves")
    # No time, no model: the plan comes back untouched.
    assert stabilized(st, plan, region, MIN_SECONDS / 2, seed=0, workers=1, is_valid=is_valid, notes=[]) is plan


def test_settled_never_returns_a_plan_the_validator_rejects() -> None:
    st, d, plan = _case()
    assert settled(st, plan, plan.makespan, set(), lambda _p: False) is plan
    kept = settled(st, plan, plan.makespan, set(), lambda p: validate(st.instance, p, disruption=d,
                                                                       baseline=st.baseline).valid)
    assert moved_operations(st.baseline, kept) <= moved_operations(st.baseline, plan)


def test_many_moved_operations_are_counted_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    st, d, plan = _case()
    base = st.baseline
    region = set(st.free)
    freed: list[int] = []
    real = stabilizing.fewest_moves

    def spy(request: SolveRequest, reference: dict[tuple[int, int], int],
            weights: dict[tuple[int, int], int] | None = None) -> Schedule | None:
        freed.append(st.instance.num_operations - len(request.fixed))
        return real(request, reference, weights)

    monkeypatch.setattr(stabilizing, "CHUNK", 8)
    monkeypatch.setattr(stabilizing, "fewest_moves", spy)
    notes: list[str] = []

    def is_valid(p: Schedule) -> bool:
        return validate(st.instance, p, disruption=d, baseline=base).valid

    assert moved_operations(base, plan) > 2 * 8
    out = stabilized(st, plan, region, 1.0, seed=0, workers=1, is_valid=is_valid, notes=notes)
    assert len(freed) >= 2 and max(freed[:2]) <= 8  # the first pass: chunks, not all of them at once
    assert is_valid(out) and out.makespan <= plan.makespan
    assert moved_operations(base, out) < moved_operations(base, plan)
    assert notes[-1].startswith("fewest moves") and f"({len(freed)} count solves)" in notes[-1]


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
    plan moves plus every operation of a few random jobs; the result is reproducible and never worse."""
    st, d, plan = _case()
    base = st.baseline
    planned = base.starts()
    region = set(st.free)
    freed: list[tuple[set[tuple[int, int]], set[tuple[int, int]]]] = []
    real = stabilizing.fewest_moves

    def spy(request: SolveRequest, reference: dict[tuple[int, int], int],
            weights: dict[tuple[int, int], int] | None = None) -> Schedule | None:
        assert request.hint is not None
        hint = request.hint.starts()
        freed.append((region - set(request.fixed), {k for k in region if hint[k] != planned[k]}))
        return real(request, reference, weights)

    monkeypatch.setattr(stabilizing, "fewest_moves", spy)

    def is_valid(p: Schedule) -> bool:
        return validate(st.instance, p, disruption=d, baseline=base).valid

    def trade() -> Schedule:
        return stabilized(st, plan, region, 1.0, seed=3, workers=1, is_valid=is_valid, notes=[], every=True,
                          chunk=300, makespan_limit=plan.makespan, clock=SearchClock())

    out = trade()
    assert is_valid(out) and out.makespan <= plan.makespan
    assert stabilizing.weighted_moves(st, out) <= stabilizing.weighted_moves(st, plan)
    (first, _), *rest = freed
    assert first == region and len(rest) >= 2
    assert any(editable < region for editable, _ in rest)
    for editable, moved in rest:
        assert moved <= editable <= region
        jobs = {j for j, _ in editable - moved}
        assert len(jobs) <= stabilizing.NEIGHBOURHOOD_JOBS
        assert {k for k in region if k[0] in jobs} <= editable  # whole jobs, not a few of their operations
    calls = len(freed)
    assert trade() == out and len(freed) == 2 * calls  # seeded: the same neighbourhoods, the same plan
