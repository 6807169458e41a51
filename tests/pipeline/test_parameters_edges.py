"""Workflow parameters at their edges: every parameter `alas run` submits, written and read back; the template's
defaults; the disruption count at alas-plan's maximum and one past it (refused, never truncated); given
disruptions as one document or a list; `alas submit`'s check of each shipped workflow."""

from __future__ import annotations

import json

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption
from alas_argo.pipeline import RunConfig, Variant
from alas_argo.pipeline.parameters import bench_cases, check_submission, config_from_parameters, parameters_for
from alas_argo.workflows.plan import INPUTS, MAX_DISRUPTIONS


def _disruption(time: int) -> Disruption:
    return Disruption.model_validate({"time": time, "events": [
        {"kind": "machine_breakdown", "machine": 1, "start": time, "duration": 4}]})


def test_every_parameter_alas_run_submits_is_written_and_read_back() -> None:
    config = RunConfig(instance="la01", planner="cpsat", disrupt="mixed", disruptions=MAX_DISRUPTIONS, seed=7,
                       time_limit=3.5, repair_method="aor", repair_budget=2.5, repair_effort=4,
                       repair_tolerance=0.005, workers=1, faults=2, variant=Variant.NO_REPAIR, deterministic=True,
                       repair_first_edit="tabu")
    values = parameters_for(config, run_id="run-7")
    assert values == {
        "run-id": "run-7", "instance": "la01", "planner": "cpsat", "scenarios": '["mixed"]', "seeds": "[7]",
        "method": "aor", "time-limit": "3.5", "repair-budget": "2.5", "faults": "2", "variant": "no_repair",
        "deterministic": "true", "disruptions": str(MAX_DISRUPTIONS), "repair-effort": "4.0",
        "repair-tolerance": "0.005", "repair-first-edit": "tabu"}
    assert set(values) <= set(INPUTS)  # only parameters the templates declare
    assert config_from_parameters(values) == (config, [])
    plan_only = parameters_for(config.model_copy(update={"disrupt": None, "deterministic": False}), run_id="r")
    assert (plan_only["scenarios"], plan_only["disruptions"], plan_only["deterministic"]) == ('["none"]', "0", "false")
    back, _ = config_from_parameters(plan_only)
    assert (back.disrupt, back.disruptions, back.deterministic) == (None, 1, False)


def test_the_templates_defaults_read_as_one_generated_breakdown_on_ta01() -> None:
    config, given = config_from_parameters({})
    assert given == [] and config == RunConfig(instance="ta01", planner="heuristic", disrupt="breakdown",
                                               disruptions=1, seed=0, time_limit=10.0, repair_method="lcrp",
                                               repair_budget=10.0, workers=1)
    assert config_from_parameters({**INPUTS, "scenarios": "[]", "seeds": "[]"})[0] == config


def test_given_disruptions_travel_as_one_document_or_a_list() -> None:
    one, two = [_disruption(5)], [_disruption(5), _disruption(9)]
    config = RunConfig(instance="ft06", disrupt="given.json", seed=3)
    single = parameters_for(config, run_id="r", disruptions=one)
    assert (single["scenarios"], single["disruptions"]) == ('["given"]', "1")
    assert json.loads(single["disruption"]) == one[0].to_json()
    listed = parameters_for(config, run_id="r", disruptions=two)
    assert json.loads(listed["disruption"]) == [d.to_json() for d in two] and listed["disruptions"] == "2"
    for values, expected in ((single, one), (listed, two)):
        back, given = config_from_parameters(values)
        assert given == expected and back.disrupt is None and back.seed == 3


def test_a_malformed_given_disruption_is_named() -> None:
    # One document is read as a list of one: the place is counted in the list either way.
    with pytest.raises(InputError) as e:
        config_from_parameters({**INPUTS, "disruption": '{"time": "soon", "events": []}'})
    assert e.value.message.startswith("0.time: Input should be a valid integer")
    assert e.value.where == "parameter disruption"
    with pytest.raises(InputError) as e:
        config_from_parameters({**INPUTS, "disruption": json.dumps([_disruption(5).to_json(), {"time": "x"}])})
    assert e.value.message.startswith("1.time: ") and e.value.where == "parameter disruption"


