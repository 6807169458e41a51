"""Lower bounds on a repair's makespan: Jackson's preemptive schedule exact, the bounds never above an optimum."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alas_argo.jssp.cpsat import SolveStatus
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.bounds import jackson_preemptive, lower_bound, one_machine_bound
from alas_argo.jssp.repair.resolving import full
from alas_argo.jssp.repair.shifting import aor
from tests.jssp.repair.test_properties import instances


@pytest.mark.parametrize(("ops", "value"), [
    ([], 0),
    ([(5, 2, 1)], 8),
    ([(0, 2, 0), (0, 2, 0)], 4),
    # The long tail arrives at 1 and preempts: it ends at 3 (3 + 5 = 8), the first resumes and ends at 5.
    # Without preemption the best order gives 8 too; the other order 10.
    ([(0, 3, 0), (1, 2, 5)], 8),
    # An idle machine waits for the next head.
    ([(0, 1, 0), (10, 1, 0)], 11),
    # Tails decide the order, not arrival: 0..4 tail 1, then 4..6 tail 9 would give 15; preempted 13.
    ([(0, 4, 1), (2, 2, 9)], 13),
])
def test_jackson_preemptive_is_exact_on_small_cases(ops: list[tuple[int, int, int]], value: int) -> None:
    assert jackson_preemptive(ops) == value


def test_the_one_machine_bound_sees_what_loads_alone_miss() -> None:
    # Machine 0 runs the first operation of both jobs; each job then has 10 units elsewhere. Job chains say 12,
    # loads 10; one job must wait for the other on machine 0, so 2 + 2 + 10 = 14.
    inst = Instance(name="two", jobs=[[(0, 2), (1, 10)], [(0, 2), (2, 10)]])
    plan = dispatch(inst, "spt")
    state = ExecutionState.at(inst, plan, time=0)
    assert one_machine_bound(state) == 14 and lower_bound(state) == 14 == plan.makespan
    # A downtime of machine 0 over [0, 3) revealed at 0: both first operations start at 3 or later.
    down = ExecutionState.at(inst, plan, Disruption(time=0, events=[MachineBreakdown(machine=0, start=0,
                                                                                     duration=3)]))
    assert one_machine_bound(down) == 17 and lower_bound(down) == 17


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances(), st.sampled_from(["breakdown", "shock", "mixed"]), st.integers(0, 50), st.floats(0.0, 0.9))
def test_the_bound_is_never_above_a_proven_optimal_repair(inst: Instance, kind: str, seed: int, at: float) -> None:
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, kind, seed=seed, at=at, machine="random")
    state = ExecutionState.at(inst, plan, d)
    best = full(state, aor(state), budget=5, workers=1)
    assert best.status is SolveStatus.OPTIMAL  # at most 5x4 operations
    assert one_machine_bound(state) <= best.objective
    assert lower_bound(state) <= best.objective
