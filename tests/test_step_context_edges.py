"""Edges of what a step handler sees (alas_argo.step_context) left open by mutation testing: the documented
form of an output record's key, the readers' one-line refusals naming their node or run, an any_of's
candidate, a workflow parameter holding JSON, a map's aggregated outputs, the conditions a loop or a choice
decides (as the local runtime decides them), and a malformed step input refused naming its flag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.cli import main
from alas_argo.errors import InputError, LoopGuardTripped
from alas_argo.ir.condition import Condition
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.runtime.policies import MISSING, evaluate
from alas_argo.step_context import StepContext, StepInput, StepOutput, holds, map_item_keys, output_key
from alas_argo.steps import run_step


def _context(tmp_path: Path, **fields: Any) -> StepContext:
    store = FsStore(tmp_path)
    return StepContext(StepInput(kind="k", node="n", run_id="r", scope="wf", **fields), store,
                       ExecutionLog(store, "r"))


def _record(ctx: StepContext, key: str, **doc: Any) -> dict[str, Any]:
    record = {"doc": doc, "params": {}}
    ctx.log.idempotency_put(key, record)
    return record


def test_a_fresh_context_is_the_first_iteration_at_the_run_level(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    assert (ctx.previous, ctx.iteration, ctx.level, ctx.failure) == (None, 0, "run", None)
    assert ctx.log.run_id == "r" and ctx.input.node == "n"


def test_a_step_input_cannot_change_under_its_handler(tmp_path: Path) -> None:
    ctx = _context(tmp_path)
    with pytest.raises(ValidationError, match="frozen"):
        ctx.input.node = "other"  # type: ignore[misc]


@pytest.mark.parametrize(("item", "key"), [
    (None, "output/wf/n"), (0, "output/wf/n/0"), ("", 'output/wf/n/""'), (False, "output/wf/n/false"),
    ([], "output/wf/n/[]"), ("la 01", 'output/wf/n/"la 01"'),
    ({"seed": 2, "instance": "ft06", "x": [1, {"b": 1, "a": 2}]},
     'output/wf/n/{"instance":"ft06","seed":2,"x":[1,{"a":2,"b":1}]}')])
def test_an_output_key_is_the_documented_output_scope_node_item(item: Any, key: str) -> None:
    """``output/<scope>/<node>[/<item>]`` (docs/execution-log.md), the item as compact JSON with sorted keys: the
    key names the record file, so a retried pod of a newer image must spell it as the one it retries did; only
    no item at all (not a falsy one) leaves the item out."""
    assert output_key("wf", "n", item) == key


def test_an_item_object_has_one_key_whatever_the_order_of_its_fields(tmp_path: Path) -> None:
    """The item's fields may reach its pod in another order than the list holds them (any JSON re-encoding may
    reorder an object): the key derived from the list still finds the pod's record."""
    ctx = _context(tmp_path, run_inputs={"cases": '[{"seed": 1, "instance": "ft06"}]'}, mapped={"m": "inputs.cases"})
    record = _record(ctx, output_key("wf", "m", {"instance": "ft06", "seed": 1}), ok=True)
    assert ctx.dep("m") == [record]


def test_a_map_list_parameter_is_named_by_all_after_the_first_dot(tmp_path: Path) -> None:
    """The Argo renderer splits a map's items path at its first dot (the source node, then its output parameter
    or workflow parameter), so the step does too."""
    ctx = _context(tmp_path)
    ctx.log.idempotency_put(output_key("wf", "src"), {"doc": {}, "params": {"jobs.v2": '["x", 2]'}})
    assert map_item_keys(ctx.log, "wf", "m", "src.jobs.v2", {}) == [output_key("wf", "m", "x"),
                                                                   output_key("wf", "m", 2)]
    assert map_item_keys(ctx.log, "wf", "m", "inputs.a.b", {"a.b": "[1]"}) == [output_key("wf", "m", 1)]


def test_a_maps_aggregated_outputs_are_read_as_objects_or_as_keys_in_order(tmp_path: Path) -> None:
    """A workflow rendered before ``--mapped`` handed a map's outputs over as Argo aggregated them: a list of
    output-parameter objects (``{"key": ...}``), or of bare keys."""
    first, second = output_key("wf", "m", 1), output_key("wf", "m", 2)
    ctx = _context(tmp_path, inputs={"m": [{"key": second}, first]})
    one, two = _record(ctx, first, i=1), _record(ctx, second, i=2)
    assert ctx.dep("m") == [two, one]
    assert ctx.map_deps() == ["m"]


