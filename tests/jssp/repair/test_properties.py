"""Property tests: random small instances and disruptions, every method valid, LCRP local and no worse."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import RepairMethod, repair
from alas_argo.jssp.repair.lcrp import lcrp
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.validate import validate


@st.composite
def instances(draw: st.DrawFn) -> Instance:
    machines = draw(st.integers(2, 4))
    jobs = draw(st.integers(2, 5))
    rows = []
    for _ in range(jobs):
        order = draw(st.permutations(range(machines)))
        rows.append([(m, draw(st.integers(1, 9))) for m in order])
    return Instance(name="random", jobs=rows)


scenario = st.tuples(instances(), st.sampled_from(["breakdown", "shock", "mixed"]), st.integers(0, 50),
                     st.floats(0.0, 0.9), st.floats(0.05, 0.5))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario)
def test_every_method_returns_a_valid_plan(case: tuple) -> None:
    inst, kind, seed, at, length = case
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, kind, seed=seed, at=at, length=length, machine="random")
    for method in RepairMethod:
        r = repair(inst, plan, d, method, budget=0.2, workers=1)
        assert validate(inst, r.schedule, disruption=d, baseline=plan).valid, method


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenario)
def test_lcrp_respects_its_neighbourhood_and_aor(case: tuple) -> None:
    inst, kind, seed, at, length = case
    plan = dispatch(inst, "spt")
    d = generate_disruption(inst, plan, kind, seed=seed, at=at, length=length, machine="random")
    state = ExecutionState.at(inst, plan, d)
    out = lcrp(state, budget=0.3, workers=1,
               is_valid=lambda s: validate(inst, s, disruption=d, baseline=plan).valid)
    assert validate(inst, out.schedule, disruption=d, baseline=plan).valid
    assert out.schedule.makespan <= aor(state).makespan
    planned, now = plan.starts(), out.schedule.starts()
    assert all(now[k] == planned[k] for k in set(planned) - out.neighbourhood)
