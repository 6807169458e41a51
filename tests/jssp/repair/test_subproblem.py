"""The LCRP neighbourhood solve: limits, pins, stability phases."""

from __future__ import annotations

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.repair.resolving import disrupted_request
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.subproblem import fewest_moves, solve_neighbourhood
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


def _case():
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=120, events=[MachineBreakdown(machine=1, start=120, duration=70)])
    return inst, plan, d, ExecutionState.at(inst, plan, d)


def _late_pins(st: ExecutionState, start: Schedule, count: int) -> tuple[dict, SolveRequest]:
    planned = st.baseline.starts()
    late = sorted(st.free, key=lambda k: planned[k])[-count:]
    pins = {k: start.starts()[k] for k in late}
    return pins, disrupted_request(st, pins=pins, hint=start, time_limit=0.5, workers=1,
                                   makespan_limit=start.makespan)


def test_pins_hold_and_the_result_is_valid() -> None:
    inst, plan, d, st = _case()
    start = aor(st)
    planned = plan.starts()
    pins, request = _late_pins(st, start, 10)
    found = solve_neighbourhood(request, planned, minimize_makespan=True)
    assert found is not None
    assert validate(inst, found, disruption=d, baseline=plan).valid
    assert all(found.starts()[k] == s for k, s in pins.items())
    assert found.makespan <= start.makespan


def test_fewest_moves_keeps_pins_limit_and_never_moves_more_than_its_hint() -> None:
    inst, plan, d, st = _case()
    start = aor(st)
    planned = plan.starts()
    pins, request = _late_pins(st, start, 5)
    found = fewest_moves(request, planned)
    assert found is not None
    assert validate(inst, found, disruption=d, baseline=plan).valid
    assert found.makespan <= start.makespan
    assert all(found.starts()[k] == s for k, s in pins.items())
    assert moved_operations(plan, found) <= moved_operations(plan, start)
