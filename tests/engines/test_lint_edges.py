"""The project's lint of Argo documents (alas_argo.engines.lint) on small documents written by hand: each check
its docstring lists finds its broken reference, names where, and stays quiet on the forms Argo accepts."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.engines.lint import LintProblem, lint_argo


def _leaf(name: str, inputs: list[dict[str, Any]] | None = None, outputs: list[str] | None = None,
          args: list[str] | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"name": name, "container": {"image": "alas:test", "args": args or []}}
    if inputs is not None:
        t["inputs"] = {"parameters": inputs}
    if outputs is not None:
        t["outputs"] = {"parameters": [{"name": o, "valueFrom": {"path": f"/tmp/{o}"}} for o in outputs]}
    return t


def _doc() -> dict[str, Any]:
    """A clean workflow: a -> b (b reads a's output) -> c (reads a's output through b), a fan-out over a's list,
    a DAG output read from c, an exit handler."""
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "w"}, "spec": {
        "entrypoint": "main", "onExit": "bye",
        "arguments": {"parameters": [{"name": "run", "value": "r1"}]},
        "templates": [
            {"name": "main", "inputs": {"parameters": [{"name": "seed", "value": "1"}]},
             "outputs": {"parameters": [{"name": "out", "valueFrom": {
                 "parameter": "{{tasks.c.outputs.parameters.res}}"}}]},
             "dag": {"tasks": [
                 {"name": "a", "template": "step", "arguments": {"parameters": [
                     {"name": "x", "value": "{{inputs.parameters.seed}}"}]}},
                 {"name": "b", "template": "step", "depends": "a.Succeeded || a.Failed", "arguments": {
                     "parameters": [{"name": "x", "value": "{{tasks.a.outputs.parameters.res}}"}]}},
                 {"name": "c", "template": "step", "dependencies": ["b"], "arguments": {"parameters": [
                     {"name": "x", "value": "{{tasks.a.outputs.parameters.res}}"}]}},
                 {"name": "fan", "template": "each", "depends": "a",
                  "withParam": "{{tasks.a.outputs.parameters.res}}",
                  "arguments": {"parameters": [{"name": "it", "value": "{{item}}"}]}},
             ]}},
            _leaf("step", inputs=[{"name": "x"}, {"name": "opt", "default": "0"}], outputs=["res"],
                  args=["{{inputs.parameters.x}}", "{{workflow.parameters.run}}", "{{workflow.name}}",
                        "{{pod.name}}", "{{retries}}", "{{inputs.artifacts.a.path}}", "{{node.name}}",
                        "{{lastRetry.exitCode}}", "{{outputs.parameters.res.path}}"]),
            _leaf("each", inputs=[{"name": "it"}], args=["{{inputs.parameters.it}}"]),
            _leaf("bye", args=["{{workflow.status}}", "{{workflow.failures}}"]),
        ]}}


def _tasks(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in doc["spec"]["templates"][0]["dag"]["tasks"]}


def _problems(doc: dict[str, Any]) -> list[str]:
    return [str(p) for p in lint_argo(doc)]


def test_the_clean_document_is_clean() -> None:
    assert lint_argo(_doc()) == []


def test_a_problem_prints_where_then_what() -> None:
    assert str(LintProblem("main/a", "broken")) == "main/a: broken"


def test_an_empty_document_has_no_entrypoint() -> None:
    assert _problems({}) == ["spec: no entrypoint"]


@pytest.mark.parametrize("field", ["entrypoint", "onExit"])
def test_entrypoint_and_on_exit_name_templates(field: str) -> None:
    doc = _doc()
    doc["spec"][field] = "nowhere"
    assert _problems(doc) == [f"spec: {field} 'nowhere' is not a template"]


def test_duplicate_template_and_task_names() -> None:
    doc = _doc()
    doc["spec"]["templates"].append(_leaf("bye"))
    doc["spec"]["templates"][0]["dag"]["tasks"].append(copy.deepcopy(_tasks(doc)["c"]))
    assert _problems(doc) == ["bye: duplicate template name", "main: duplicate task name 'c'"]


def test_a_task_of_no_template() -> None:
    doc = _doc()
    _tasks(doc)["b"]["template"] = "gone"
    assert _problems(doc) == ["main/b: template 'gone' does not exist"]


@pytest.mark.parametrize(("field", "value", "ghost"), [
    ("depends", "a && ghost.Succeeded", "ghost"), ("depends", "(a || Ghost2)", "Ghost2"),
    ("dependencies", ["ghost"], "ghost")])
def test_depends_names_tasks_of_the_dag(field: str, value: Any, ghost: str) -> None:
    doc = _doc()
    _tasks(doc)["b"][field] = value
    assert f"main/b: depends on unknown task {ghost!r}" in _problems(doc)


def test_continue_on_beside_depends_is_refused_as_argo_does() -> None:
    doc = _doc()
    _tasks(doc)["a"]["continueOn"] = {"failed": True}
    assert _problems(doc) == ["main/a: cannot use 'continueOn' when the DAG uses 'depends': consume the failure "
                              "with 'task.Failed' in the dependents' depends instead"]
    for t in _tasks(doc).values():  # with `dependencies` only, Argo takes it
        if "depends" in t:
            t["dependencies"] = [t.pop("depends").split(".")[0]]
    assert lint_argo(doc) == []


def test_undeclared_input_and_workflow_parameters() -> None:
    doc = _doc()
    doc["spec"]["templates"][1]["container"]["args"] += ["{{inputs.parameters.nope}}",
                                                        "{{workflow.parameters.nope}}"]
    assert _problems(doc) == ["step: uses undeclared input parameter 'inputs.parameters.nope'",
                              "step: uses undeclared workflow parameter 'workflow.parameters.nope'"]


def test_a_parameter_reference_names_the_whole_rest() -> None:
    doc = _doc()
    doc["spec"]["templates"][1]["container"]["args"] += [
        "{{inputs.parameters.x.y}}", "{{inputs.parameters.q.x}}",
        "{{workflow.parameters.run.y}}", "{{workflow.parameters.q.run}}"]
    assert _problems(doc) == ["step: uses undeclared input parameter 'inputs.parameters.x.y'",
                              "step: uses undeclared input parameter 'inputs.parameters.q.x'",
                              "step: uses undeclared workflow parameter 'workflow.parameters.run.y'",
                              "step: uses undeclared workflow parameter 'workflow.parameters.q.run'"]


def test_a_dags_outputs_may_read_its_inputs() -> None:
    doc = _doc()
    doc["spec"]["templates"][0]["outputs"]["parameters"].append({"name": "echo", "valueFrom": {
        "parameter": "{{inputs.parameters.seed}}"}})
    assert lint_argo(doc) == []
    doc["spec"]["templates"][0]["outputs"]["parameters"][1]["valueFrom"]["parameter"] = "{{inputs.parameters.x}}"
    assert _problems(doc) == ["main: uses undeclared input parameter 'inputs.parameters.x'"]


def test_a_dag_task_reads_only_its_own_templates_inputs() -> None:
    doc = _doc()
    _tasks(doc)["a"]["arguments"]["parameters"][0]["value"] = "{{inputs.parameters.x}}"  # step's, not main's
    assert _problems(doc) == ["main/a: uses undeclared input parameter 'inputs.parameters.x'"]


def test_an_unknown_reference() -> None:
    doc = _doc()
    doc["spec"]["templates"][1]["container"]["args"].append("{{steps.x.outputs.result}}")
    assert _problems(doc) == ["step: unknown reference {{steps.x.outputs.result}}"]


@pytest.mark.parametrize(("arg", "stray"), [("k-{{", "{{"), ("{{{workflow.name}}}", "{{{workflow.name}}}"),
                                           ("a}}{{b", "{{b")])
def test_an_opening_that_starts_no_reference(arg: str, stray: str) -> None:
    """Argo takes every `{{` as the start of a reference: one never closed, or one with a third brace, fails the
    submission (the reference inside `{{{...}}}` is not read as one)."""
    doc = _doc()
    doc["spec"]["templates"][1]["container"]["args"].append(arg)
    assert _problems(doc) == [f"step: holds a '{{{{' that opens no reference (Argo refuses the template): "
                              f"{stray!r}"]


def test_a_workflow_parameters_enum_holds_its_value() -> None:
    """As Argo validates a workflow's arguments: an enum lists at least one value, and the value is among them."""
    doc = _doc()
    params = doc["spec"]["arguments"]["parameters"]
    params[0]["enum"] = ["r1", "r2"]
    assert _problems(doc) == []
    params[0]["enum"] = ["r2"]
    assert _problems(doc) == ["spec: workflow parameter 'run': value 'r1' is not one of its enum"]
    params[0]["enum"] = []
    assert _problems(doc) == ["spec: workflow parameter 'run' has an empty enum"]


