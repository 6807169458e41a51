"""Workflow parameters <-> a run's configuration: what alas run submits is what the step pods run."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT
from alas_argo.pipeline import RunConfig
from alas_argo.pipeline.parameters import bench_cases, config_from_parameters, parameters_for
from alas_argo.workflows.plan import INPUTS


def test_a_configuration_survives_the_round_trip_through_parameters() -> None:
    config = RunConfig(instance="la01", planner="cpsat", disrupt="shock", disruptions=2, seed=7, time_limit=3.5,
                       repair_method="lcrp", repair_budget=2.5, repair_effort=4, repair_tolerance=0.005,
                       workers=1, faults=2, deterministic=False, repair_first_edit="tabu")
    back, given = config_from_parameters(parameters_for(config, run_id="r"))
    assert back == config and given == []


def test_the_templates_defaults_are_the_local_defaults() -> None:
    # A submission that sets nothing (or an older template without the repair knobs) repairs as alas run does.
    config, _ = config_from_parameters(INPUTS)
    assert (config.repair_effort, config.repair_tolerance) == (1.0, 0.0)
    # The template holds no first edit of its own: empty is the library's default, whatever it is.
    assert INPUTS["repair-first-edit"] == "" and config.repair_first_edit is DEFAULT_FIRST_EDIT
    older = {k: v for k, v in INPUTS.items() if k not in ("repair-effort", "repair-tolerance", "repair-first-edit")}
    assert config_from_parameters(older)[0] == config


def test_a_given_disruption_travels_as_a_document() -> None:
    d = Disruption.model_validate({"time": 5, "events": [{"kind": "machine_breakdown", "machine": 1, "start": 5,
                                                          "duration": 4}]})
    values = parameters_for(RunConfig(instance="ft06", disrupt="given.json"), run_id="r", disruptions=[d])
    config, given = config_from_parameters(values)
    assert given == [d] and config.disrupt is None


@pytest.mark.parametrize(("name", "value", "fragment"), [
    ("repair-tolerance", "0.5", "'repair-tolerance': Input should be less than or equal to 0.1"),
    ("repair-tolerance", "lots", "'repair-tolerance' must be a number, got 'lots'"),
    ("repair-effort", "nan", "'repair-effort' must be a number"),
    ("repair-effort", "0", "'repair-effort': Input should be greater than 0"),
    ("repair-first-edit", "Tabu", "'repair-first-edit': Input should be 'redispatch' or 'tabu'"),
    ("time-limit", "soon", "'time-limit' must be a number"),
    ("repair-budget", "inf", "'repair-budget' must be a number"),
    ("faults", "1.5", "'faults' must hold a whole number, got '1.5'"),
    ("seeds", '["x"]', "'seeds' must hold a whole number, got 'x'"),
    ("seeds", "[true]", "'seeds' must hold a whole number, got True"),
    ("seeds", "[1.5]", "'seeds' must hold a whole number, got 1.5"),
    ("seeds", "[2147483648]", "Input should be less than or equal to 2147483647"),
    ("disruptions", "two", "'disruptions' must hold a whole number, got 'two'"),
    ("variant", "bogus", "'variant': Input should be"),
    # Each used to run with the registry's fallback (heuristic agents, a patch for a repair) under the unknown name.
    ("planner", "nope", "'planner': Input should be 'heuristic', 'cpsat', 'llm' or 'simulated'"),
    ("method", "bogus", "'method': Input should be 'lcrp', 'aor', 'right-shift', 'full' or 'full-stable'"),
    # Each used to pass the first step and fail the disrupt step, after the plan was made and committed (the
    # path would have had the pod read a file of its own image as a disruption).
    ("scenarios", '["flood"]', "'scenarios': unknown scenario 'flood'; known: none, breakdown, shock, mixed"),
    ("scenarios", '["/etc/passwd"]', "unknown scenario '/etc/passwd'"),
    ("scenarios", "[5]", "unknown scenario 5"),
    ("scenarios", '"breakdown"', "'scenarios' must be a JSON list"),
])
def test_a_malformed_parameter_is_named(name: str, value: str, fragment: str) -> None:
    with pytest.raises(InputError, match="workflow parameter") as e:
        config_from_parameters({**INPUTS, name: value})
    assert fragment in str(e.value) and e.value.where == f"parameter {name}"


def test_the_bench_cases_are_every_instance_scenario_and_seed() -> None:
    cases = bench_cases({"scenarios": '["none", "shock"]', "seeds": '[3, "4"]'}, ["ft06", "la01"])
    assert [(c["instance"], c["scenario"], c["seed"]) for c in cases] == [
        (n, s, k) for n in ("ft06", "la01") for s in ("none", "shock") for k in (3, 4)]
    assert bench_cases({}, ["ft06"]) == [{"instance": "ft06", "scenario": "none", "seed": 0}]  # the defaults


@pytest.mark.parametrize(("name", "value", "fragment"), [
    # A string fanned out one case per letter ("b", "r", ...), every one of them failing in its pod.
    ("scenarios", '"breakdown"', "'scenarios' must be a JSON list"),
    ("seeds", "5", "'seeds' must be a JSON list"),  # was a TypeError traceback from the listing step
    ("seeds", '["a"]', "'seeds' must hold a whole number, got 'a'"),  # was a ValueError traceback
    ("seeds", "[1.5]", "'seeds' must hold a whole number, got 1.5"),  # was silently seed 1
    ("seeds", "[true]", "'seeds' must hold a whole number, got True"),  # was silently seed 1
    # Every entry is checked, not only the first one alas-plan reads: each used to fail its case pods.
    ("seeds", "[0, 2147483648]", "Input should be less than or equal to 2147483647"),
    ("seeds", "[0, -1]", "Input should be greater than or equal to 0"),
    ("scenarios", '["none", "flood"]', "unknown scenario 'flood'"),
    # No case: a benchmark of nothing used to fan out over an empty list.
    ("seeds", "[]", "'seeds' must list at least one entry"),
    ("scenarios", "[]", "'scenarios' must list at least one entry"),
    # The same case twice: two pods doing the same work, both counted in the tables.
    ("seeds", '[0, 1, "0"]', "'seeds' lists 0 more than once"),
    ("scenarios", '["shock", "none", "shock"]', "'scenarios' lists shock more than once"),
    # The rest of each case's configuration is read before the fan-out too.
    ("time-limit", "soon", "'time-limit' must be a number"),
])
def test_a_malformed_bench_parameter_is_refused_before_the_fanout(name: str, value: str, fragment: str) -> None:
    with pytest.raises(InputError, match="workflow parameter") as e:
        bench_cases({"scenarios": '["none"]', "seeds": "[0]", name: value}, ["ft06"])
    assert fragment in str(e.value) and e.value.where == f"parameter {name}"
