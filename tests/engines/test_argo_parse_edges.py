"""Reading Argo back (alas_argo.engines.argo_parse) where the round trip cannot see it: the compiler records
whatever the native reading gets wrong as annotations, so a misread native field round-trips anyway. Here the
native reading is checked on its own (a workflow of native features needs no annotation at all), on documents
edited by hand, and the refusals name where."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo, read_native
from alas_argo.errors import InputError
from alas_argo.ir import (
    Backoff,
    Branch,
    Catch,
    Condition,
    Edge,
    Idempotency,
    Loop,
    LoopGuard,
    Node,
    Policy,
    RepairSpec,
    Retry,
    Workflow,
)


def _native_workflow() -> Workflow:
    """Only what Argo's own fields say. Ids with underscores, so a task name is never read as a node id."""
    return Workflow(
        name="native", version=4,
        nodes=[
            Node(id="first_step", role="blueprint", params={"n": 2}, policy_ref="io"),
            Node(id="fan_out", kind="map", role="agent", items="first_step.jobs", max_concurrency=3,
                 policy_ref="fixed", repair=RepairSpec(patch="patcher")),
            Node(id="bench", kind="map", role="case", items="inputs.cases"),
            Node(id="check_a", role="validator"), Node(id="check_b", role="validator"),
            Node(id="checks", kind="parallel", branches=["check_a", "check_b"]),
            Node(id="late", role="solver", when=Condition(path="first_step.count", op="ge", value=2)),
            Node(id="by_mode", role="solver", when=Condition(path="inputs.mode", op="eq", value="fast", negate=True)),
            Node(id="by_score", role="solver", when=Condition(path="first_step.score", op="lt", value=2.5)),
            Node(id="joined", role="merge", join="any_of"),
            Node(id="commit", role="commit", compensation="undo"),
            Node(id="undo", role="revert"),
            Node(id="fragile", role="risky", policy_ref="caught",
                 loop=Loop(until=Condition(path="output.ok", op="truthy"))),
            Node(id="on_error", role="report"),
            Node(id="route", kind="choice", default="small",
                 choices=[Branch(when=Condition(path="first_step.count", op="gt", value=2), next="big")]),
            # A choice target with a gate of its own: its when is the choice's and the gate, both read.
            Node(id="big", role="solve", when=Condition(path="first_step.count", op="ge", value=1)),
            Node(id="small", role="solve"),
            Node(id="fix_up", role="fixer", repair=RepairSpec(patch="patcher", replan="planner"), policy_ref="keyed"),
        ],
        # In the order of the DAG's tasks (the reading lists a task's edges where the task stands).
        edges=[Edge(source="first_step", target="fan_out"), Edge(source="fan_out", target="checks"),
               Edge(source="first_step", target="late"), Edge(source="first_step", target="by_score"),
               Edge(source="late", target="joined"), Edge(source="bench", target="joined"),
               Edge(source="checks", target="commit"), Edge(source="joined", target="commit"),
               Edge(source="first_step", target="route")],
        policies={
            "io": Policy(retry=Retry(max_attempts=4, backoff=Backoff(kind="exponential", initial=2, factor=3)),
                         timeout=60),
            "caught": Policy(catch=[Catch(errors=["*"], next="on_error")],
                             loop_guard=LoopGuard(max_iters=3, deadline=30), timeout=1.5),
            "keyed": Policy(idempotency=Idempotency(key="{run}-{node}"), retry=Retry(max_attempts=3, retry_on=["*"]),
                            catch=[Catch(errors=["*"], next="on_error")]),
            "fixed": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="fixed", initial=5))),
        },
        meta={"inputs": {"cases": "[1]", "mode": "fast"}, "input_enums": {"mode": ["fast", "slow"]}})


def _minimal(policy: Policy | None = None) -> dict[str, Any]:
    wf = Workflow(name="small", nodes=[Node(id="work", role="solver", policy_ref="p" if policy else None)],
                  policies={"p": policy} if policy else {})
    return copy.deepcopy(to_argo(wf, image="alas:test"))


