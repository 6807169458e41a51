"""Regressions found by the random-structure fuzz (tests/engines/test_random_workflows.py): valid IR workflows
on which a compiler rendered a document its own checks reject. Each is refused or rendered correctly now."""

from __future__ import annotations

import json

import pytest
from statelint.config import Config
from statelint.linter import Linter

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl, read_native
from alas_argo.engines.conformance import UnsupportedFeature
from alas_argo.engines.lint import lint_argo
from alas_argo.ir import Branch, Catch, Condition, Edge, Idempotency, Node, Policy, Workflow


@pytest.mark.parametrize("declared", [True, False])
@pytest.mark.parametrize("feature", ["gate", "map"])
def test_argo_refuses_a_gate_or_items_on_an_undeclared_input(feature: str, declared: bool) -> None:
    """An undeclared run input has no workflow parameter: `{{workflow.parameters.jobs}}` would fail the submission
    (the project's lint says so); the compiler refuses instead of rendering it."""
    node = (Node(id="b", role="y", when=Condition(path="inputs.jobs", op="eq", value=1)) if feature == "gate"
            else Node(id="b", kind="map", role="y", items="inputs.jobs"))
    wf = Workflow(name="w", nodes=[Node(id="a", role="x"), node], edges=[Edge(source="a", target="b")],
                  meta={"inputs": {"jobs": "[1]"}} if declared else {})
    if declared:
        assert lint_argo(to_argo(wf, image="alas:test")) == []
        return
    with pytest.raises(UnsupportedFeature, match="does not declare") as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == ("b", feature)


def _statelint(doc: dict[str, object]) -> list[str]:
    return [str(p) for p in Linter.validate(json.dumps(doc), Config([], False, False))]


def test_asl_puts_a_map_nodes_catch_on_the_map_state() -> None:
    """A Catch inside the Map's item processor cannot name a state outside it: the routes sit on the Map state
    (an item's failure fails it), and the native reading finds them there."""
    wf = Workflow(name="w", nodes=[Node(id="m", kind="map", role="x", items="inputs.jobs", policy_ref="p"),
                                   Node(id="h", role="y")],
                  policies={"p": Policy(catch=[Catch(errors=["ContractError"], next="h")])},
                  meta={"inputs": {"jobs": "[1]"}})
    doc = to_asl(wf)
    assert _statelint(doc) == []
    assert [c["Next"] for c in doc["States"]["m"]["Catch"]] == ["h"]
    assert read_native(doc)["policies"]["p"]["catch"] == [{"errors": ["ContractError"], "next": "h"}]
    assert from_asl(doc) == wf


def test_asl_refuses_a_parallel_branch_catching_into_its_own_parallel_node() -> None:
    """A branch's Catch would name a state outside its branch; a catch route is another dependency of the branch
    (refused like any other), even when it goes to the parallel node itself."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x", policy_ref="p"),
                                   Node(id="g", kind="parallel", branches=["a"])],
                  policies={"p": Policy(catch=[Catch(errors=["*"], next="g")])})
    with pytest.raises(UnsupportedFeature, match="Parallel branch") as e:
        to_asl(wf)
    assert (e.value.node, e.value.feature) == ("a", "parallel")


@pytest.mark.parametrize("routes", [[["*"], ["ContractError"]], [["*", "Timeout"]], [["Timeout"], ["*"], ["X"]]])
def test_asl_writes_no_catch_route_after_a_wildcard_route(routes: list[list[str]]) -> None:
    """Routes are tried in order, so none after a '*' route is ever taken; ASL allows States.ALL only alone in the
    last route. The dead routes stay out of the state (the Comment keeps them for the round trip)."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x", policy_ref="p"), Node(id="h", role="y")],
                  edges=[Edge(source="a", target="h")],
                  policies={"p": Policy(catch=[Catch(errors=e, next="h") for e in routes])})
    doc = to_asl(wf)
    assert _statelint(doc) == []
    assert doc["States"]["a"]["Catch"][-1]["ErrorEquals"] == ["States.ALL"]
    assert from_asl(doc) == wf


