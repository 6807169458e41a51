"""The repair method dispatch, edge by edge: which strategy runs, what it is handed, and what it hands back.

``_REPAIRERS`` is built when the module is imported, so these tests also build each strategy afresh from the
module's factories (``_shifting``, ``_resolving``) and check that the registered ones behave the same: a change
to a factory's body is then seen by a test, not only by the copy made at import. The CP-SAT calls are spied on
(wrapping the real solve) or replaced by one that raises, to see the exact arguments and both fallbacks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from alas_argo.errors import InfeasibleError, InputError, NoSolutionError
from alas_argo.jssp.cpsat import SolveResult
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import methods
from alas_argo.jssp.repair.methods import RepairMethod, get_repairer
from alas_argo.jssp.repair.metrics import moved_keys
from alas_argo.jssp.repair.result import RepairOutcome
from alas_argo.jssp.repair.shifting import aor, right_shift
from alas_argo.jssp.repair.tabu import DEFAULT_FIRST_EDIT
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock

GLOBAL = "a global re-solve: every free operation may move"


def _valid(plan: Schedule) -> bool:
    return True


@pytest.fixture
def state(ft06: Instance) -> ExecutionState:
    # "mixed", seed 3: a breakdown interrupts one started operation, 24 operations are free.
    plan = dispatch(ft06, "mwkr")
    s = ExecutionState.at(ft06, plan, generate_disruption(ft06, plan, "mixed", seed=3))
    assert s.interrupted and len(s.free) > len(s.interrupted)
    return s


def _run(repairer: methods.Repairer, state: ExecutionState, **kw: Any) -> RepairOutcome:
    return repairer(state, budget=kw.pop("budget", 0.5), seed=kw.pop("seed", 7), workers=kw.pop("workers", 1),
                    is_valid=_valid, **kw)


def test_parse_names_every_known_method_in_order() -> None:
    # The refusal is what a user sees for a typo in --method or a request's "method": the list must be readable.
    with pytest.raises(InputError) as caught:
        RepairMethod.parse("magic")
    assert caught.value.message == "unknown repair method 'magic'; known: right-shift, aor, full, full-stable, lcrp"
    assert RepairMethod.parse("full-stable") is RepairMethod.FULL_STABLE
    assert RepairMethod.parse(RepairMethod.AOR) is RepairMethod.AOR


@pytest.mark.parametrize(("name", "shift"), [("right-shift", right_shift), ("aor", aor)])
def test_shifting_returns_the_methods_plan_and_exactly_what_it_moved(state: ExecutionState, name: str,
                                                                      shift: Callable[[ExecutionState], Schedule]
                                                                      ) -> None:
    fresh = _run(methods._shifting(shift), state)
    plan = shift(state)
    assert fresh.schedule == plan
    assert fresh.neighbourhood == moved_keys(state.baseline, plan)
    assert fresh.neighbourhood > state.interrupted  # more moved than the restarts alone
    assert (fresh.growths, fresh.fallback, fresh.notes, fresh.global_reason) == (0, False, [], None)
    # The registered strategy for the name is this one (right-shift and aor give different plans here).
    assert _run(get_repairer(name), state) == fresh
    assert right_shift(state) != aor(state)


def test_shifting_neighbourhood_includes_restarts_even_where_nothing_moved(state: ExecutionState) -> None:
    # An interrupted operation must restart, so a sequence-keeping repair may touch it even when the plan it
    # hands back happens to keep its start (here: a method that returns the plan in force unchanged).
    out = _run(methods._shifting(lambda s: s.baseline), state)
    assert out.schedule == state.baseline
    assert out.neighbourhood == state.interrupted


@pytest.mark.parametrize(("name", "stable"), [("full", False), ("full-stable", True)])
def test_resolving_solves_from_the_aor_plan_with_every_limit(monkeypatch: pytest.MonkeyPatch,
                                                             state: ExecutionState, name: str, stable: bool
                                                             ) -> None:
    calls: list[tuple[str, tuple[Any, ...], dict[str, Any], SolveResult]] = []

    def spy(label: str, real: Callable[..., SolveResult]) -> Callable[..., SolveResult]:
        def solve(*args: Any, **kw: Any) -> SolveResult:
            result = real(*args, **kw)
            calls.append((label, args, kw, result))
            return result
        return solve

    monkeypatch.setattr(methods, "full", spy("full", methods.full))
    monkeypatch.setattr(methods, "full_stable", spy("full-stable", methods.full_stable))
    clock = SearchClock()
    out = _run(methods._resolving(stable=stable), state, budget=0.5, seed=7, workers=1, clock=clock)
    [(label, args, kw, result)] = calls
    assert label == name
    assert args == (state, aor(state))
    assert kw == {"budget": 0.5, "seed": 7, "workers": 1, "clock": clock}
    assert kw["clock"] is clock
    assert out.schedule == result.schedule
    assert out.neighbourhood == set(state.free)
    assert (out.growths, out.fallback, out.global_reason) == (0, False, GLOBAL)
    assert out.notes == [f"cp-sat {result.status.value}: makespan {result.objective}, bound {result.bound}, "
                         f"{result.seconds:.2f} s"]
    # The registered strategy for the name calls the same solve.
    calls.clear()
    _run(get_repairer(name), state)
    assert [c[0] for c in calls] == [name]


@pytest.mark.parametrize("stable", [False, True])
def test_resolving_without_a_solution_in_time_keeps_the_aor_plan(monkeypatch: pytest.MonkeyPatch,
                                                                 state: ExecutionState, stable: bool) -> None:
    def nothing(*args: Any, **kw: Any) -> SolveResult:
        raise NoSolutionError("no solution in 0.5 s")

    monkeypatch.setattr(methods, "full", nothing)
    monkeypatch.setattr(methods, "full_stable", nothing)
    out = _run(methods._resolving(stable=stable), state)
    assert out.schedule == aor(state)
    assert out.neighbourhood == set(state.free)
    assert out.fallback is True
    assert out.notes == ["no CP-SAT solution in time; the AOR warm start stands"]
    assert out.global_reason == GLOBAL


@pytest.mark.parametrize("stable", [False, True])
def test_resolving_infeasible_says_so_and_keeps_where_and_cause(monkeypatch: pytest.MonkeyPatch,
                                                                state: ExecutionState, stable: bool) -> None:
    original = InfeasibleError("machine 2 is down for good", where={"machine": 2})

    def infeasible(*args: Any, **kw: Any) -> SolveResult:
        raise original

    monkeypatch.setattr(methods, "full", infeasible)
    monkeypatch.setattr(methods, "full_stable", infeasible)
    with pytest.raises(InfeasibleError) as caught:
        _run(methods._resolving(stable=stable), state)
    assert caught.value.message == "the disrupted problem has no solution: machine 2 is down for good"
    assert caught.value.where == {"machine": 2}
    assert caught.value.__cause__ is original


def test_lcrp_hands_every_knob_on_with_the_documented_defaults(monkeypatch: pytest.MonkeyPatch,
                                                               state: ExecutionState) -> None:
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    outcome = RepairOutcome(state.baseline, set())

    def spy(*args: Any, **kw: Any) -> RepairOutcome:
        seen.append((args, kw))
        return outcome

    monkeypatch.setattr(methods, "lcrp", spy)
    repairer = get_repairer("lcrp")
    clock = SearchClock()
    assert _run(repairer, state, budget=2.5, seed=9, workers=3, clock=clock) is outcome
    # effort, tolerance and first edit left out: the Repairer's documented 1.0, 0.0 and redispatch reach LCRP.
    assert seen[-1] == ((state,), {"budget": 2.5, "seed": 9, "workers": 3, "is_valid": _valid, "effort": 1.0,
                                   "tolerance": 0.0, "clock": clock, "first_edit": DEFAULT_FIRST_EDIT})
    _run(repairer, state, budget=1.0, seed=0, workers=2, effort=0.25, tolerance=0.1, first_edit="tabu")
    assert seen[-1] == ((state,), {"budget": 1.0, "seed": 0, "workers": 2, "is_valid": _valid, "effort": 0.25,
                                   "tolerance": 0.1, "clock": None, "first_edit": "tabu"})
