"""The reference of the LLM experiment under disruptions: the time-boxed full re-solve, solved once per input."""

from __future__ import annotations

from alas_argo.benchmarks.repair_reference import References, reference_for
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.planning import plan
from alas_argo.jssp.repair import repair


def test_the_reference_is_the_full_re_solve_and_is_solved_once_per_input() -> None:
    instance = get_instance("ft06")
    schedule = plan(instance, time_limit=5).schedule
    breakdown = generate_disruption(instance, schedule, "breakdown", seed=1)
    cache: References = {}
    ref = reference_for(instance, schedule, breakdown, budget=5.0, cache=cache)
    assert ref.makespan == repair(instance, schedule, breakdown, "full", budget=5.0).makespan
    assert ref.note == "cp-sat optimal"  # ft06 is small enough to prove it
    assert reference_for(instance, schedule, breakdown, budget=5.0, cache=cache) is ref and len(cache) == 1
    shock = generate_disruption(instance, schedule, "shock", seed=1)
    assert reference_for(instance, schedule, shock, budget=5.0, cache=cache) is not ref and len(cache) == 2
    lcrp = repair(instance, schedule, breakdown, "lcrp", budget=5.0).makespan
    assert ref.makespan <= lcrp  # a proved optimum is never beaten by the local repair
