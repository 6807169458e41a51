"""The names the Argo compiler and its reverse parser share (alas_argo.engines.argo_names), each against its
inverse on its own: a whole workflow's round trip records whatever the native reading misses (the policy
extras annotation), so there a wrong retry expression, duration or idempotency key does not show."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo, read_native
from alas_argo.errors import AlasError
from alas_argo.ir import Backoff, Idempotency, Node, Policy, Retry, Workflow
from alas_argo.log import FsStore
from alas_argo.runtime import render_key
from alas_argo.steps import StepInput, StepOutput, run_step

_TRANSIENT = ("asInt(lastRetry.exitCode) == 75 || asInt(lastRetry.exitCode) == 143 || "
              "lastRetry.status == 'Error'")
_TIMEOUT = "lastRetry.message contains 'deadline'"
_INTEGRITY = "asInt(lastRetry.exitCode) == 1"
_PERMANENT = "asInt(lastRetry.exitCode) == 2"
_WF = "{{workflow.name}}"


@pytest.mark.parametrize(("names", "expression"), [
    (["TransientError", "Timeout"], f"{_TRANSIENT} || {_TIMEOUT}"),
    (["Timeout", "TransientError"], f"{_TIMEOUT} || {_TRANSIENT}"),  # in the order the names come
    (["IntegrityError"], _INTEGRITY),
    # An alias is retried on its class's exit codes: the store being away is transient (exit 75), ...
    (["StoreUnavailable"], _TRANSIENT),
    # ... and so is losing a compare-and-swap: ConflictError exits 75, not 2 as a name Argo does not know would.
    (["ConflictError"], _TRANSIENT),
    # ... the permanent errors all exit 2, and one term is written once however many names share it.
    (["ContractError", "InputError", "PermanentError", "NoSolutionError"], _PERMANENT),
    # A name Argo cannot tell apart (a handler's own error class) exits 2, as every other permanent error.
    (["SolverGaveUp"], _PERMANENT),
    (["TransientError", "SolverGaveUp", "StoreUnavailable"], f"{_TRANSIENT} || {_PERMANENT}"),
    # Nothing to retry: Argo's expression language spells false in lower case (`FALSE` is an unknown name).
    ([], "false"),
])
def test_retry_expression_names_the_exit_codes_of_each_error(names: list[str], expression: str) -> None:
    assert nm.retry_expression(names) == ("Always", expression)


@pytest.mark.parametrize("names", [["*"], ["TransientError", "*"]])
def test_a_wildcard_retries_always_without_an_expression(names: list[str]) -> None:
    assert nm.retry_expression(names) == ("Always", None)


@pytest.mark.parametrize(("names", "canonical"), [
    (["TransientError", "Timeout"], ["TransientError", "Timeout"]),
    (["Timeout", "IntegrityError", "TransientError"], ["Timeout", "IntegrityError", "TransientError"]),
    (["StoreUnavailable", "ContractError", "SolverGaveUp"], ["TransientError", "PermanentError"]),
    ([], []),
    (["*"], ["*"]),
])
def test_retry_names_reads_the_expression_back_by_canonical_class(names: list[str], canonical: list[str]) -> None:
    assert nm.retry_names(*nm.retry_expression(names)) == canonical


@pytest.mark.parametrize(("policy", "expression", "names"), [
    (None, None, ["*"]),  # Argo's default retryPolicy without an expression retries every failure
    ("OnError", None, ["TransientError"]),
    ("OnFailure", None, ["TransientError"]),
    # A term written by hand that no IR error stands for is left out, not guessed.
    ("Always", "asInt(lastRetry.exitCode) == 3 || " + _TIMEOUT, ["Timeout"]),
])
def test_retry_names_of_a_hand_written_strategy(policy: str | None, expression: str | None,
                                                names: list[str]) -> None:
    assert nm.retry_names(policy, expression) == names


@pytest.mark.parametrize(("seconds", "text"), [(2, "2s"), (2.0, "2s"), (0.25, "0.25s"), (90.5, "90.5s"),
                                               (0, "0s")])
def test_format_duration_and_its_inverse(seconds: float, text: str) -> None:
    assert nm.format_duration(seconds) == text
    assert nm.parse_duration(text) == seconds


@pytest.mark.parametrize(("text", "seconds"), [
    ("1m30s", 90.0), ("1h", 3600.0), ("250ms", 0.25), ("1.5h", 5400.0), ("2h0m1s", 7201.0),
    # Argo's IntOrString fields: a bare number is seconds, as an int or as a string.
    (30, 30.0), ("30", 30.0),
])
def test_parse_duration_reads_go_durations_and_bare_seconds(text: str | int, seconds: float) -> None:
    assert nm.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "1m30x", "x1m", "1 m", "-1s", "1us"])
def test_parse_duration_refuses_what_is_not_wholly_a_duration(text: str) -> None:
    with pytest.raises(ValueError) as err:
        nm.parse_duration(text)
    assert str(err.value) == f"not a duration: {text!r}"


def test_placeholders_are_the_names_between_braces() -> None:
    assert nm.placeholders("{run}-{node}/{first_step.jobs}:{inputs.mode}") == [
        "run", "node", "first_step.jobs", "inputs.mode"]
    assert nm.placeholders("{{workflow.name}} {}") == ["workflow.name", ""]
    assert nm.placeholders("no placeholder") == []


def test_key_to_argo_writes_each_placeholder_in_argos_syntax() -> None:
    key = "{run}-{node}-{inputs.mode}-{first_step.jobs}-{elsewhere.x}"
    assert nm.key_to_argo(key, node_id="Fan_Out", run=_WF, deps=["first_step"], has_item=False) == (
        # The node's template name; a run input is a workflow parameter; a dependency's field is that
        # dependency's output key, handed to the task as its in-<dep> parameter (unique per run and output);
        # a name the node is handed nothing for stands for the run.
        "{{workflow.name}}-fan-out-{{workflow.parameters.mode}}-{{inputs.parameters.in-first-step}}"
        "-{{workflow.name}}")


@pytest.mark.parametrize(("has_item", "value"), [(True, "{{inputs.parameters.item}}"), (False, "none")])
def test_key_to_argo_gives_an_item_only_inside_a_map(has_item: bool, value: str) -> None:
    assert nm.key_to_argo("{run}/{item}/{index}", node_id="n", run="R", deps=[], has_item=has_item) == (
        f"R/{value}/{value}")


def test_key_to_argo_names_the_whole_run_input_path() -> None:
    """Everything after `inputs.` is the parameter's name: a nested path names a parameter Argo's lint then
    reports as undeclared, never silently another parameter (its first or last part)."""
    assert nm.key_to_argo("{inputs.cfg.depth}", node_id="n", run="R", deps=[], has_item=False) == (
        "{{workflow.parameters.cfg.depth}}")
    # Only `inputs.<name>` is a run input; a bare `{inputs}` is nothing the node is handed.
    assert nm.key_to_argo("{inputs}", node_id="n", run="R", deps=["inputs"], has_item=False) == (
        "{{inputs.parameters.in-inputs}}")
    assert nm.key_to_argo("{inputs}", node_id="n", run="R", deps=[], has_item=False) == "R"


@pytest.mark.parametrize("run", [_WF, "{{workflow.parameters.run-id}}"])
def test_key_from_argo_inverts_what_it_can(run: str) -> None:
    key = "{run}:{node}:{item}:{inputs.mode}:{inputs.run-kind}"
    argo = nm.key_to_argo(key, node_id="fan_out", run=run, deps=[], has_item=True)
    assert nm.key_from_argo(argo, node_id="fan_out", run=run) == key


def test_key_from_argo_reads_the_node_only_as_a_whole_name() -> None:
    argo = "{{workflow.name}}-a-ab-ba-a"
    assert nm.key_from_argo(argo, node_id="a", run=_WF) == "{run}-{node}-ab-ba-{node}"
    # What it cannot invert (an index reads as the item; a dependency's key, no item) the compiler records.
    assert nm.key_from_argo("{{inputs.parameters.item}}-none-{{inputs.parameters.in-b}}", node_id="a",
                            run=_WF) == "{item}-none-{{inputs.parameters.in-b}}"


def test_dns_makes_a_template_name_of_a_node_id() -> None:
    assert nm.dns("First_Step_2") == "first-step-2"
    assert (nm.MAIN, nm.EXIT_HANDLER, nm.COMPENSATE, nm.OUTPUTS) == ("main", "exit-handler", "compensate",
                                                                     "/tmp/outputs")
    assert nm.ANN_POLICY == "alas-argo.dev/policy" and nm.LABEL_VERSION == "alas-argo.dev/ir-version"


@pytest.mark.parametrize(("seconds", "text"), [(5e-05, "0.00005s"), (1.25e-07, "0.000000125s"),
                                               (0.0001, "0.0001s")])
def test_a_duration_below_a_ten_thousandth_of_a_second_is_written_without_an_exponent(seconds: float,
                                                                                      text: str) -> None:
    """Python's repr writes 5e-05; a Go duration has no exponent, and parse_duration refused it, so the
    compiler failed with a ValueError on a valid policy (backoff initial >= 0, timeout > 0)."""
    assert nm.format_duration(seconds) == text
    assert nm.parse_duration(text) == seconds


def test_a_policy_of_tiny_durations_compiles_and_reads_back() -> None:
    wf = Workflow(name="tiny", nodes=[Node(id="work", role="solver", policy_ref="p")],
                  policies={"p": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=5e-05)),
                                        timeout=5e-05)})
    doc = to_argo(wf, image="alas:test")
    work = next(t for t in doc["spec"]["templates"] if t["name"] == "work")
    assert work["retryStrategy"]["backoff"]["duration"] == "0.00005s"
    assert work["timeout"] == "0.00005s"
    assert read_native(doc)["policies"]["p"]["timeout"] == 5e-05
    assert from_argo(doc) == wf


def test_a_key_naming_a_param_carries_the_params_value_as_the_local_runtime_does() -> None:
    """A node's params are fixed when it compiles; the local runtime fills `{<param>}` (and a path into one)
    with the value. The compiler wrote the run instead, so two nodes sharing a keyed policy whose params differ
    got one key on Argo, and the second reused the first's recorded output (`idempotency/<key>` in the log)."""
    params = {"mode": "fast", "cfg": {"depth": 3, "tags": ["x", "y"]}}
    key = "{run}-{mode}-{cfg.depth}-{cfg.tags.1}-{cfg.tags.-1}-{cfg.tags.-2}-{cfg}"
    argo = nm.key_to_argo(key, node_id="a", run="R", deps=[], has_item=False, params=params)
    assert argo == 'R-fast-3-y-y-x-{"depth":3,"tags":["x","y"]}'
    assert argo == render_key(key, {"node": "a", "run": "R", "inputs": {}, **params}, node_id="a")
    # A path into a param that resolves to nothing (the local runtime refuses it when the node runs).
    # ("a" is in the string "fast", but a string has no fields.)
    assert nm.key_to_argo("{mode.a}-{cfg.tags.2}-{cfg.tags.-3}-{cfg.none}", node_id="a", run="R", deps=[],
                          has_item=False, params=params) == "R-R-R-R"
    # A dependency's output wins over a param of its name, as in the local runtime's scope.
    assert nm.key_to_argo("{mode}", node_id="a", run="R", deps=["mode"], has_item=False, params=params) == (
        "{{inputs.parameters.in-mode}}")