def test_arguments_match_the_declared_inputs() -> None:
    doc = _doc()
    _tasks(doc)["a"]["arguments"]["parameters"] = [{"name": "extra", "value": "1"}, {"name": "opt", "value": "2"}]
    assert _problems(doc) == ["main/a: passes argument 'extra' that template 'step' does not declare",
                              "main/a: does not pass required input 'x' of template 'step'"]
    del _tasks(doc)["a"]["arguments"]
    assert _problems(doc) == ["main/a: does not pass required input 'x' of template 'step'"]


def test_an_input_with_a_value_needs_no_argument() -> None:
    doc = _doc()
    doc["spec"]["templates"][1]["inputs"]["parameters"][0]["value"] = "fixed"
    del _tasks(doc)["a"]["arguments"]
    assert lint_argo(doc) == []


def test_task_output_references() -> None:
    doc = _doc()
    tasks = _tasks(doc)
    tasks["b"]["arguments"]["parameters"][0]["value"] = "{{tasks.ghost.outputs.parameters.res}}"
    tasks["c"]["arguments"]["parameters"][0]["value"] = "{{tasks.a.outputs.parameters.nothing}}"
    tasks["a"]["arguments"]["parameters"][0]["value"] = "{{tasks.c.outputs.parameters.res}}"
    assert _problems(doc) == ["main/a: reads outputs of task 'c' without depending on it",
                              "main/b: references unknown task 'ghost'",
                              "main/c: task 'a' has no output parameter 'nothing'"]


