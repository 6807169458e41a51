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
from alas_argo.errors import ContractError, InfeasibleError, InputError, NoSolutionError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import (
    MAX_EFFORT,
    FirstEdit,
    RepairMethod,
    RepairOutcome,
    check_effort,
    get_repairer,
    lower_bound,
    repair,
)
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


def _frozen_nudged(plan: Schedule, d: Disruption) -> Schedule | None:
    """``plan`` with one operation that had started by the reveal started one unit later, where the slack
    allows (nothing else breaks): wrong only against the plan in force (``frozen_moved``)."""
    ops = plan.operations
    down = [(b.machine, b.start, b.end) for b in d.breakdowns]
    for o in sorted(ops, key=lambda o: o.start):
        if o.start >= d.time:
            break
        after = [x for x in ops if x is not o and (x.machine == o.machine or x.job == o.job) and x.start >= o.end]
        if all(x.start >= o.end + 1 for x in after) and not any(
                m == o.machine and s < o.end + 1 and o.start + 1 < e for m, s, e in down):
            moved = Operation(job=o.job, step=o.step, machine=o.machine, start=o.start + 1, end=o.end + 1)
            return Schedule.from_operations(plan.instance, [moved if x is o else x for x in ops])
    return None


# -- repair(): the final validation ------------------------------------------------------------------------


@pytest.mark.parametrize("corruption", ["unrepaired", "wrong duration", "frozen moved"])
@pytest.mark.parametrize("method", list(RepairMethod))
def test_a_method_returning_a_rejected_plan_is_a_contract_error(ft06: Instance, method: RepairMethod,
                                                                corruption: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(ft06, "mwkr")
    d = Disruption(time=20, events=[MachineBreakdown(machine=plan.operations[-1].machine, start=20,
                                                     duration=200)])
    assert not validate(ft06, plan, disruption=d, baseline=plan).valid  # the breakdown hits the plan in force
    real = get_repairer(method)

    def broken(state: ExecutionState, **kw: object) -> RepairOutcome:
        out = real(state, **kw)  # type: ignore[arg-type]
        assert validate(ft06, out.schedule, disruption=d, baseline=plan).valid  # the method itself is fine
        if corruption == "unrepaired":
            wrong = state.baseline
        elif corruption == "wrong duration":
            wrong = _shortened(out.schedule, d.time)
        else:
            nudged = _frozen_nudged(out.schedule, d)
            assert nudged is not None
            # Only the plan in force tells: judged without it, the plan is feasible.
            assert validate(ft06, nudged, disruption=d).valid
            wrong = nudged
        return RepairOutcome(wrong, out.neighbourhood, out.growths, out.fallback, out.notes)

    monkeypatch.setattr(repair_package, "get_repairer", lambda _m: broken)
    codes = {"unrepaired": r".+ x\d+", "wrong duration": r"wrong_duration x1", "frozen moved": r"frozen_moved x1"}
    with pytest.raises(ContractError, match=rf"^{method.value} produced a plan the validator rejects "
                                            rf"\({codes[corruption]}\); first: "):
        repair(ft06, plan, d, method, budget=0.5)


def test_the_method_gets_the_callers_settings_and_a_validator_that_knows_the_plan_in_force(
        ft06: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(ft06, "mwkr")
    d = Disruption(time=20, events=[MachineBreakdown(machine=plan.operations[-1].machine, start=20,
                                                     duration=200)])
    real = get_repairer("aor")
    seen: dict[str, object] = {}
    region: set[tuple[int, int]] = set()

    def spy(state: ExecutionState, *, is_valid: Callable[[Schedule], bool], **kw: object) -> RepairOutcome:
        out = real(state, is_valid=is_valid, **kw)  # type: ignore[arg-type]
        nudged = _frozen_nudged(out.schedule, d)
        assert nudged is not None
        # The clock is the repair's own (deterministic by default): its type is the setting that matters.
        clock = kw.pop("clock")
        seen.update(kw, accepts_own=is_valid(out.schedule), accepts_nudged=is_valid(nudged),
                    deterministic_clock=getattr(clock, "deterministic", None))
        region.update(out.neighbourhood | {(0, 0)})
        return RepairOutcome(out.schedule, region, 3, False, ["spied"])

    monkeypatch.setattr(repair_package, "get_repairer", lambda _m: spy)
    r = repair(ft06, plan, d, "aor", budget=2.5, seed=7, workers=1, effort=3.5, tolerance=0.01, first_edit="tabu")
    assert seen == {"budget": 2.5, "seed": 7, "workers": 1, "effort": 3.5, "tolerance": 0.01,
                    "first_edit": FirstEdit.TABU, "accepts_own": True, "accepts_nudged": False,
                    "deterministic_clock": True}
    assert r.neighbourhood_growths == 3 and r.notes == ["spied"] and not r.fallback
    assert r.edit_radius == len(region) and r.edit_machines == sorted({ft06.machine(*k) for k in region})


@pytest.mark.parametrize(("effort", "ok"), [(0.0, False), (-1.0, False), (0.01, True), (MAX_EFFORT, True),
                                            (MAX_EFFORT + 0.01, False)])
def test_effort_is_checked_against_its_documented_range(effort: float, ok: bool) -> None:
    if ok:
        check_effort(effort)
    else:
        with pytest.raises(InputError, match=r"^effort must be in \(0, 100\], got "):
            check_effort(effort)


def test_a_plan_committed_after_an_earlier_event_of_the_disruption_is_in_force(ft06: Instance) -> None:
    """A sequence of disruptions: the second carries the first's duration change forward, and the plan in
    force already runs the operation with its new duration; it must not be taken for an invalid plan."""
    plan = dispatch(ft06, "mwkr")
    op = next(o for o in sorted(plan.operations, key=lambda o: o.start) if o.start >= 30)
    longer = DurationChange(job=op.job, step=op.step, duration=op.end - op.start + 5)
    in_force = repair(ft06, plan, Disruption(time=10, events=[longer]), "aor").schedule
    now = in_force.by_key()[(op.job, op.step)]
    assert now.end - now.start == longer.duration and now.start >= 20  # changed, and still pending at 20
    d2 = Disruption(time=20, events=[longer, MachineBreakdown(machine=now.machine, start=20, duration=5)])
    r = repair(ft06, in_force, d2, "aor")
    assert r.valid and validate(ft06, r.schedule, disruption=d2, baseline=in_force).valid


# -- LCRP: never worse than AOR ------------------------------------------------------------------------------


@pytest.fixture
def la01() -> Instance:
    return get_instance("la01")


def _hold_after_the_first_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Later stages keep the plan they are given (the cascade proves nothing shorter exists, the re-optimizing
    search finds nothing, stabilizing and settling change nothing), so the plan LCRP returns is the first edit's
    choice: a later stage that happens to shorten it cannot hide a wrong choice."""
    monkeypatch.setattr(lcrp_module, "_cascade", lambda *_a, **_k: (None, True))
    monkeypatch.setattr(lcrp_module, "reoptimized", lambda *_a, **_k: None)
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
    out = lcrp(st, budget=1.0, is_valid=is_valid, first_edit="redispatch")
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



def test_a_redispatch_no_shorter_than_aor_is_not_taken(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a shorter re-dispatch replaces AOR's edit: at equal makespan AOR's (the least edit) stays."""
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "breakdown", seed=3)
    st = ExecutionState.at(la01, plan, d)
    cheap = aor(st)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "redispatch", lambda _state: cheap.model_copy(deep=True))
    _hold_after_the_first_edit(monkeypatch)
    out = lcrp(st, budget=1.0, is_valid=_verdict(la01, plan, d), first_edit="redispatch")
    assert out.schedule.makespan == cheap.makespan
    assert not any(n.startswith("re-dispatched") for n in out.notes)

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



