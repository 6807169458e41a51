"""The repair safety nets, exercised by making the layer inside them misbehave.

Each net only acts when a method goes wrong, so a suite of correct methods never reaches it: here the inner
layer is replaced (monkeypatch) by one that returns a wrong plan, and the net must catch it.

- ``repair()`` validates every method's plan and raises ContractError rather than return one it rejects;
- LCRP's first edit takes the re-dispatched plan only when it is shorter than AOR's (never worse than AOR);
- LCRP's global fallback plan is validated, and the incumbent stays when the validator rejects it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from types import SimpleNamespace

import pytest

import alas_argo.jssp.repair as repair_package
from alas_argo.errors import ContractError, InfeasibleError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import RepairMethod, RepairOutcome, get_repairer, lower_bound, repair
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.jssp.repair.lcrp import lcrp
from alas_argo.jssp.repair.resolving import disrupted_request
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import validate


def _verdict(inst: Instance, plan: Schedule, d: Disruption) -> Callable[[Schedule], bool]:
    return lambda s: validate(inst, s, disruption=d, baseline=plan).valid


def _delayed_last(plan: Schedule, by: int) -> Schedule:
    """``plan`` with the operation that ends last started ``by`` later: still feasible (nothing follows it on
    its job or its machine), ``by`` longer."""
    last = max(plan.operations, key=lambda o: o.end)
    ops = [Operation(job=o.job, step=o.step, machine=o.machine, start=o.start + by, end=o.end + by)
           if o is last else o for o in plan.operations]
    return Schedule.from_operations(plan.instance, ops)


def _shortened(plan: Schedule, reveal: int) -> Schedule:
    """``plan`` with one operation after the reveal one time unit shorter (a wrong duration)."""
    target = next(o for o in plan.operations if o.start >= reveal and o.end - o.start > 1)
    ops = [Operation(job=o.job, step=o.step, machine=o.machine, start=o.start, end=o.end - 1)
           if o is target else o for o in plan.operations]
    return Schedule.from_operations(plan.instance, ops)


# -- repair(): the final validation ------------------------------------------------------------------------


@pytest.mark.parametrize("corruption", ["unrepaired", "wrong duration"])
@pytest.mark.parametrize("method", list(RepairMethod))
def test_a_method_returning_a_rejected_plan_is_a_contract_error(ft06: Instance, method: RepairMethod,
                                                                corruption: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(ft06, "mwkr")
    d = Disruption(time=10, events=[MachineBreakdown(machine=plan.operations[-1].machine, start=10,
                                                     duration=200)])
    assert not validate(ft06, plan, disruption=d, baseline=plan).valid  # the breakdown hits the plan in force
    real = get_repairer(method)

    def broken(state: ExecutionState, **kw: object) -> RepairOutcome:
        out = real(state, **kw)  # type: ignore[arg-type]
        assert validate(ft06, out.schedule, disruption=d, baseline=plan).valid  # the method itself is fine
        wrong = state.baseline if corruption == "unrepaired" else _shortened(out.schedule, d.time)
        return RepairOutcome(wrong, out.neighbourhood, out.growths, out.fallback, out.notes)

    monkeypatch.setattr(repair_package, "get_repairer", lambda _m: broken)
    with pytest.raises(ContractError, match=rf"^{method.value} produced a plan the validator rejects \(.+ x\d"):
        repair(ft06, plan, d, method, budget=0.5)


# -- LCRP: never worse than AOR ------------------------------------------------------------------------------


@pytest.fixture
def la01() -> Instance:
    return get_instance("la01")


def _hold_after_the_first_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Later stages keep the plan they are given (the cascade proves nothing shorter exists, stabilizing and
    settling change nothing), so the plan LCRP returns is the first edit's choice: a later stage that
    happens to shorten it cannot hide a wrong choice."""
    monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, True))
    monkeypatch.setattr(lcrp_module, "stabilized", lambda _state, current, *_a, **_k: current)
    monkeypatch.setattr(lcrp_module, "settled", lambda _state, current, *_a, **_k: current)


def test_a_valid_but_longer_redispatch_never_replaces_aor(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "breakdown", seed=3)
    st = ExecutionState.at(la01, plan, d)
    is_valid = _verdict(la01, plan, d)
    cheap = aor(st)
    longer = _delayed_last(cheap, 7)
    assert is_valid(longer) and longer.makespan == cheap.makespan + 7  # valid, and worse than AOR
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)  # so the re-dispatch is consulted
    monkeypatch.setattr(lcrp_module, "redispatch", lambda _state: longer)
    _hold_after_the_first_edit(monkeypatch)
    out = lcrp(st, budget=1.0, is_valid=is_valid)
    assert is_valid(out.schedule)
    assert out.schedule.makespan == cheap.makespan
    assert not any(n.startswith("re-dispatched") for n in out.notes)


def test_a_shorter_redispatch_is_taken(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of the rule, so the test above cannot pass by never taking a re-dispatch."""
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "breakdown", seed=3)
    st = ExecutionState.at(la01, plan, d)
    is_valid = _verdict(la01, plan, d)
    cheap = aor(st)
    # A global re-solve on a deterministic budget (the same plan on any machine, at any load).
    request = replace(disrupted_request(st, pins={}, hint=cheap, time_limit=1.0, workers=1), deterministic=True)
    shorter = optimize(request).schedule
    assert is_valid(shorter) and shorter.makespan < cheap.makespan
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "redispatch", lambda _state: shorter)
    _hold_after_the_first_edit(monkeypatch)
    out = lcrp(st, budget=1.0, is_valid=is_valid)
    assert out.schedule.makespan == shorter.makespan
    assert any(n.startswith("re-dispatched") for n in out.notes)


# -- LCRP: the fallback plan is validated ---------------------------------------------------------------------


def test_an_invalid_fallback_plan_is_never_returned(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "mixed", seed=4)
    st = ExecutionState.at(la01, plan, d)
    is_valid = _verdict(la01, plan, d)
    assert not is_valid(plan)  # the plan in force, unrepaired, is what the broken re-solve hands back

    def infeasible(*_a: object, **_k: object) -> None:
        raise InfeasibleError("no room")

    resolves: list[Schedule] = []

    def broken_full(state: ExecutionState, hint: Schedule, **_k: object) -> SimpleNamespace:
        resolves.append(hint)
        return SimpleNamespace(schedule=state.baseline)

    monkeypatch.setattr(lcrp_module, "solve_neighbourhood", infeasible)  # every window fails...
    monkeypatch.setattr(lcrp_module, "optimize", infeasible)  # ...and the cascade: only the fallback is left
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "full", broken_full)
    out = lcrp(st, budget=0.5, is_valid=is_valid)
    assert resolves, "the fallback re-solve did not run"
    assert out.fallback and is_valid(out.schedule)
    assert out.schedule.starts() == resolves[0].starts()  # the incumbent it was hinted with stays
    assert out.schedule.makespan <= aor(st).makespan
    assert any("fallback plan rejected" in n for n in out.notes)
    # Through the entry point too: the repair succeeds with the incumbent instead of raising.
    r = repair(la01, plan, d, "lcrp", budget=0.5)
    assert r.fallback and r.valid and r.makespan >= lower_bound(st)