def test_asl_drops_a_handler_only_a_dead_catch_route_names() -> None:
    """A handler named only by a route after a '*' route never runs (locally neither): its state, which nothing
    enters, is left out (statelint: no transition found to it) and the Comment keeps the node."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x", policy_ref="p"), Node(id="h", role="y"),
                                   Node(id="k", role="y")],
                  policies={"p": Policy(catch=[Catch(errors=["*"], next="h"), Catch(errors=["X"], next="k")])})
    doc = to_asl(wf)
    assert _statelint(doc) == []
    assert "k" not in doc["States"]
    assert from_asl(doc) == wf


def test_asl_refuses_a_node_chained_after_a_choice_that_cannot_reach_it() -> None:
    """A Choice state goes only to its targets: a node chained after it that no target leads to would never run
    (it runs locally), so the compiler refuses instead of leaving it unreachable."""
    wf = Workflow(name="w", nodes=[
        Node(id="c", kind="choice", choices=[Branch(when=Condition(path="inputs.mode", value="a"), next="t")],
             default="t"),
        Node(id="x", role="y"), Node(id="t", role="z")], meta={"inputs": {"mode": "a"}})
    with pytest.raises(UnsupportedFeature, match="cannot be reached") as e:
        to_asl(wf)
    assert (e.value.node, e.value.feature) == ("x", "choice")


@pytest.mark.parametrize("declared", [True, False])
def test_argo_refuses_an_idempotency_key_on_an_undeclared_input(declared: bool) -> None:
    """`{inputs.instance}` in a key is `{{workflow.parameters.instance}}` on Argo: only a declared input has one."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x", policy_ref="p")],
                  policies={"p": Policy(idempotency=Idempotency(key="{run}-{inputs.instance}"))},
                  meta={"inputs": {"instance": "ft06"}} if declared else {})
    if declared:
        assert lint_argo(to_argo(wf, image="alas:test")) == []
        return
    with pytest.raises(UnsupportedFeature, match="does not declare") as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == ("a", "idempotency")


def test_asl_refuses_a_choice_node_as_a_parallel_branch() -> None:
    """A Choice state inside a branch would go to a state outside it (its targets are arcs of the branch, refused
    like any other, even when the target is the parallel node itself)."""
    wf = Workflow(name="w", nodes=[
        Node(id="c", kind="choice", choices=[Branch(when=Condition(path="inputs.mode", value="a"), next="g")]),
        Node(id="g", kind="parallel", branches=["c"])], meta={"inputs": {"mode": "a"}})
    with pytest.raises(UnsupportedFeature, match="Parallel branch") as e:
        to_asl(wf)
    assert (e.value.node, e.value.feature) == ("c", "parallel")


def test_asl_refuses_a_node_id_that_starts_with_an_underscore() -> None:
    """`$.results._a` is no Reference Path (a step starts with a letter; statelint refuses it): the node's
    ResultPath cannot name it, so the compiler refuses the id instead of rendering it."""
    wf = Workflow(name="w", nodes=[Node(id="_a", role="x")])
    with pytest.raises(UnsupportedFeature, match="start with a letter") as e:
        to_asl(wf)
    assert (e.value.node, e.value.feature) == ("_a", "node_id")
    assert _statelint(to_asl(Workflow(name="w", nodes=[Node(id="a_", role="x")]))) == []


@pytest.mark.parametrize("value", ["it's", "a\\", "{{workflow.name}}"])
def test_argo_refuses_a_gate_string_it_cannot_quote(value: str) -> None:
    """The gate's string is written between single quotes in the task's `when`: a quote ended it early (Argo could
    not parse `'x' == 'it's'`), a backslash escaped the closing quote, and `{{...}}` Argo would substitute."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x", when=Condition(path="inputs.mode", value=value))],
                  meta={"inputs": {"mode": "x"}})
    with pytest.raises(UnsupportedFeature, match="gate") as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == ("a", "gate")  # the gated node, not the condition's 'inputs'
    ok = wf.model_copy(update={"nodes": [Node(id="a", role="x", when=Condition(path="inputs.mode", value="it s"))]})
    assert to_argo(ok, image="alas:test")["spec"]["templates"][0]["dag"]["tasks"][0]["when"] \
        == "'{{workflow.parameters.mode}}' == 'it s'"


@pytest.mark.parametrize("feature", ["gate", "map"])
def test_argo_refuses_a_gate_or_items_reading_a_map_nodes_output(feature: str) -> None:
    """A map's DAG template has no output parameters: `{{tasks.m.outputs.parameters.count}}` names none (the
    project's lint says so), so the compiler refuses instead of rendering it."""
    second = (Node(id="b", role="y", when=Condition(path="m.count", op="eq", value=1)) if feature == "gate"
              else Node(id="b", kind="map", role="y", items="m.jobs"))
    wf = Workflow(name="w", nodes=[Node(id="m", kind="map", role="x", items="inputs.jobs"), second],
                  edges=[Edge(source="m", target="b")], meta={"inputs": {"jobs": "[1]"}})
    with pytest.raises(UnsupportedFeature, match="map node's output") as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == ("b", feature)