def test_an_ancestor_through_others_may_be_read_but_not_a_descendant() -> None:
    """c depends on b only (b on a): it reads a's output, as Argo resolves it; b may not read c's."""
    doc = _doc()
    assert lint_argo(doc) == []
    _tasks(doc)["b"]["arguments"]["parameters"][0]["value"] = "{{tasks.c.outputs.parameters.res}}"
    assert _problems(doc) == ["main/b: reads outputs of task 'c' without depending on it"]


def test_a_task_does_not_depend_on_itself() -> None:
    doc = _doc()
    tasks = _tasks(doc)
    tasks["a"]["depends"] = "a"
    tasks["a"]["arguments"]["parameters"][0]["value"] = "{{tasks.a.outputs.parameters.res}}"
    assert "main/a: reads outputs of task 'a' without depending on it" in _problems(doc)


def test_a_dependency_cycle_ends() -> None:
    doc = _doc()
    tasks = _tasks(doc)
    tasks["a"]["depends"] = "c"
    assert lint_argo(doc) == []


def test_item_only_in_fan_out_tasks() -> None:
    doc = _doc()
    _tasks(doc)["b"]["arguments"]["parameters"][0]["value"] = "{{item.id}}"
    assert _problems(doc) == ["main/b: uses {{item}} outside a withParam/withItems task"]
    doc = _doc()
    fan = _tasks(doc)["fan"]
    fan["withItems"] = [1, 2]
    del fan["withParam"]
    assert lint_argo(doc) == []
    doc["spec"]["templates"][2]["container"]["args"].append("{{item}}")  # a template is no fan-out task
    assert _problems(doc) == ["each: uses {{item}} outside a withParam/withItems task"]


@pytest.mark.parametrize("source", ["{{tasks.a.outputs.parameters.res}}{{tasks.b.outputs.parameters.res}}",
                                    "[1, 2]"])
def test_with_param_is_exactly_one_reference(source: str) -> None:
    doc = _doc()
    _tasks(doc)["fan"]["withParam"] = source
    assert _problems(doc) == ["main/fan: withParam must be exactly one {{...}} reference"]


