"""LCRP: never worse than AOR, edits only inside its neighbourhood, never returns an invalid plan."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import pairwise

import pytest

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.jssp.repair import lower_bound, repair
from alas_argo.jssp.repair.bounds import cheap_bound
from alas_argo.jssp.repair.lcrp import lcrp
from alas_argo.jssp.repair.metrics import moved_keys
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.stabilizing import weighted_moves
from alas_argo.jssp.repair.tabu import ITERATIONS, MIN_ITERATIONS, SECONDS_PER_OPERATION_ITERATION
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


@pytest.fixture(scope="module")
def la01() -> tuple[Instance, Schedule]:
    inst = get_instance("la01")
    return inst, optimize(SolveRequest(inst, time_limit=1.0, workers=1)).schedule


def _validator(inst: Instance, plan: Schedule, d: Disruption) -> Callable[[Schedule], bool]:
    return lambda s: validate(inst, s, disruption=d, baseline=plan).valid


@pytest.mark.parametrize("kind", ["breakdown", "shock", "mixed"])
def test_lcrp_stays_in_its_neighbourhood_and_beats_aor(la01: tuple[Instance, Schedule], kind: str) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, kind, seed=1)
    st = ExecutionState.at(inst, plan, d)
    out = lcrp(st, budget=1.0, is_valid=_validator(inst, plan, d))
    assert validate(inst, out.schedule, disruption=d, baseline=plan).valid
    assert out.schedule.makespan <= aor(st).makespan
    assert out.schedule.makespan >= lower_bound(st)
    planned, now = plan.starts(), out.schedule.starts()
    outside = set(planned) - out.neighbourhood
    assert outside, "the neighbourhood should not be the whole plan on this case"
    assert all(now[k] == planned[k] for k in outside)
    assert moved_keys(plan, out.schedule) <= out.neighbourhood


def test_lcrp_keeps_more_in_place_than_aor_on_a_breakdown(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = Disruption(time=150, events=[MachineBreakdown(machine=0, start=150, duration=80)])
    a = repair(inst, plan, d, "aor")
    r = repair(inst, plan, d, "lcrp", budget=2.0)
    assert r.makespan <= a.makespan
    assert (r.makespan, r.moved_operations) < (a.makespan, a.moved_operations)
    assert r.edit_radius >= r.moved_operations and r.edit_machines


def test_rejected_steps_never_come_back(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "breakdown", seed=2)
    st = ExecutionState.at(inst, plan, d)
    cheap = aor(st)
    # A validator that only accepts the AOR plan: every CP-SAT step is rejected (here AOR is at the bound, so
    # the fewest-moves solve is the only one).
    out = lcrp(st, budget=0.5, is_valid=lambda s: s.starts() == cheap.starts())
    assert out.schedule.starts() == cheap.starts()
    assert any("rejected" in n for n in out.notes)


def test_rejected_windows_and_fallback_never_come_back(la01: tuple[Instance, Schedule],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "breakdown", seed=2)
    st = ExecutionState.at(inst, plan, d)
    cheap = aor(st)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, False))
    out = lcrp(st, budget=0.5, is_valid=lambda s: s.starts() == cheap.starts())
    assert out.schedule.starts() == cheap.starts()
    assert out.fallback  # no window step was accepted
    assert any(n.startswith("window") and "rejected" in n for n in out.notes)


def test_failing_subproblems_fall_back_to_a_global_resolve(la01: tuple[Instance, Schedule],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    inst, plan = la01
    # Seed 2: a cascade of part of the plan (seed 4's is nearly every free operation, which goes to the
    # re-optimizing search instead of a cascade solve and windows).
    d = generate_disruption(inst, plan, "mixed", seed=2)

    def infeasible(*_a: object, **_k: object) -> None:
        raise InfeasibleError("no room")

    monkeypatch.setattr(lcrp_module, "solve_neighbourhood", infeasible)  # every window
    monkeypatch.setattr(lcrp_module, "optimize", infeasible)  # the cascade's makespan solve
    # The one-machine bound proves the first edit optimal here (748): keep the makespan open.
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    r = repair(inst, plan, d, "lcrp", budget=0.5)
    assert r.fallback and r.valid
    assert r.neighbourhood_growths >= 1
    assert r.makespan <= repair(inst, plan, d, "aor").makespan


def test_a_first_edit_the_one_machine_bound_proves_optimal_stays_local(la01: tuple[Instance, Schedule]) -> None:
    # la01 mixed seed 2: AOR's 748 is 28 above the cheap bound (job chains, loads) and exactly at the
    # one-machine bound, so it is optimal: no cascade solve, no search over every free operation, no going
    # global; the count solve only takes moves back.
    inst, plan = la01
    d = generate_disruption(inst, plan, "mixed", seed=2)
    st = ExecutionState.at(inst, plan, d)
    first = aor(st)
    assert cheap_bound(st) < lower_bound(st) == first.makespan
    out = lcrp(st, budget=1.0, is_valid=_validator(inst, plan, d))
    assert out.schedule.makespan == first.makespan and out.global_reason is None and not out.fallback
    assert not [n for n in out.notes if n.startswith(("cascade", "re-optimizing", "window"))], out.notes
    assert moved_keys(plan, out.schedule) <= moved_keys(plan, first) <= out.neighbourhood


def test_nothing_to_repair(ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    r = repair(ft06, plan, Disruption(time=10), "lcrp")
    assert r.moved_operations == 0 and r.edit_radius == 0 and r.makespan == plan.makespan
    st = ExecutionState.at(ft06, plan, Disruption(time=10))
    out = lcrp(st, budget=1.0, is_valid=lambda s: validate(ft06, s, disruption=Disruption(time=10),
                                                             baseline=plan).valid)
    assert (out.fallback, out.growths, out.notes[-1]) == (False, 0, "nothing to repair")



def _idle_gap(plan: Schedule) -> tuple[int, int, int]:
    """The first idle gap (machine, start, length) of at least 2 between two operations of a machine."""
    ops = {(o.job, o.step): o for o in plan.operations}
    for m, seq in sorted(plan.machine_sequences().items()):
        for a, b in pairwise(seq):
            if ops[b].start - ops[a].end >= 2:
                return m, ops[a].end, ops[b].start - ops[a].end
    raise AssertionError("no idle gap")


def test_an_absorbed_breakdown_above_the_bound_revises_the_plan(ft06: Instance) -> None:
    """A breakdown in idle time moves nothing, but a plan in force far above the bound is searched like any
    local plan (issue 17: ta14 long-breakdown seed 1 stayed 3.5 % above a global re-solve)."""
    plan = dispatch(ft06, "mwkr")
    m, start, length = _idle_gap(plan)
    d = Disruption(time=start, events=[MachineBreakdown(machine=m, start=start, duration=length)])
    st = ExecutionState.at(ft06, plan, d)
    assert aor(st).makespan == plan.makespan and not moved_keys(plan, aor(st))  # absorbed
    assert plan.makespan > lower_bound(st)
    r = repair(ft06, plan, d, "lcrp", budget=2.0)
    assert r.valid and r.makespan < plan.makespan
    assert "moved nothing" in (r.global_reason or "")


def test_an_absorbed_breakdown_on_a_plan_nothing_shortens_moves_nothing(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    m, start, length = _idle_gap(plan)
    d = Disruption(time=start, events=[MachineBreakdown(machine=m, start=start, duration=length)])
    r = repair(inst, plan, d, "lcrp", budget=2.0)
    assert (r.valid, r.makespan, r.moved_operations, r.global_reason) == (True, plan.makespan, 0, None)

def test_the_cascade_is_the_first_neighbourhood(la01: tuple[Instance, Schedule],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "shock", seed=6)
    st = ExecutionState.at(inst, plan, d)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)  # AOR is never provably optimal
    cheap, active = aor(st), redispatch(st)
    first = active if active.makespan < cheap.makespan else cheap  # the first edit
    out = lcrp(st, budget=1.0, is_valid=_validator(inst, plan, d))
    assert any(n.startswith("cascade (") for n in out.notes)
    assert out.schedule.makespan <= first.makespan <= cheap.makespan
    assert validate(inst, out.schedule, disruption=d, baseline=plan).valid
    # On this case the cascade gains (proven optimal inside it): no window runs and nothing outside it moves.
    assert not any(n.startswith("window") for n in out.notes)
    assert out.neighbourhood == moved_keys(plan, first) | st.interrupted | {
        k for k in st.free if st.durations[k] != inst.duration(*k)}
    assert out.growths == 0 and not out.fallback
    planned, now = plan.starts(), out.schedule.starts()
    assert all(now[k] == planned[k] for k in set(planned) - out.neighbourhood)


def test_a_cascade_that_runs_out_of_time_hands_over_to_the_windows(la01: tuple[Instance, Schedule],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "breakdown", seed=3)
    st = ExecutionState.at(inst, plan, d)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, False))  # no gain, nothing proven
    out = lcrp(st, budget=1.0, is_valid=_validator(inst, plan, d))
    assert any(n.startswith("window") for n in out.notes)
    assert validate(inst, out.schedule, disruption=d, baseline=plan).valid
    assert out.schedule.makespan <= aor(st).makespan
    planned, now = plan.starts(), out.schedule.starts()
    assert all(now[k] == planned[k] for k in set(planned) - out.neighbourhood)


@pytest.mark.parametrize("how", ["proven in the cascade", "at the bound"])
def test_a_closed_makespan_goes_straight_to_the_fewest_moves(la01: tuple[Instance, Schedule],
                                                             monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "breakdown", seed=3)
    st = ExecutionState.at(inst, plan, d)
    cheap = aor(st)
    if how == "at the bound":
        monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: cheap.makespan)
    else:
        monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
        monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, True))  # proven: nothing shorter
    seen: list[set[tuple[int, int]]] = []
    real = lcrp_module.stabilized

    def spy(state: ExecutionState, current: Schedule, region: set[tuple[int, int]], seconds: float,
            **kw: object) -> Schedule:
        seen.append(set(region))
        return real(state, current, region, seconds, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(lcrp_module, "stabilized", spy)
    out = lcrp(st, budget=1.0, is_valid=_validator(inst, plan, d))
    assert not any(n.startswith("window") for n in out.notes)
    affected = moved_keys(plan, cheap) | st.interrupted
    assert seen == [affected]  # the stabilization ran once, over the cascade
    assert out.neighbourhood == affected and out.growths == 0 and not out.fallback
    assert out.schedule.makespan == cheap.makespan
    assert validate(inst, out.schedule, disruption=d, baseline=plan).valid
    assert moved_keys(plan, out.schedule) <= affected
    assert len(moved_keys(plan, out.schedule)) < len(moved_keys(plan, cheap))


def test_goes_global_only_when_the_cascade_cannot_reach_what_a_global_solve_does(ft06: Instance) -> None:
    """ft06 under a shock (seed 0): the cascade (9 operations) proves its optimum 68 with everything else
    pinned, above the bound; the global probe reaches 60, and the result says why it went global."""
    plan = dispatch(ft06, "mwkr")
    d = generate_disruption(ft06, plan, "shock", seed=0)
    r = repair(ft06, plan, d, "lcrp", budget=5.0)
    assert r.makespan == 60 < repair(ft06, plan, d, "aor").makespan
    assert r.global_reason is not None and "the cascade (9 operations) stopped at makespan 68" in r.global_reason
    assert r.edit_radius == len(ExecutionState.at(ft06, plan, d).free)
    assert set(r.touched_machines) >= set(r.resequenced_machines) and r.touched_machines
    # On an optimal plan (55) a local edit reaches the global makespan: it stays local, a smaller radius.
    best = optimize(SolveRequest(ft06, time_limit=1.0, workers=1)).schedule
    d = Disruption(time=20, events=[MachineBreakdown(machine=0, start=20, duration=3)])
    local, everything = repair(ft06, best, d, "lcrp", budget=5.0), repair(ft06, best, d, "full", budget=5.0)
    assert local.makespan == everything.makespan == 57 and local.moved_operations < everything.moved_operations
    assert local.global_reason is None and local.edit_radius < len(ExecutionState.at(ft06, best, d).free)


def test_full_says_it_is_global(ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    d = generate_disruption(ft06, plan, "breakdown", seed=0)
    assert repair(ft06, plan, d, "full", budget=0.5).global_reason
    assert repair(ft06, plan, d, "aor").global_reason is None


@pytest.mark.parametrize("kind", ["breakdown", "shock"])
def test_the_budget_bounds_the_whole_repair_the_search_included(kind: str) -> None:
    """The re-optimizing search (and its stretches) runs on top of LCRP's time box, never past the caller's
    budget: `--time-limit` bounds the repair (a 20x15 check case searched 3.7 nominal s under a 0.3 s budget)."""
    inst = get_instance("ft10")
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, kind, seed=0)

    def nominal(budget: float) -> tuple[float, bool]:
        r = repair(inst, plan, d, "lcrp", budget=budget, deterministic=True, first_edit="redispatch")
        return r.limits["nominal_seconds"], r.valid

    assert nominal(10.0)[0] > 0.3  # unbounded, the search takes more than the tight budget below
    spent, valid = nominal(0.1)
    assert valid and spent <= 0.1 + 0.01  # one move's slice of overshoot at most


@pytest.mark.skipif(tabu_kernel() is None, reason="the compiled tabu search is not built")
@pytest.mark.parametrize("kind", ["breakdown", "shock"])
def test_the_budget_bounds_the_tabu_first_edit_too(kind: str) -> None:
    """The tabu first edit (the default) makes no more iterations than the budget pays for, and none under
    MIN_ITERATIONS' worth: a 0.02 s budget once ended 0.0215 nominal s in."""
    inst = get_instance("ft10")
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, kind, seed=0)
    state = ExecutionState.at(inst, plan, d)
    full = SECONDS_PER_OPERATION_ITERATION * ITERATIONS * len(state.free)
    r = repair(inst, plan, d, "lcrp", budget=full / 2, deterministic=True)
    said = [n for n in r.notes if n.startswith("tabu first edit")]
    assert r.valid and r.limits["nominal_seconds"] <= full / 2 * 1.01
    made = re.search(r"\((\d+) iterations", said[0]) if len(said) == 1 else None
    assert made and 0 < int(made.group(1)) <= ITERATIONS // 2, said
    # Under MIN_ITERATIONS' worth no search at all (the solves after it have their own 0.01 s floor).
    tiny = SECONDS_PER_OPERATION_ITERATION * (MIN_ITERATIONS - 1) * len(state.free)
    r = repair(inst, plan, d, "lcrp", budget=tiny, deterministic=True)
    said = [n for n in r.notes if n.startswith("tabu first edit")]
    assert r.valid and len(said) == 1 and "the first edit stands" in said[0], said