def test_nodes_sharing_a_keyed_policy_keep_their_own_keys_on_argo() -> None:
    wf = Workflow(name="keys", nodes=[Node(id="a", role="solver", params={"mode": "fast"}, policy_ref="k"),
                                      Node(id="b", role="solver", params={"mode": "slow"}, policy_ref="k")],
                  policies={"k": Policy(idempotency=Idempotency(key="{run}-{mode}"))})
    doc = to_argo(wf, image="alas:test")
    keys = {t["name"]: args[args.index("--idempotency-key") + 1] for t in doc["spec"]["templates"]
            if "--idempotency-key" in (args := (t.get("container") or {}).get("args") or [])}
    assert keys == {"a": "{{workflow.name}}-fast", "b": "{{workflow.name}}-slow"}
    assert from_argo(doc) == wf  # the template read back from the policy annotation


def test_a_keyed_maps_items_each_get_their_own_key(tmp_path: Path) -> None:
    """Every item pod of a map runs under the node's policy. With the node's key alone, all of them were handed
    one key, and `alas step` returned the first item's recorded output (`idempotency/<key>`) for every other
    item: a map of n items gave n copies of one result. Each item's key now ends with the item."""
    wf = Workflow(name="keys", nodes=[Node(id="cases_in", kind="map", role="case", items="inputs.cases",
                                           policy_ref="k")],
                  policies={"k": Policy(idempotency=Idempotency(key="{run}/{node}"))},
                  meta={"inputs": {"cases": "[1, 2]"}})
    doc = to_argo(wf, image="alas:test")
    args = next(t for t in doc["spec"]["templates"] if t["name"] == "cases-in-item")["container"]["args"]
    key = args[args.index("--idempotency-key") + 1]
    assert key == "{{workflow.name}}/cases-in/{{inputs.parameters.item}}"
    assert from_argo(doc) == wf  # the template read back from the policy annotation
    # What the item pods then do, with the key as Argo fills it in for each item.
    store = FsStore(tmp_path)
    outputs = [run_step(StepInput(kind="case", node="cases_in", run_id="r", scope="wf", item=item,
                                  idempotency_key=key.replace("{{workflow.name}}", "r").replace(
                                      "{{inputs.parameters.item}}", item)),
                        store, {"case": lambda ctx: StepOutput({"item": ctx.input.item})}).doc
               for item in ("1", "2")]
    assert outputs == [{"item": "1"}, {"item": "2"}]