def test_the_disruption_count_is_alas_plans_maximum_at_most_never_truncated() -> None:
    config, _ = config_from_parameters({**INPUTS, "disruptions": str(MAX_DISRUPTIONS)})
    assert config.disruptions == MAX_DISRUPTIONS
    expected = (f"must be between 0 and {MAX_DISRUPTIONS} (alas-plan is rendered with {MAX_DISRUPTIONS} "
                f"disruption segments), got {MAX_DISRUPTIONS + 1}")
    with pytest.raises(InputError) as e:
        config_from_parameters({**INPUTS, "disruptions": str(MAX_DISRUPTIONS + 1)})
    assert e.value.message == f"disruptions {expected}" and e.value.where == "parameter disruptions"
    too_many = json.dumps([_disruption(5 + k).to_json() for k in range(MAX_DISRUPTIONS + 1)])
    with pytest.raises(InputError) as e:
        config_from_parameters({**INPUTS, "disruption": too_many})
    assert e.value.message == f"the given disruption list's length {expected}"
    assert e.value.where == "parameter disruptions"
    config = RunConfig(instance="ft06", disrupt="breakdown", disruptions=MAX_DISRUPTIONS + 1)
    with pytest.raises(InputError) as e:
        parameters_for(config, run_id="r")
    assert e.value.message == f"alas-plan reveals at most {MAX_DISRUPTIONS} disruptions, got {MAX_DISRUPTIONS + 1}"
    assert e.value.where == "disruptions"
    assert parameters_for(config.model_copy(update={"disruptions": MAX_DISRUPTIONS}), run_id="r")["disruptions"] == \
        str(MAX_DISRUPTIONS)


def test_alas_submit_checks_each_shipped_workflow_as_its_first_step_will() -> None:
    # alas-bench: the suite (named as its parameter), then every case's parameters.
    check_submission("alas-bench", {})  # the smoke suite, one case of the defaults
    with pytest.raises(InputError, match="unknown suite or instance 'nope'") as e:
        check_submission("alas-bench", {"suite": "nope"})
    assert e.value.where == "parameter suite"
    with pytest.raises(InputError, match="'seeds' must hold a whole number") as e:
        check_submission("alas-bench", {"suite": "ft06", "seeds": '["a"]'})
    assert e.value.where == "parameter seeds"
    # alas-plan and alas-repair: the run configuration; a bundled instance name for alas-plan.
    for workflow in ("alas-plan", "alas-repair"):
        with pytest.raises(InputError, match="'time-limit' must be a number"):
            check_submission(workflow, {**INPUTS, "time-limit": "soon"})
    with pytest.raises(InputError, match="unknown instance"):
        check_submission("alas-plan", {**INPUTS, "instance": "nope99"})
    check_submission("alas-repair", {**INPUTS, "instance": "nope99"})  # the run's log holds its instance
    for path in ("/data/mine.json", "mine.txt"):  # inside the pod's image: only the pod can read it
        check_submission("alas-plan", {**INPUTS, "instance": path})
    check_submission("someone-elses", {"time-limit": "soon", "suite": "nope"})  # not ours: unchecked


def test_scenario_none_plans_only_whatever_the_count() -> None:
    config, _ = config_from_parameters({**INPUTS, "scenarios": '["none"]', "disruptions": "1"})
    assert config.disrupt is None


def test_a_parameter_that_is_not_json_is_named() -> None:
    with pytest.raises(InputError) as e:
        config_from_parameters({**INPUTS, "disruption": "{"})
    assert e.value.message.startswith("workflow parameter 'disruption' is not JSON: ")
    assert e.value.where == "parameter disruption"


def test_every_repeated_bench_entry_is_named() -> None:
    with pytest.raises(InputError) as e:
        bench_cases({"seeds": "[0, 1, 0, 1]"}, ["ft06"])
    assert e.value.message == "workflow parameter 'seeds' lists 0, 1 more than once"


def test_a_name_with_a_slash_is_a_path_in_the_pods_image() -> None:
    check_submission("alas-plan", {**INPUTS, "instance": "/data/mine"})
    with pytest.raises(InputError, match="unknown instance"):
        check_submission("alas-plan", {**INPUTS, "instance": "mine"})


@pytest.mark.parametrize(("given", "deterministic"), [("true", True), ("false", False), ("TRUE", True),
                                                      (" False ", False), ("", True)])
def test_deterministic_is_true_or_false_in_any_case(given: str, deterministic: bool) -> None:
    assert config_from_parameters({"deterministic": given})[0].deterministic is deterministic


@pytest.mark.parametrize("given", ["no", "0", "1", "yes", "abc", "[]"])
def test_any_other_deterministic_value_is_refused_naming_it(given: str) -> None:
    # Every value but "false" used to run deterministically: `-p deterministic=no` ran the very thing it refused.
    with pytest.raises(InputError) as e:
        config_from_parameters({"deterministic": given})
    assert e.value.message == f"workflow parameter 'deterministic' must be true or false, got {given!r}"
    assert e.value.where == "parameter deterministic"
    with pytest.raises(InputError, match="'deterministic' must be true or false"):
        check_submission("alas-plan", {**INPUTS, "deterministic": given})  # refused at alas submit too


@pytest.mark.parametrize("name", ["time-limit", "repair-budget"])
def test_a_search_budget_past_a_year_is_refused_naming_the_parameter(name: str) -> None:
    # 1e20 was taken: the search then ran until it proved an optimum (or the pod's deadline killed it).
    assert getattr(config_from_parameters({name: "31536000"})[0], name.replace("-", "_")) == 31_536_000
    with pytest.raises(InputError) as e:
        config_from_parameters({name: "99999999999999999999"})
    assert e.value.message == f"workflow parameter {name!r}: Input should be less than or equal to 31536000"
    assert e.value.where == f"parameter {name}"