@pytest.mark.parametrize("kind", ["breakdown", "shock", "mixed"])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_makespan_tolerance_trades_only_within_it(la01: tuple[Instance, Schedule], kind: str, seed: int) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, kind, seed=seed)
    strict = repair(inst, plan, d, "lcrp", budget=2.0, seed=seed)
    traded = repair(inst, plan, d, "lcrp", budget=2.0, seed=seed, tolerance=0.02)
    st = ExecutionState.at(inst, plan, d)
    # The trade is the last stage: before it the two repairs are the same, so the limit is the strict makespan's.
    assert traded.valid
    assert traded.makespan <= math.floor(strict.makespan * 1.02)
    assert weighted_moves(st, traded.schedule) <= weighted_moves(st, strict.schedule)
    assert traded.limits["tolerance"] == 0.02 and "tolerance" not in strict.limits
    # Every free operation may move in the trade: the neighbourhood reported covers whatever it moved.
    out = lcrp(st, budget=2.0, seed=seed, is_valid=_validator(inst, plan, d), tolerance=0.02)
    assert out.schedule == traded.schedule
    assert moved_keys(plan, out.schedule) <= out.neighbourhood


@pytest.mark.parametrize(("name", "kind", "seed"),
                         [("la01", "breakdown", 0), ("la01", "shock", 1), ("ft10", "shock", 0)])
