"""LCRP's stages one by one (docs/lcrp.md): the time box, the cascade's acceptance rule, the windows' machine
order and their end, and the one clock every solve is counted on.

Each test pins a rule whose breakage the rest of the suite let through (the lcrp.py mutation run in
bench/README.md, mutation testing): a stage the other tests reach only on paths where the rule makes no
difference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from types import SimpleNamespace

import pytest
from ortools.sat.python import cp_model

from alas_argo.errors import InfeasibleError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveStatus, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.jssp.repair.lcrp import lcrp
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.resolving import disrupted_request
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate

Validator = Callable[[Schedule], bool]


@pytest.fixture(scope="module")
def la01() -> Instance:
    return get_instance("la01")


def _breakdown_case(inst: Instance) -> tuple[Schedule, ExecutionState, Validator]:
    # A weak plan under a breakdown (seed 3): a cascade of part of the free operations, AOR above the bound.
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, "breakdown", seed=3)
    return plan, ExecutionState.at(inst, plan, d), lambda s: validate(inst, s, disruption=d, baseline=plan).valid


def _first_edit(st: ExecutionState) -> Schedule:
    cheap, active = aor(st), redispatch(st)
    return active if active.makespan < cheap.makespan else cheap


# -- the time box -------------------------------------------------------------------------------------------


def test_the_time_box_is_per_free_operation_above_its_floor() -> None:
    """ta01 (15x15) broken down at time 1: 216 free operations, so the per-operation terms pass the floors
    (TOTAL_PER_OP x 216 = 0.216 s > 0.1 s; CASCADE_PER_OP x 216 = 0.130 s > 0.05 s)."""
    inst = get_instance("ta01")
    plan = dispatch(inst, "mwkr")
    st = ExecutionState.at(inst, plan, Disruption(time=1, events=[MachineBreakdown(machine=0, start=1,
                                                                                   duration=10)]))
    n = len(st.free)
    assert n * lcrp_module.TOTAL_PER_OP > lcrp_module.TOTAL_FLOOR
    for effort in (1.0, 3.0):
        total, cascade = lcrp_module._caps(st, budget=30.0, effort=effort)
        assert total == pytest.approx(effort * lcrp_module.TOTAL_PER_OP * n)
        assert cascade == pytest.approx(effort * lcrp_module.CASCADE_PER_OP * n)
    # ... and on a small state the floors hold.
    small = ExecutionState.at(get_instance("ft06"), dispatch(get_instance("ft06"), "mwkr"), Disruption(time=20))
    total, cascade = lcrp_module._caps(small, budget=30.0)
    assert total == lcrp_module.TOTAL_FLOOR and cascade == lcrp_module.CASCADE_FLOOR


def test_the_search_gets_more_time_the_further_the_plan_is_above_the_bound() -> None:
    """The re-optimizing search's seconds: per free operation at the bound, one more share per GAP_UNIT of
    relative gap, at most GAP_MAX_FACTOR shares (ta01 broken down at time 1: 216 free operations)."""
    inst = get_instance("ta01")
    st = ExecutionState.at(inst, dispatch(inst, "mwkr"), Disruption(time=1, events=[
        MachineBreakdown(machine=0, start=1, duration=10)]))
    per_op = lcrp_module.REOPT_PER_OP * len(st.free)
    assert per_op > lcrp_module.REOPT_FLOOR
    bound, unit = 1000, lcrp_module.GAP_UNIT
    assert lcrp_module._search_cap(st, bound, bound, 1.0) == pytest.approx(per_op)
    assert lcrp_module._search_cap(st, round(bound * (1 + unit)), bound, 1.0) == pytest.approx(2 * per_op)
    assert lcrp_module._search_cap(st, round(bound * (1 + 2 * unit)), bound, 3.0) == pytest.approx(9 * per_op)
    assert lcrp_module._search_cap(st, 10 * bound, bound, 1.0) == pytest.approx(
        lcrp_module.GAP_MAX_FACTOR * per_op)
    small = ExecutionState.at(get_instance("ft06"), dispatch(get_instance("ft06"), "mwkr"), Disruption(time=20))
    assert lcrp_module._search_cap(small, 50, 50, 1.0) == lcrp_module.REOPT_FLOOR


def test_the_search_after_the_local_plan_runs_for_its_gap_scaled_time(la01: Instance,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """la01, a weak plan, mixed seed 0 (a cascade of nearly every free operation, so straight to the search):
    the local plan is above the bound when the search starts, and the search gets the gap's extra share on
    top of what it would get at the bound (everything before it is the same on a deterministic clock)."""
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "mixed", seed=0)
    st = ExecutionState.at(la01, plan, d)

    def is_valid(s: Schedule) -> bool:
        return validate(la01, s, disruption=d, baseline=plan).valid
    real = lcrp_module._search

    def run(unit: float) -> tuple[int, float]:
        calls: list[tuple[int, float]] = []

        def recorded(state: ExecutionState, incumbent: Schedule, seconds: float, *a: object,
                     **k: object) -> Schedule | None:
            calls.append((incumbent.makespan, seconds))
            return real(state, incumbent, seconds, *a, **k)  # type: ignore[arg-type]

        with monkeypatch.context() as m:
            m.setattr(lcrp_module, "_search", recorded)
            m.setattr(lcrp_module, "GAP_UNIT", unit)
            lcrp(st, budget=5.0, is_valid=is_valid, clock=SearchClock(), first_edit="redispatch")
        return calls[0]

    bound = lcrp_module.lower_bound(st)
    makespan, scaled = run(lcrp_module.GAP_UNIT)
    same_makespan, plain = run(1e12)  # no gap share
    assert makespan == same_makespan > bound
    extra = lcrp_module._search_cap(st, makespan, bound, 1.0) - lcrp_module._search_cap(st, bound, bound, 1.0)
    assert extra > 0
    assert scaled - plain == pytest.approx(extra)


# -- the windows keep the machine order outside themselves ---------------------------------------------------


def test_only_the_window_is_resequenced() -> None:
    """One machine running six one-step jobs in order f, a, b, c, d, e; f has started (not free), b and c are
    the window: a, d, e keep their order, and b and c stay between a and d."""
    plan = Schedule.from_operations("line", [Operation(job=j, step=0, machine=0, start=j, end=j + 1)
                                           for j in range(6)])
    f, a, b, c, d, e = ((j, 0) for j in range(6))
    free: set[Key] = {a, b, c, d, e}
    arcs = lcrp_module._arcs(plan, {b, c}, free)
    assert sorted(arcs) == sorted([(a, b), (a, c), (a, d), (b, d), (c, d), (d, e)])
    assert all(f not in arc for arc in arcs)


# -- the cascade: a plan is taken only when shorter and valid -----------------------------------------------


def _hold_after_the_cascade(monkeypatch: pytest.MonkeyPatch, cascade_plan: Schedule) -> None:
    """The cascade's solve returns ``cascade_plan``, proven optimal (so no window follows); every later stage
    keeps the plan it is given, so what LCRP returns is the cascade's choice."""
    result = SimpleNamespace(schedule=cascade_plan, objective=cascade_plan.makespan, status=SolveStatus.OPTIMAL,
                             bound=0, seconds=0.0)
    monkeypatch.setattr(lcrp_module, "optimize", lambda _request: result)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)  # the cascade runs
    monkeypatch.setattr(lcrp_module, "reoptimized", lambda *_a, **_k: None)
    monkeypatch.setattr(lcrp_module, "stabilized", lambda _state, current, *_a, **_k: current)
    monkeypatch.setattr(lcrp_module, "settled", lambda _state, current, *_a, **_k: current)