def test_a_missing_input_or_record_is_one_line_naming_the_node_or_run(tmp_path: Path) -> None:
    ctx = _context(tmp_path, inputs={"a": output_key("wf", "a")})
    assert ctx.ref("ghost") is None
    with pytest.raises(InputError) as no_input:
        ctx.dep("ghost")
    assert (no_input.value.message, no_input.value.where) == ("step n has no input 'ghost'", "node n")
    with pytest.raises(InputError) as no_record:
        ctx.dep("a")
    assert str(no_record.value) == "run r: no output recorded under 'output/wf/a'"


def test_the_candidate_that_ran_is_the_first_declared_with_an_output_of_this_workflow(tmp_path: Path) -> None:
    ctx = _context(tmp_path, candidates=["a", "b", "c"])
    _record(ctx, output_key("other-wf", "a"), by="another workflow")
    c = _record(ctx, output_key("wf", "c"), by="c")
    assert ctx.candidate() == ("c", c)
    b = _record(ctx, output_key("wf", "b"), by="b")
    assert ctx.candidate() == ("b", b)
    with pytest.raises(InputError) as none_ran:
        _context(tmp_path / "empty", candidates=["a", "b"]).candidate()
    assert str(none_ran.value) == "node n: no any_of candidate has an output"


def test_an_any_of_joins_one_dependency_is_the_candidate_that_won(tmp_path: Path) -> None:
    """As the local runtime hands an any_of node its winner only: the winner is read like any input, a loser is
    none, and the winner does not change under the step when another candidate ends later."""
    ctx = _context(tmp_path, candidates=["a", "b"], inputs={"x": output_key("wf", "x")})
    assert (ctx.winner(), ctx.dep_names()) == (None, ["x"])  # none recorded yet: only what was handed over
    fresh = _context(tmp_path, candidates=["a", "b"], inputs={"x": output_key("wf", "x")})
    b = _record(fresh, output_key("wf", "b"), by="b")
    assert (fresh.winner(), fresh.dep_names(), fresh.dep("b")) == ("b", ["x", "b"], b)
    assert fresh.ref("a") is None
    _record(fresh, output_key("wf", "a"), by="a")  # the first declared ends after the step began
    assert (fresh.winner(), fresh.ref("b"), fresh.ref("a")) == ("b", output_key("wf", "b"), None)
    assert _context(tmp_path, inputs={"x": "k"}).dep_names() == ["x"]  # no join: no lookup


def test_a_maybe_dependency_is_one_only_when_it_ran(tmp_path: Path) -> None:
    """A gated node, or one skipped on failure, hands its consumer its output only when it ran, as locally."""
    ctx = _context(tmp_path, inputs={"x": output_key("wf", "x")}, maybe=["gated", "failed"])
    gated = _record(ctx, output_key("wf", "gated"), n=1)
    _record(ctx, output_key("other-wf", "failed"), n=2)  # another workflow's record is not this one's
    assert (ctx.dep_names(), ctx.dep("gated"), ctx.ref("failed")) == (["x", "gated"], gated, None)
    assert ctx.output("failed") is MISSING


def test_a_workflow_parameter_is_read_or_refused_naming_it(tmp_path: Path) -> None:
    ctx = _context(tmp_path, run_inputs={"instance": "ft06", "empty": ""})
    assert (ctx.run_input("instance"), ctx.run_input("empty", "d"), ctx.run_input("gone", "d")) == ("ft06", "", "d")
    with pytest.raises(InputError) as missing:
        ctx.run_input("gone")
    assert str(missing.value) == "node n: missing workflow parameter 'gone'"


def test_a_json_parameter_is_parsed_defaulted_when_absent_or_empty_and_refused_when_malformed(
        tmp_path: Path) -> None:
    ctx = _context(tmp_path, run_inputs={"doc": '{"a": [1, 2]}', "zero": "0", "empty": "", "bad": "[1,"})
    assert ctx.json_input("doc", None) == {"a": [1, 2]}
    assert ctx.json_input("zero", 7) == 0  # a falsy value is a value
    assert (ctx.json_input("empty", "d"), ctx.json_input("gone", ["d"])) == ("d", ["d"])
    with pytest.raises(InputError) as bad:
        ctx.json_input("bad", None)
    assert str(bad.value) == "node n: workflow parameter 'bad' is not JSON: Expecting value"