def test_argo_writes_no_braces_of_the_ir_that_argo_would_substitute() -> None:
    """Argo substitutes every `{{...}}` in a template: a param, description or contract holding one was rendered
    as is (`{{x}}` fails the submission, `{{workflow.name}}` silently became the workflow's name). The JSON the
    compiler writes spells such a string's `{{` as `{\\u007b`, the same JSON."""
    wf = Workflow(name="w", description="{{x}}", nodes=[
        Node(id="a", role="x", description="{{x}}", params={"k": "{{workflow.name}}-z", "{{x}}": 1},
             output={"type": "object", "description": "{{x}}"})])
    doc = to_argo(wf, image="alas:test")
    assert lint_argo(doc) == []
    text = json.dumps(doc)
    assert "{{x}}" not in text and "{{workflow.name}}-z" not in text
    assert from_argo(doc) == wf


def _argo_refuses_or_renders_clean(wf: Workflow, refused: bool, says: str, where: tuple[str, str]) -> None:
    """``to_argo`` refuses ``wf`` naming ``where`` (node, feature) with a message matching ``says``, or, when it is
    not to be refused, renders a document the project's lint finds clean."""
    if not refused:
        assert lint_argo(to_argo(wf, image="alas:test")) == []
        return
    with pytest.raises(UnsupportedFeature, match=says) as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == where


def test_argo_refuses_an_idempotency_key_naming_a_param_that_holds_braces() -> None:
    """A `{<param>}` placeholder is written into the key as the param's value, where Argo would substitute the
    `{{workflow.name}}` it holds: the key Argo checks would differ from the local one."""
    policy = Policy(idempotency=Idempotency(key="{run}-{y}"))
    for value, refused in (("{{workflow.name}}-z", True), (["{{x}}"], True), ("plain", False)):
        wf = Workflow(name="w", nodes=[Node(id="a", role="x", policy_ref="p", params={"y": value})],
                      policies={"p": policy})
        _argo_refuses_or_renders_clean(wf, refused, "Argo would substitute", ("a", "idempotency"))