def _template(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(t for t in doc["spec"]["templates"] if t["name"] == name)


def test_a_workflow_of_native_features_reads_back_from_argos_own_fields() -> None:
    """Choice and parallel fan-ins, a catch, maps from a task and from an input, gates on a task output and on
    an input (string, int, float, negated), an any_of join, a compensation, ladders, deadlines both ways, a
    loop guard, a key: Argo says all of it, so no annotation carries any of it."""
    wf = _native_workflow()
    doc = to_argo(wf, image="alas:test")
    assert "annotations" not in doc["metadata"]
    extras = {t["name"]: k for t in doc["spec"]["templates"]
              for k in ((t.get("metadata") or {}).get("annotations") or {})
              if k in (nm.ANN_NODE_EXTRAS, nm.ANN_POLICY_EXTRAS)}
    assert extras == {}
    assert read_native(doc) == wf.to_json()
    assert from_argo(doc) == wf


@pytest.mark.parametrize(("edit", "field", "value"), [
    # backoff.cap is Argo v3.7's; the compiler never writes it (it targets v3.6.5), a newer document may.
    (lambda r: r["backoff"].update(cap="1m"), "backoff", {"kind": "exponential", "initial": 2.0, "factor": 3.0,
                                                         "jitter": 0.0, "max": 60.0}),
    # No factor: Argo waits the same duration every time.
    (lambda r: r["backoff"].pop("factor"), "backoff", {"kind": "fixed", "initial": 2.0, "factor": 2.0,
                                                       "jitter": 0.0}),
    # A retryPolicy other than Always, no expression: only errors (transient), never a failed exit.
    (lambda r: (r.pop("expression", None), r.update(retryPolicy="OnError")), "retryOn", ["TransientError"]),
    (lambda r: (r.pop("expression", None), r.pop("retryPolicy")), "retryOn", ["*"]),
    # Argo's limit is an IntOrString (the compiler writes a string).
    (lambda r: r.update(limit=5), "maxAttempts", 6),
    # No backoff: Argo retries at once.
    (lambda r: r.pop("backoff"), "backoff", {"kind": "fixed", "initial": 0.0, "factor": 2.0, "jitter": 0.0}),
    (lambda r: r.update(backoff=None), "backoff", {"kind": "fixed", "initial": 0.0, "factor": 2.0, "jitter": 0.0}),
])
def test_a_hand_edited_retry_strategy_reads_as_argo_runs_it(edit: Any, field: str, value: Any) -> None:
    doc = _minimal(Policy(retry=Retry(max_attempts=4, backoff=Backoff(initial=2, factor=3))))
    edit(_template(doc, "work")["retryStrategy"])
    assert read_native(doc)["policies"]["p"]["retry"][field] == value


@pytest.mark.parametrize("limit", ["drop", None])
def test_a_retry_strategy_without_a_limit_is_refused_naming_the_template(limit: str | None) -> None:
    """Argo retries such a step until it succeeds (before, it was read as one attempt: no retry at all)."""
    doc = _minimal(Policy(retry=Retry(max_attempts=4)))
    retry = _template(doc, "work")["retryStrategy"]
    if limit == "drop":
        del retry["limit"]
    else:
        retry["limit"] = limit
    with pytest.raises(InputError) as err:
        from_argo(doc)
    assert err.value.where == "template work"
    assert err.value.message == "a retryStrategy without a limit retries without bound"


@pytest.mark.parametrize("backoff", [{"factor": 2}, {"duration": ""}, {}])
def test_a_backoff_without_a_duration_is_refused_naming_the_template(backoff: dict[str, Any]) -> None:
    """Argo fails such a node ("no base duration specified for retryStrategy"); it was read as a 1 s delay."""
    doc = _minimal(Policy(retry=Retry(max_attempts=4)))
    _template(doc, "work")["retryStrategy"]["backoff"] = backoff
    with pytest.raises(InputError) as err:
        read_native(doc)
    assert err.value.where == "template work"
    assert err.value.message == "a retryStrategy backoff without a duration"


@pytest.mark.parametrize(("edit", "where"), [
    (lambda t: t["retryStrategy"]["backoff"].update(duration="soon"), "template work retryStrategy.backoff.duration"),
    (lambda t: t["retryStrategy"]["backoff"].update(cap="1 min"), "template work retryStrategy.backoff.cap"),
    (lambda t: (t.pop("activeDeadlineSeconds"), t.update(timeout="5e-05s")), "template work timeout"),
])
def test_a_duration_argo_cannot_read_is_refused_naming_where_it_is(edit: Any, where: str) -> None:
    """A hand-edited Go duration that is none: one InputError naming the template and field (it escaped as a
    bare ValueError from the library's reader)."""
    doc = _minimal(Policy(timeout=60, retry=Retry(max_attempts=4, backoff=Backoff(initial=2, factor=3))))
    edit(_template(doc, "work"))
    with pytest.raises(InputError) as err:
        read_native(doc)
    assert err.value.where == where and err.value.message.startswith("not a duration: ")


def test_no_retry_strategy_is_one_attempt() -> None:
    doc = _minimal(Policy(timeout=5))
    assert "retryStrategy" not in _template(doc, "work")
    assert read_native(doc)["policies"]["p"]["retry"] == {"maxAttempts": 1, "backoff": {
        "kind": "exponential", "initial": 1.0, "factor": 2.0, "jitter": 0.0}, "retryOn": ["TransientError", "Timeout"]}


def test_a_hand_written_memoize_key_and_template_timeout_are_the_policys() -> None:
    """Argo's own ``memoize`` key (the compiler writes one only with a memo cache) is the idempotency key, its
    ``{{workflow.name}}`` read as the run even when the step is not told its run id; a template ``timeout``
    string is the deadline when there is no ``activeDeadlineSeconds``."""
    doc = _minimal(Policy(timeout=60))
    work = _template(doc, "work")
    work.pop("activeDeadlineSeconds")
    work["timeout"] = "1m30s"
    args = work["container"]["args"]
    del args[args.index("--run-id"):args.index("--run-id") + 2]
    work["memoize"] = {"key": "{{workflow.name}}-work", "maxAge": "720h", "cache": {"configMap": {"name": "c"}}}
    policy = read_native(doc)["policies"]["p"]
    assert policy["timeout"] == 90.0
    assert policy["idempotency"] == {"key": "{run}-{node}"}


def test_without_the_labels_the_name_and_version_come_from_the_metadata() -> None:
    doc = _minimal()
    del doc["metadata"]["labels"]
    assert doc["metadata"]["generateName"] == "small-"
    native = read_native(doc)
    assert (native["name"], native["version"]) == ("small", 1)
    doc["metadata"]["name"] = "small-x7k2p"  # a submitted Workflow: its generated name
    assert read_native(doc)["name"] == "small-x7k2p"
    doc["metadata"] = {}
    assert read_native(doc)["name"] == ""


def test_a_submitted_workflow_is_named_by_its_label() -> None:
    """Read back from the cluster, a Workflow has a generated name; the IR name is the label's."""
    doc = _minimal()
    doc["metadata"] = {**doc["metadata"], "name": "small-x7k2p", "generateName": "small-"}
    assert read_native(doc)["name"] == "small"
    assert from_argo(doc).name == "small"


def test_a_template_without_its_kind_annotation_is_a_task() -> None:
    doc = _minimal()
    del _template(doc, "work")["metadata"]["annotations"][nm.ANN_KIND]
    [node] = read_native(doc)["nodes"]
    assert node["kind"] == "task" and node["role"] == "solver"


@pytest.mark.parametrize("flag", ["--output-contract", "--repair", "--idempotency-key"])
def test_a_flag_without_a_value_reads_as_absent(flag: str) -> None:
    doc = _minimal(Policy(timeout=5))
    _template(doc, "work")["container"]["args"].append(flag)
    native = read_native(doc)
    assert "output" not in native["nodes"][0] and "repair" not in native["nodes"][0]
    assert "idempotency" not in native["policies"]["p"]


def test_a_document_of_another_kind_is_refused_naming_its_kind() -> None:
    with pytest.raises(InputError) as err:
        from_argo({"kind": "CronWorkflow", "spec": {}})
    assert err.value.where == "kind"
    assert str(err.value) == "kind: not an Argo Workflow or WorkflowTemplate document"


@pytest.mark.parametrize("entrypoint", ["main", "missing"])
def test_an_entrypoint_that_is_no_dag_is_refused_naming_it(entrypoint: str) -> None:
    doc = _minimal()
    _template(doc, "main").pop("dag")
    doc["spec"]["entrypoint"] = entrypoint
    with pytest.raises(InputError) as err:
        read_native(doc)
    assert err.value.where == "spec.entrypoint"
    assert err.value.message == f"entrypoint {entrypoint!r} is not a DAG template"


def test_a_depends_term_it_cannot_read_is_refused_naming_the_task() -> None:
    doc = to_argo(Workflow(name="two", nodes=[Node(id="a", role="x"), Node(id="b", role="y")],
                           edges=[Edge(source="a", target="b")]), image="alas:test")
    b = next(t for t in _template(doc, "main")["dag"]["tasks"] if t["name"] == "b")
    b["depends"] = "a.Errored"
    with pytest.raises(InputError) as err:
        read_native(doc)
    assert err.value.where == "task b"
    assert err.value.message == "unsupported depends term 'a.Errored'"


def test_a_document_encoding_an_invalid_workflow_is_refused_naming_it() -> None:
    doc = to_argo(Workflow(name="two", nodes=[Node(id="a", role="x"), Node(id="b", role="y")],
                           edges=[Edge(source="a", target="b")]), image="alas:test")
    _template(doc, "b")["metadata"]["annotations"][nm.ANN_KIND] = "loop"  # no such node kind
    with pytest.raises(InputError) as err:
        from_argo(doc)
    assert err.value.where == "two"
    prefix = "the Argo document does not encode a valid IR workflow: "
    assert err.value.message.startswith(prefix) and "\n" not in err.value.message
    assert len(err.value.message) > len(prefix)


def test_a_document_saying_two_nodes_are_one_is_refused_naming_the_node() -> None:
    """The IR schema holds, the workflow does not: two templates claim node a (before, it came back with two
    nodes a and an edge from a to itself)."""
    doc = to_argo(Workflow(name="two", nodes=[Node(id="a", role="x"), Node(id="b", role="y")],
                           edges=[Edge(source="a", target="b")]), image="alas:test")
    _template(doc, "b")["metadata"]["annotations"][nm.ANN_NODE] = "a"
    with pytest.raises(InputError) as err:
        from_argo(doc)
    assert err.value.where == "two"
    assert err.value.message == "the Argo document encodes an invalid IR workflow: node a: node id used 2 times"


def test_a_cut_annotation_is_refused_naming_its_template() -> None:
    """A hand-edited or cut extras annotation: an InputError (the h-faults fix) that says where it is."""
    from alas_argo.engines import argo_names as nm
    from alas_argo.engines.argo import to_argo
    from alas_argo.engines.argo_parse import from_argo
    from alas_argo.errors import InputError
    from tests.engines.samples import kitchen_sink

    doc = to_argo(kitchen_sink(), image="alas:test")
    t = next(t for t in doc["spec"]["templates"]
             if nm.ANN_NODE_EXTRAS in ((t.get("metadata") or {}).get("annotations") or {}))
    t["metadata"]["annotations"][nm.ANN_NODE_EXTRAS] = "{cut"
    with pytest.raises(InputError) as e:
        from_argo(doc)
    assert e.value.where == f"template {t['name']} {nm.ANN_NODE_EXTRAS}" and e.value.message.startswith("not JSON")
