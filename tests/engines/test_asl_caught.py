"""ASL after a caught failure: the local runtime skips every node downstream of the failed node (its gate or
not) and the run succeeds; the compiled chain used to go on from the handler into those nodes. A run of them
now sits behind a guard Choice (``<node>/alive``) that goes past it when the caught node left an error and no
result. Walked here state by state (no Step Functions at hand): Tasks succeed unless told to fail, a Catch
records the error at its ResultPath, Choice rules are evaluated on what the run holds."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl
from alas_argo.ir import Workflow
from alas_argo.runtime import NodeState, Runtime
from tests.runtime.runtime_helpers import workflow

_CMP = {"NumericGreaterThanEquals": lambda a, b: a >= b, "NumericLessThan": lambda a, b: a < b,
        "NumericEquals": lambda a, b: a == b, "StringEquals": lambda a, b: a == b}


def _get(doc: dict[str, Any], path: str) -> Any:
    at: Any = doc
    for part in path.removeprefix("$.").split("."):
        if not isinstance(at, dict) or part not in at:
            raise KeyError(path)
        at = at[part]
    return at


def _holds(rule: dict[str, Any], data: dict[str, Any]) -> bool:
    if "And" in rule:
        return all(_holds(r, data) for r in rule["And"])
    if "Or" in rule:
        return any(_holds(r, data) for r in rule["Or"])
    if "Not" in rule:
        return not _holds(rule["Not"], data)
    try:
        value = _get(data, rule["Variable"])
    except KeyError:
        if "IsPresent" in rule:
            return not rule["IsPresent"]
        raise  # Step Functions fails the execution (States.Runtime) on a comparison of a missing path
    if "IsPresent" in rule:
        return bool(rule["IsPresent"])
    (op,) = [k for k in rule if k in _CMP]
    return bool(_CMP[op](value, rule[op]))


def walk(doc: dict[str, Any], failing: set[str]) -> tuple[str, list[str]]:
    """(how the execution ends, the nodes whose Task ran) when the nodes in ``failing`` fail."""
    data: dict[str, Any] = {"results": {}, "errors": {}}
    ran: list[str] = []
    name = doc["StartAt"]
    for _ in range(200):
        st = doc["States"][name]
        if st["Type"] in ("Succeed", "Fail"):
            return ("Succeeded" if st["Type"] == "Succeed" else "Failed"), ran
        if st["Type"] == "Choice":
            name = next((r["Next"] for r in st["Choices"] if _holds(r, data)), st.get("Default"))
            continue
        node = st["Parameters"]["node"]
        ran.append(node)
        if node in failing:
            catch = next((c for c in st.get("Catch", []) if "States.ALL" in c["ErrorEquals"]), None)
            if catch is None:
                return "Failed", ran
            data["errors"][catch["ResultPath"].rsplit(".", 1)[1]] = {"Error": "InputError"}
            name = catch["Next"]
            continue
        data["results"][node] = {"n": st["Parameters"]["params"].get("n", 0)}
        if st.get("End"):
            return "Succeeded", ran
        name = st["Next"]
    raise AssertionError("no end")


def _probe(n: int) -> dict[str, Any]:
    return {"role": "probe", "params": {"n": n}}


def graph() -> Workflow:
    # risky (caught) -> after -> then; risky and other -> gated (its gate true) -> last; handler; other.
    return workflow([{"id": "risky", **_probe(1), "policyRef": "c"}, {"id": "handler", **_probe(2)},
                     {"id": "other", **_probe(4)}, {"id": "after", **_probe(3)}, {"id": "then", **_probe(5)},
                     {"id": "gated", **_probe(6), "when": {"path": "other.n", "op": "ge", "value": 0}},
                     {"id": "last", **_probe(7)}, {"id": "tail", **_probe(8)}],
                    [("risky", "after"), ("after", "then"), ("risky", "gated"), ("other", "gated"),
                     ("gated", "last"), ("other", "tail")],
                    policies={"c": {"catch": [{"errors": ["*"], "next": "handler"}]}})


def _local(wf: Workflow, failing: set[str]) -> list[str]:
    def probe(ctx: Any, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.node_id in failing:
            raise ValueError("told to fail")
        return {"n": ctx.params["n"]}
    result = Runtime({"probe": probe}).run(wf)
    assert result.ok
    return sorted(n for n, s in result.states.items() if s is NodeState.EXECUTED or s is NodeState.FAILED)


@pytest.mark.parametrize("failing", [set(), {"risky"}], ids=["fine", "caught"])
def test_asl_runs_what_the_local_runtime_runs_after_a_caught_failure(failing: set[str]) -> None:
    wf = graph()
    doc = to_asl(wf)
    status, ran = walk(doc, failing)
    assert status == "Succeeded"
    assert sorted(ran) == _local(wf, failing)
    if failing:
        assert set(ran) == {"risky", "handler", "other", "tail"}


def test_the_guard_reads_back_as_no_node() -> None:
    wf = graph()
    doc = to_asl(wf)
    assert [n for n in doc["States"] if n.endswith("/alive")] and from_asl(doc) == wf


def test_a_ladder_rung_that_failed_before_one_succeeded_does_not_skip_the_consumers() -> None:
    """The ladder's first Catch records the node's error too; its result, written by the rung that succeeded,
    tells the guard the node did not fail for good."""
    wf = workflow([{"id": "risky", **_probe(1), "policyRef": "c", "repair": {"patch": "probe"}},
                   {"id": "handler", **_probe(2)}, {"id": "after", **_probe(3)}, {"id": "tail", **_probe(4)}],
                  [("risky", "after"), ("after", "tail")],
                  policies={"c": {"catch": [{"errors": ["*"], "next": "handler"}]}})
    doc = to_asl(wf)
    data = {"results": {"risky": {"n": 1}}, "errors": {"risky": {"Error": "x"}}}
    guard = doc["States"]["after/alive"]
    assert not any(_holds(r, data) for r in guard["Choices"])  # into the run
    assert all(_holds(r, {"results": {}, "errors": {"risky": {}}}) for r in guard["Choices"])  # past it


@pytest.mark.parametrize("node_id", ["alas-skipped-end", "alas-rolled-back", "alas-undo-x"])
def test_the_reserved_state_names_are_refused_as_node_ids(node_id: str) -> None:
    from alas_argo.engines.conformance import UnsupportedFeature

    with pytest.raises(UnsupportedFeature, match="are reserved"):
        to_asl(workflow([{"id": node_id, **_probe(1)}]))


def test_a_gate_on_a_path_the_run_does_not_hold_takes_the_local_runtimes_turn() -> None:
    """Step Functions fails an execution whose Choice compares a missing path (States.Runtime; the walk raises
    KeyError there); the local runtime reads the comparison as false. The compiled gate checks IsPresent first:
    the gated node is skipped, the one gated on the negation runs, and the execution succeeds."""
    wf = workflow([{"id": "other", **_probe(1)},
                   {"id": "gated", **_probe(2), "when": {"path": "other.absent", "op": "ge", "value": 0}},
                   {"id": "negated", **_probe(3), "when": {"path": "other.absent", "op": "ge", "value": 0,
                                                          "negate": True}},
                   {"id": "unequal", **_probe(4), "when": {"path": "other.absent", "op": "ne", "value": 1}},
                   {"id": "tail", **_probe(5)}],
                  [("other", "gated"), ("other", "negated"), ("other", "unequal"), ("other", "tail")])
    status, ran = walk(to_asl(wf), set())
    assert status == "Succeeded"
    assert sorted(ran) == _local(wf, set()) == ["negated", "other", "tail"]