@pytest.mark.parametrize("params", [{"k.$": "nope"}, {"j": {"m.$": "$.inputs"}}, {"l": [{"n.$": "$"}]}])
def test_asl_refuses_a_param_key_ending_in_dollar(params: dict[str, object]) -> None:
    """A Parameters key ending in `.$` is a path to ASL: `"k.$": "nope"` is an invalid machine (statelint) and
    `"m.$": "$.inputs"` silently handed the task the run's inputs under the key `m` instead of the param."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x", params=params)])
    with pytest.raises(UnsupportedFeature, match="ends in") as e:
        to_asl(wf)
    assert (e.value.node, e.value.feature) == ("a", "params")
    assert _statelint(to_asl(Workflow(name="w", nodes=[Node(id="a", role="x", params={"k$": "$.x"})]))) == []


@pytest.mark.parametrize("items", ["a", "inputs", "inputs.jobs.sub"])
def test_argo_refuses_map_items_that_are_no_parameter(items: str) -> None:
    """Items naming a whole document (`a`, `inputs`: valid IR, the local runtime fans out over it) ended in a
    ValueError traceback, and a field inside a run input rendered `{{workflow.parameters.jobs.sub}}`, a parameter
    the workflow lacks (the project's lint flags it); both are refused now. `a.jobs` still compiles."""
    def wf(path: str) -> Workflow:
        return Workflow(name="w", nodes=[Node(id="a", role="x"), Node(id="m", kind="map", role="y", items=path)],
                        edges=[Edge(source="a", target="m")], meta={"inputs": {"jobs": "[1]"}})
    with pytest.raises(UnsupportedFeature, match="no Argo parameter") as e:
        to_argo(wf(items), image="alas:test")
    assert (e.value.node, e.value.feature) == ("m", "map")
    assert lint_argo(to_argo(wf("a.jobs"), image="alas:test")) == []


@pytest.mark.parametrize("field", ["sub.x", "é"])
def test_argo_refuses_items_or_a_gate_on_a_field_no_output_parameter_can_name(field: str) -> None:
    """`<node>.sub.x` became an output parameter named `sub.x`, which Argo's schema refuses (names are letters,
    digits, `-` and `_`); a gate on `a.é` likewise (refused at the gated node, whose IR to change, not at `a`)."""
    items = Workflow(name="w", nodes=[Node(id="a", role="x"), Node(id="m", kind="map", role="y", items=f"a.{field}")],
                     edges=[Edge(source="a", target="m")])
    gate = Workflow(name="w", nodes=[Node(id="a", role="x"),
                                     Node(id="b", role="y", when=Condition(path=f"a.{field}", op="eq", value=1))],
                    edges=[Edge(source="a", target="b")])
    for wf, node, feature in ((items, "m", "map"), (gate, "b", "gate")):
        with pytest.raises(UnsupportedFeature) as e:
            to_argo(wf, image="alas:test")
        assert (e.value.node, e.value.feature) == (node, feature)


def test_asl_refuses_two_node_ids_that_make_one_result_path() -> None:
    """`a-b` and `a_b` are one Reference Path step (`$.results.a_b`): one node's result and error overwrote the
    other's, silently (the round trip stayed lossless, so the random-structure fuzz could not see it; its helper
    noted it). Argo, whose template names are DNS labels, refuses `a_b` on its own rule."""
    wf = Workflow(name="w", nodes=[Node(id="a-b", role="x"), Node(id="a_b", role="y")],
                  edges=[Edge(source="a-b", target="a_b")])
    with pytest.raises(UnsupportedFeature) as e:
        to_asl(wf)
    assert (e.value.node, e.value.feature) == ("a_b", "node_id")
    assert "its result path $.results.a_b is node a-b's too" in str(e.value)
    apart = Workflow(name="w", nodes=[Node(id="a-b", role="x"), Node(id="a_c", role="y")],
                     edges=[Edge(source="a-b", target="a_c")])
    assert _statelint(to_asl(apart)) == []


@pytest.mark.parametrize(("inputs", "said"), [
    ({"job count": "3"}, "a run input's name is a workflow parameter name"),
    ({"a.b": "3"}, "a run input's name is a workflow parameter name"),
    ({"k=v": "3"}, "a run input's name is a workflow parameter name"),
    ({"jobs": "{{workflow.name}}"}, "its default holds '{{'")])
def test_argo_refuses_a_declared_input_it_cannot_pass_on(inputs: dict[str, str], said: str) -> None:
    """`meta.inputs` went into Argo as written (noticed by the IR fuzz helper): a name with a space or a dot is no
    workflow parameter name (Argo's schema refuses it), `k=v` would be read back by the pod as `k` (`--run-input
    k=v=...`), and a default holding `{{...}}` is substituted by Argo."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x")], meta={"inputs": inputs})
    with pytest.raises(UnsupportedFeature, match=said) as e:
        to_argo(wf, image="alas:test")
    assert (e.value.node, e.value.feature) == (f"meta.inputs.{next(iter(inputs))}", "inputs")
    fine = Workflow(name="w", nodes=[Node(id="a", role="x")], meta={"inputs": {"job-count_2": "3"}})
    assert lint_argo(to_argo(fine, image="alas:test")) == []


@pytest.mark.parametrize(("key", "refused"), [("k-{{", True), ("{{run}}", True), ("{{a.out}}", True),
                                             ("x{{y}}", False), ("a}}b", False), ("{run}{", False)])
def test_argo_refuses_an_idempotency_key_whose_braces_argo_would_read(key: str, refused: bool) -> None:
    """Braces a key template holds as text are the key's own locally; Argo takes every `{{` as a reference's start,
    so `k-{{` (never closed) and `{{run}}` (rendered `{{{workflow.name}}}`) would fail the submission, which the
    project's lint did not see either. A `{{<param>}}` is the param's value between single braces: kept."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x"), Node(id="b", role="x", policy_ref="p", params={"y": "v"})],
                  edges=[Edge(source="a", target="b")], policies={"p": Policy(idempotency=Idempotency(key=key))})
    _argo_refuses_or_renders_clean(wf, refused, "braces Argo would read", ("b", "idempotency"))


@pytest.mark.parametrize(("enums", "says"), [
    ({"n": ["x"]}, "does not declare"), ({"m": "xy"}, "non-empty list"), ({"m": []}, "non-empty list"),
    ({"m": [True]}, "non-empty list"), ({"m": ["y"]}, "is not one of the values"),
    ({"m": ["x", "{{workflow.name}}"]}, "Argo would substitute"), (["m"], "a mapping")])
def test_argo_refuses_input_enums_it_cannot_render(enums: object, says: str) -> None:
    """`meta.input_enums` becomes each workflow parameter's `enum`: an enum naming an undeclared input was dropped
    silently, a string split into its letters, a value holding `{{` substituted, and a default outside its enum
    refused by Argo at submission (the project's lint now says so too)."""
    wf = Workflow(name="w", nodes=[Node(id="a", role="x")], meta={"inputs": {"m": "x"}, "input_enums": enums})
    with pytest.raises(UnsupportedFeature, match=says) as e:
        to_argo(wf, image="alas:test")
    assert e.value.feature == "inputs" and str(e.value.node).startswith("meta.input_enums")
    ok = wf.model_copy(update={"meta": {"inputs": {"m": "1"}, "input_enums": {"m": [0, 1, "x"]}}})
    doc = to_argo(ok, image="alas:test")
    assert doc["spec"]["arguments"]["parameters"] == [{"name": "m", "value": "1", "enum": ["0", "1", "x"]}]
    assert lint_argo(doc) == []