def _c(path: str, op: str | None = None, value: Any = None, *, negate: bool | None = None) -> dict[str, Any]:
    return {"path": path, **({} if op is None else {"op": op}), **({} if value is None else {"value": value}),
            **({} if negate is None else {"negate": negate})}


DOC = {"n": 3, "zero": 0, "none": None, "s": "cd", "list": [{"ok": True}, {"ok": False}], "deep": {"x": "y"}}
CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "eq by default": (_c("output.n", value=3), True),
    "eq by default, unequal": (_c("output.n", value=4), False),
    "eq null": (_c("output.none", "eq"), True),
    "ne": (_c("output.n", "ne", 4), True), "ne, equal": (_c("output.n", "ne", 3), False),
    "lt below": (_c("output.n", "lt", 4), True), "lt equal": (_c("output.n", "lt", 3), False),
    "le equal": (_c("output.n", "le", 3), True), "le above": (_c("output.n", "le", 2), False),
    "gt equal": (_c("output.n", "gt", 3), False), "gt above": (_c("output.n", "gt", 2), True),
    "ge equal": (_c("output.n", "ge", 3), True), "ge below": (_c("output.n", "ge", 4), False),
    "in": (_c("output.n", "in", [1, 3]), True), "not in": (_c("output.n", "in", [1, 2]), False),
    "in no list": (_c("output.n", "in"), False),
    "exists": (_c("output.none", "exists"), True), "exists, missing": (_c("output.gone", "exists"), False),
    "truthy": (_c("output.n", "truthy"), True), "truthy zero": (_c("output.zero", "truthy"), False),
    "a nested field": (_c("output.deep.x", "eq", "y"), True),
    "negate": (_c("output.n", "eq", 3, negate=True), False),
    "negate, unequal": (_c("output.n", "eq", 4, negate=True), True),
    "negate false": (_c("output.n", "eq", 3, negate=False), True),
    # A missing path is false for every op; negated, true.
    "missing": (_c("output.gone", "eq"), False), "missing, negated": (_c("output.gone", "eq", negate=True), True),
    "missing exists, negated": (_c("output.gone", "exists", negate=True), True),
    "through a number": (_c("output.n.x", "exists"), False),
    "through a string": (_c("output.s.c", "exists"), False),
    "outside the output": (_c("inputs.n", "exists"), False),
    # Where the steps used to differ from the local runtime (alas_argo.runtime.policies): a TypeError traceback
    # for incomparable values or an `in` over a number, `in` over a string as a substring test, and no list index.
    "incomparable": (_c("output.none", "lt", 0.05), False),
    "incomparable, negated": (_c("output.none", "ge", 0.05, negate=True), True),
    "in a string": (_c("output.s", "in", "abcdef"), False),
    "in a number": (_c("output.n", "in", 3), False),
    "a list index": (_c("output.list.0.ok", "truthy"), True),
    "a list index from the end": (_c("output.list.-1.ok", "truthy"), False),
    "past the list": (_c("output.list.2.ok", "exists"), False),
}


@pytest.mark.parametrize(("cond", "expected"), CASES.values(), ids=CASES.keys())
def test_a_condition_on_a_steps_output_is_decided_as_the_local_runtime_decides_it(
        cond: dict[str, Any], expected: bool) -> None:
    assert holds(cond, DOC) is expected
    assert evaluate(Condition.model_validate(cond), {"output": DOC}) is expected


@pytest.mark.parametrize(("cond", "message"), [
    (_c("output.n", "zz"), "condition op: Input should be 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'exists' or "
                           "'truthy'"),
    ({"op": "eq"}, "condition path: Field required"),
    ({"path": "output.n", "valu": 3}, "condition valu: Extra inputs are not permitted"),
    ("output.n", "condition: Input should be a valid dictionary or instance of Condition")])
def test_a_malformed_condition_is_one_line_not_a_traceback(cond: Any, message: str) -> None:
    with pytest.raises(InputError) as bad:
        holds(cond, DOC)
    assert str(bad.value) == message