def _nudged(plan: Schedule, after: int, is_valid: Validator) -> Schedule:
    """``plan`` with one operation that starts after ``after`` started one unit later, valid, same makespan."""
    for o in sorted(plan.operations, key=lambda o: o.start):
        if o.start < after or o.end == plan.makespan:
            continue
        moved = Operation(job=o.job, step=o.step, machine=o.machine, start=o.start + 1, end=o.end + 1)
        candidate = Schedule.from_operations(plan.instance, [moved if x is o else x for x in plan.operations])
        if candidate.makespan == plan.makespan and is_valid(candidate):
            return candidate
    raise AssertionError("no operation with slack")


def _cascade_ran(notes: list[str]) -> bool:
    return any(n.startswith("cascade (") and "makespan" in n for n in notes)


def test_a_shorter_cascade_plan_the_validator_rejects_is_not_taken(la01: Instance,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    plan, st, is_valid = _breakdown_case(la01)
    first = _first_edit(st)
    assert plan.makespan < first.makespan and not is_valid(plan)  # the unrepaired plan: shorter, rejected
    _hold_after_the_cascade(monkeypatch, plan)
    out = lcrp(st, budget=1.0, is_valid=is_valid, first_edit="redispatch")
    assert _cascade_ran(out.notes)
    assert out.schedule.starts() == first.starts() and is_valid(out.schedule)


def test_a_cascade_plan_no_shorter_than_the_first_edit_is_not_taken(la01: Instance,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _plan, st, is_valid = _breakdown_case(la01)
    first = _first_edit(st)
    same = _nudged(first, st.time, is_valid)  # valid, as long, another plan
    _hold_after_the_cascade(monkeypatch, same)
    out = lcrp(st, budget=1.0, is_valid=is_valid, first_edit="redispatch")
    assert _cascade_ran(out.notes)
    assert out.schedule.starts() == first.starts() != same.starts()


def test_a_shorter_valid_cascade_plan_is_taken(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of the rule, so the two tests above cannot pass by never taking the cascade's plan."""
    _plan, st, is_valid = _breakdown_case(la01)
    first = _first_edit(st)
    request = replace(disrupted_request(st, pins={}, hint=first, time_limit=1.0, workers=1), deterministic=True)
    shorter = optimize(request).schedule
    assert is_valid(shorter) and shorter.makespan < first.makespan
    _hold_after_the_cascade(monkeypatch, shorter)
    out = lcrp(st, budget=1.0, is_valid=is_valid, first_edit="redispatch")
    assert out.schedule.starts() == shorter.starts()


# -- the windows: a spent box stops them, a step that succeeds is no fallback --------------------------------


def test_a_time_box_spent_before_the_windows_goes_to_the_fallback(la01: Instance,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _plan, st, is_valid = _breakdown_case(la01)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, False))  # to the windows
    out = lcrp(st, budget=0.005, is_valid=is_valid, first_edit="redispatch")
    assert "time box spent" in out.notes
    assert not any(n.startswith("window") for n in out.notes)  # no window solve was started
    assert out.fallback and is_valid(out.schedule) and out.growths == 0


def test_a_window_step_that_succeeds_is_no_fallback(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    _plan, st, is_valid = _breakdown_case(la01)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, False))
    monkeypatch.setattr(lcrp_module, "_search", lambda *_a, **_k: None)
    out = lcrp(st, budget=1.0, is_valid=is_valid, first_edit="redispatch")
    assert any(n.startswith("window") and "editable" in n for n in out.notes)  # a step found a plan
    assert not out.fallback and out.global_reason is None and "global fallback" not in out.notes
    assert is_valid(out.schedule) and out.schedule.makespan <= aor(st).makespan


# -- one clock -----------------------------------------------------------------------------------------------


@pytest.fixture
def charged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SearchClock]]:
    """The clock each CP-SAT solve is charged to, in order."""
    solves: list[SearchClock] = []
    real = SearchClock.charge

    def charge(self: SearchClock, solver: cp_model.CpSolver) -> None:
        solves.append(self)
        real(self, solver)

    monkeypatch.setattr(SearchClock, "charge", charge)
    yield solves