def test_a_fallback_re_solve_that_finds_nothing_keeps_the_incumbent(la01: Instance,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "mixed", seed=4)
    st = ExecutionState.at(la01, plan, d)
    is_valid = _verdict(la01, plan, d)

    def infeasible(*_a: object, **_k: object) -> None:
        raise InfeasibleError("no room")

    hints: list[Schedule] = []

    def nothing(state: ExecutionState, hint: Schedule, **_k: object) -> None:
        hints.append(hint)
        raise NoSolutionError("no solution in the time left")

    monkeypatch.setattr(lcrp_module, "solve_neighbourhood", infeasible)
    monkeypatch.setattr(lcrp_module, "optimize", infeasible)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "full", nothing)
    out = lcrp(st, budget=0.5, is_valid=is_valid)
    assert hints, "the fallback re-solve did not run"
    # The incumbent it was hinted with stays, validated; the outcome says it went global, and why.
    assert out.fallback and is_valid(out.schedule) and out.schedule.starts() == hints[0].starts()
    assert any(n.startswith("fallback failed: ") for n in out.notes)
    assert out.global_reason == "no local step produced a plan the validator accepts: global fallback"

def test_an_aor_plan_the_validator_rejects_goes_to_the_global_fallback(la01: Instance,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    plan = dispatch(la01, "mwkr")
    d = generate_disruption(la01, plan, "breakdown", seed=3)
    st = ExecutionState.at(la01, plan, d)
    real = _verdict(la01, plan, d)
    cheap = aor(st)
    other = _delayed_last(cheap, 7)  # valid, and not AOR's plan

    def is_valid(s: Schedule) -> bool:
        return s.starts() != cheap.starts() and real(s)

    hints: list[Schedule] = []

    def resolve(state: ExecutionState, hint: Schedule, **_k: object) -> SimpleNamespace:
        hints.append(hint)
        return SimpleNamespace(schedule=other)

    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    monkeypatch.setattr(lcrp_module, "redispatch", lambda _state: cheap)  # no shorter first edit
    monkeypatch.setattr(lcrp_module, "full", resolve)
    out = lcrp(st, budget=0.5, is_valid=is_valid)
    assert [h.starts() for h in hints] == [cheap.starts()]  # hinted with the rejected plan
    assert out.fallback and out.schedule.starts() == other.starts() and out.neighbourhood == st.free
    assert any(n.startswith("aor plan rejected") for n in out.notes)