def test_a_loop_until_a_null_output_compares_keeps_looping_instead_of_crashing_the_pod(tmp_path: Path) -> None:
    """``until: output.gap lt 0.05`` over an iteration that has no gap yet (null): the local runtime reads it as
    not holding and runs again; the step raised TypeError, a traceback that left node.started without an end."""
    gaps = iter([None, 0.2, 0.01])

    def tighten(ctx: StepContext) -> StepOutput:
        return StepOutput({"gap": next(gaps), "iteration": ctx.iteration})

    store = FsStore(tmp_path)
    inp = StepInput(kind="tighten", node="n", run_id="r", scope="wf", max_iters=5,
                    loop_until=_c("output.gap", "lt", 0.05))
    assert run_step(inp, store, {"tighten": tighten}).doc == {"gap": 0.01, "iteration": 2}
    types = [e.type for e in ExecutionLog(store, "r").events()]
    assert types == [EventType.NODE_STARTED, EventType.NODE_SUCCEEDED]


def test_a_loop_given_no_bound_runs_once(tmp_path: Path) -> None:
    inp = StepInput(kind="k", node="n", run_id="r", scope="wf", loop_until=_c("output.never", "exists"))
    with pytest.raises(LoopGuardTripped, match=r"^node n: loop did not finish in 1 iterations$"):
        run_step(inp, FsStore(tmp_path), {"k": lambda ctx: StepOutput({"iteration": ctx.iteration})})


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--max-iters", "0", "--max-iters: Input should be greater than or equal to 1"),
    ("--max-iters", "x", "--max-iters: Input should be a valid integer, unable to parse string as an integer"),
    ("--loop-deadline", "0s", "--loop-deadline: Input should be greater than 0"),
    ("--loop-deadline", "31536001s", "--loop-deadline: Input should be less than or equal to 31536000"),
    ("--loop-deadline", "soon", "--loop-deadline: Input should be a valid number, unable to parse string as a number"),
    ("--params", "[1]", "--params: Input should be a valid dictionary"),
    ("--choices", '"a"', "--choices: Input should be a valid dictionary"),
    # A loop condition is checked before the first iteration runs (and writes), not after it.
    ("--loop-until", '{"path": "output.x", "op": "near"}', "--loop-until: op: Input should be 'eq', 'ne', 'lt', "
     "'le', 'gt', 'ge', 'in', 'exists' or 'truthy'"),
    ("--loop-until", '{"op": "exists"}', "--loop-until: path: Field required"),
    # A contract jsonschema cannot use is refused as the IR refuses it, before the role runs (it was a
    # SchemaError or TypeError traceback after the role had run).
    ("--output-contract", '{"required": 5}', "--output-contract: the output contract is not a valid JSON Schema: "
     "5 is not of type 'array'"),
    ("--output-contract", '{"$schema": "https://example.com/no-such-dialect"}', "--output-contract: the output "
     "contract names no JSON Schema dialect jsonschema knows: $schema 'https://example.com/no-such-dialect'")])
def test_a_malformed_step_input_is_refused_naming_its_flag_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str) -> None:
    code = main(["step", "blueprint", flag, value, "--run-input", "instance=ft06", "--store", "fs", "--root",
                 str(tmp_path / "log"), "--run-id", "r1", "--outputs", str(tmp_path / "o")])
    assert (code, capsys.readouterr().err) == (2, f"alas: error: {message}\n")
    assert not (tmp_path / "o").exists() and not (tmp_path / "log").exists()


def test_the_loop_bounds_given_as_text_are_read_as_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["step", "blueprint", "--loop-until", json.dumps(_c("output.never", "exists")), "--max-iters", "3",
                 "--loop-deadline", "600s", "--run-input", "instance=ft06", "--store", "fs", "--root",
                 str(tmp_path / "log"), "--run-id", "r1", "--outputs", str(tmp_path / "o")])
    assert (code, capsys.readouterr().err) == (2, "alas: error: node blueprint: loop did not finish in 3 iterations\n")
    tripped = [e.payload for e in ExecutionLog(FsStore(tmp_path / "log"), "r1").events()
               if e.type is EventType.LOOP_GUARD_TRIPPED]
    assert tripped == [{"iterations": 3}]