@pytest.mark.parametrize(("source", "problem"), [
    ("{{tasks.b.outputs.parameters.res}}", "main/fan: reads outputs of task 'b' without depending on it"),
    ("{{inputs.parameters.nope}}", "main/fan: uses undeclared input parameter 'inputs.parameters.nope'"),
    ("{{item}}", "main/fan: uses {{item}} outside a withParam/withItems task"),
])
def test_with_param_reads_a_declared_source(source: str, problem: str) -> None:
    doc = _doc()
    _tasks(doc)["fan"]["withParam"] = source
    assert _problems(doc) == [problem]


def test_a_dags_outputs_read_its_tasks() -> None:
    doc = _doc()
    main = doc["spec"]["templates"][0]
    main["outputs"]["parameters"][0]["valueFrom"]["parameter"] = "{{tasks.c.outputs.parameters.nothing}}"
    assert _problems(doc) == ["main: task 'c' has no output parameter 'nothing'"]
    main["outputs"]["parameters"][0]["valueFrom"]["parameter"] = "{{tasks.ghost.outputs.parameters.res}}"
    assert _problems(doc) == ["main: references unknown task 'ghost'"]


def test_a_leaf_may_not_read_tasks_and_its_own_inputs_section_is_not_read() -> None:
    doc = _doc()
    leaf = doc["spec"]["templates"][1]
    leaf["inputs"]["parameters"][1]["default"] = "{{workflow.parameters.run}}"
    assert lint_argo(doc) == []
    leaf["container"]["args"].append("{{tasks.a.outputs.parameters.res}}")
    assert lint_argo(doc) == []  # outside a DAG the reference is not a task's: Argo reports it itself


def test_the_document_is_not_changed() -> None:
    doc = _doc()
    _tasks(doc)["b"]["depends"] = "ghost"
    before = copy.deepcopy(doc)
    lint_argo(doc)
    assert doc == before


def _nameless_input(doc: dict[str, Any]) -> None:
    doc["spec"]["templates"][1]["inputs"]["parameters"].append({"value": "1"})


def _null_dag(doc: dict[str, Any]) -> None:
    doc["spec"]["templates"][0]["dag"] = None


def _task_no_mapping(doc: dict[str, Any]) -> None:
    doc["spec"]["templates"][0]["dag"]["tasks"].append("a")


def _nameless_workflow_argument(doc: dict[str, Any]) -> None:
    doc["spec"]["arguments"]["parameters"].append({"value": "1"})


@pytest.mark.parametrize(("break_it", "where", "error"), [
    (_nameless_input, "main", "KeyError: 'name'"),  # found checking a task of main
    (_null_dag, "main", "AttributeError"),
    (_task_no_mapping, "main", "AttributeError"),
    (_nameless_workflow_argument, "spec", "KeyError: 'name'"),
])
def test_a_malformed_document_is_a_problem_not_a_traceback(break_it: Any, where: str, error: str) -> None:
    """Before, the lint raised (KeyError, AttributeError) out of `alas engines lint`."""
    doc = _doc()
    break_it(doc)
    [problem] = lint_argo(doc)
    assert problem.where == where
    assert problem.message.startswith(f"is not a well-formed Argo document ({error}")


def test_the_cli_reports_a_malformed_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.cli import main

    doc = _doc()
    _null_dag(doc)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["engines", "lint", str(path)]) == 1
    out = capsys.readouterr()
    assert f"{path}: main: is not a well-formed Argo document (AttributeError" in out.out
    assert "1 of 1 files have problems" in out.err


def test_other_outputs_of_a_task_are_not_read_as_parameters() -> None:
    """Only ``outputs.parameters.x`` is checked against the template; a result or an artifact is Argo's."""
    doc = _doc()
    _tasks(doc)["c"]["arguments"]["parameters"][0]["value"] = (
        "{{tasks.a.outputs.result}} {{tasks.a.outputs.artifacts.log}} {{tasks.b.status}}")
    assert lint_argo(doc) == []


def test_reading_a_task_of_no_template() -> None:
    doc = _doc()
    _tasks(doc)["a"]["template"] = "gone"
    assert _problems(doc) == ["main/a: template 'gone' does not exist",
                              "main/b: task 'a' has no output parameter 'res'",
                              "main/c: task 'a' has no output parameter 'res'",
                              "main/fan: task 'a' has no output parameter 'res'"]