def _infeasible(*_a: object, **_k: object) -> None:
    raise InfeasibleError("no room")


@pytest.mark.parametrize("path", ["cascade and search", "windows", "windows then fallback", "aor rejected"])
def test_every_solve_is_counted_on_the_callers_clock(la01: Instance, monkeypatch: pytest.MonkeyPatch,
                                                     charged: list[SearchClock], path: str) -> None:
    """The time box, and the deterministic time a result records, are the caller's clock's: a stage solving on
    a clock of its own would run outside the box and go unrecorded."""
    _plan, st, is_valid = _breakdown_case(la01)
    expect = {"cascade and search": "cascade (", "windows": "window ", "windows then fallback": "global fallback",
              "aor rejected": "aor plan rejected"}[path]
    if path != "cascade and search":
        monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
        monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, False))
    if path == "windows then fallback":
        monkeypatch.setattr(lcrp_module, "solve_neighbourhood", _infeasible)
    if path == "aor rejected":
        cheap = aor(st)
        monkeypatch.setattr(lcrp_module, "redispatch", lambda _state: cheap)
        real_is_valid = is_valid

        def is_valid(s: Schedule) -> bool:
            return s.starts() != cheap.starts() and real_is_valid(s)

    clock = SearchClock()
    out = lcrp(st, budget=1.0, is_valid=is_valid, clock=clock, first_edit="redispatch")
    assert any(n.startswith(expect) for n in out.notes), out.notes
    assert charged and all(c is clock for c in charged)
    assert clock.solves == len(charged)
    assert is_valid(out.schedule)
    if path == "aor rejected":
        assert out.fallback and out.growths == 0


def test_an_extra_round_stabilizes_what_its_search_found(la01: Instance, monkeypatch: pytest.MonkeyPatch,
                                                         charged: list[SearchClock]) -> None:
    """la01, a weak plan, mixed seed 2, effort 8, the first round's search forced to find nothing: a later
    round's search finds a shorter plan, and that round's stabilization puts operations back at their planned
    start at its makespan; every solve on the caller's clock."""
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "mixed", seed=2)
    st = ExecutionState.at(la01, plan, d)
    real = lcrp_module._search
    calls: list[tuple[object, Schedule | None]] = []

    def nothing_before_the_rounds(*args: object, **kwargs: object) -> Schedule | None:
        # The first search, and the second one from the first edit when it runs, find nothing.
        before_rounds = not calls or kwargs.get("label") is not None
        calls.append((kwargs.get("label"), None if before_rounds else real(*args, **kwargs)))  # type: ignore[arg-type]
        return calls[-1][1]

    monkeypatch.setattr(lcrp_module, "_search", nothing_before_the_rounds)
    clock = SearchClock()
    out = lcrp(st, budget=5.0, effort=8, clock=clock,
               is_valid=lambda s: validate(la01, s, disruption=d, baseline=plan).valid, first_edit="redispatch")
    probe = next(found for label, found in calls[1:] if label is None)
    assert probe is not None and out.global_reason is not None and "of the box left" in out.global_reason
    searched = next(i for i, n in enumerate(out.notes) if n.startswith("re-optimizing search") and "makespan" in n)
    assert any(n.startswith("fewest moves") for n in out.notes[searched:])  # the round's stabilization
    assert out.schedule.makespan <= probe.makespan
    assert moved_operations(plan, out.schedule) < moved_operations(plan, probe)
    assert validate(la01, out.schedule, disruption=d, baseline=plan).valid
    assert charged and all(c is clock for c in charged)