def test_an_item_placeholder_is_not_added_twice() -> None:
    assert nm.key_to_argo("{run}-{index}", node_id="m", run="R", deps=[], has_item=True) == (
        "R-{{inputs.parameters.item}}")
    assert nm.key_to_argo("{run}-{node}", node_id="m", run="R", deps=[], has_item=False) == "R-m"


def _subclasses(cls: type[AlasError]) -> list[type[AlasError]]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_subclasses(sub))]


def test_every_error_class_of_the_package_is_retried_by_its_own_exit_code() -> None:
    """A policy's retry_on names error classes; Argo sees only the step's exit code. Each of the package's error
    classes (every module imported) must render as the code it exits with, or a node meant to retry an LLM
    outage (LlmUnavailable, exit 75) would be retried on permanent errors (exit 2) instead."""
    import importlib
    import pkgutil

    import alas_argo

    for module in pkgutil.walk_packages(alas_argo.__path__, "alas_argo."):
        importlib.import_module(module.name)
    terms = {75: "asInt(lastRetry.exitCode) == 75", 1: "asInt(lastRetry.exitCode) == 1",
             2: "asInt(lastRetry.exitCode) == 2"}
    wrong: dict[str, str | None] = {}
    # The package's own classes only: tests define subclasses of their own (run in the same process).
    classes: set[type[AlasError]] = {c for c in {*_subclasses(AlasError), AlasError}
                                     if c.__module__.startswith("alas_argo.")}
    for cls in classes:
        _, expression = nm.retry_expression([cls.__name__])
        # The runtime's node timeout is the pod's deadline on Argo.
        want = "lastRetry.message contains 'deadline'" if cls.__name__ == "NodeTimeout" else terms[cls.exit_code]
        if expression is None or want not in expression:
            wrong[cls.__name__] = expression
    assert not wrong