def test_effort_above_one_buys_fewer_moves_at_the_same_makespan(name: str, kind: str, seed: int,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Above effort 1 the count over every free operation runs with no tolerance too (STABILITY_FROM): on these
    cases it keeps fewer operations moved than the stabilization over the moved ones alone, at the same makespan;
    the default effort keeps its time box and has no such stage."""
    inst = get_instance(name)
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, kind, seed=seed)
    st = ExecutionState.at(inst, plan, d)
    staged = repair(inst, plan, d, "lcrp", budget=2.0, seed=seed, effort=2)
    monkeypatch.setattr(lcrp_module, "STABILITY_FROM", 100.0)
    unstaged = repair(inst, plan, d, "lcrp", budget=2.0, seed=seed, effort=2)
    said = "effort 2: every free operation may move for fewer moves"
    assert staged.valid and staged.makespan == unstaged.makespan
    assert weighted_moves(st, staged.schedule) < weighted_moves(st, unstaged.schedule)
    assert any(n.startswith(said) for n in staged.notes) and not any(n.startswith(said) for n in unstaged.notes)
    monkeypatch.undo()
    # Every free operation may move in it: the neighbourhood reported covers whatever it moved.
    out = lcrp(st, budget=2.0, seed=seed, effort=2, is_valid=_validator(inst, plan, d))
    assert out.schedule == staged.schedule and moved_keys(plan, out.schedule) <= out.neighbourhood
    default = repair(inst, plan, d, "lcrp", budget=2.0, seed=seed)
    assert not any(n.startswith("effort") for n in default.notes)


def test_a_makespan_tolerance_buys_fewer_moves(la01: tuple[Instance, Schedule]) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "mixed", seed=0)
    strict = repair(inst, plan, d, "lcrp", budget=2.0)
    traded = repair(inst, plan, d, "lcrp", budget=2.0, tolerance=0.02)
    assert traded.moved_operations < strict.moved_operations
    assert strict.makespan < traded.makespan <= math.floor(strict.makespan * 1.02)
    assert any(n.startswith("fewest moves") and f"makespan {strict.makespan} -> {traded.makespan}" in n
               for n in traded.notes)
    # The other methods ignore it.
    assert repair(inst, plan, d, "aor", tolerance=0.02).schedule == repair(inst, plan, d, "aor").schedule



def test_the_neighbourhood_covers_what_the_trade_moved_outside_the_local_edit() -> None:
    inst = get_instance("ft06")
    plan = optimize(SolveRequest(inst, time_limit=1.0, workers=1)).schedule
    d = generate_disruption(inst, plan, "breakdown", seed=4)
    st = ExecutionState.at(inst, plan, d)
    local = lcrp(st, budget=2.0, seed=4, is_valid=_validator(inst, plan, d))
    traded = lcrp(st, budget=2.0, seed=4, is_valid=_validator(inst, plan, d), tolerance=0.02)
    moved = moved_keys(plan, traded.schedule)
    assert moved - local.neighbourhood, "on this case the trade moves operations the local edit kept"
    assert moved <= traded.neighbourhood

@pytest.mark.parametrize("tolerance", [-0.001, 0.11, math.nan])
def test_an_unusable_tolerance_is_refused(la01: tuple[Instance, Schedule], tolerance: float) -> None:
    inst, plan = la01
    d = generate_disruption(inst, plan, "mixed", seed=0)
    with pytest.raises(InputError, match="tolerance must be in"):
        repair(inst, plan, d, "lcrp", tolerance=tolerance)
