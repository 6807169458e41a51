"""The conformance matrix's edges: where a retry's cap starts to bind on Argo (refused, never silently dropped),
which retries count as retries at all, an any_of join entered other than by edges from choice targets, and the
JSON rows `alas engines matrix --json` prints.

test_conformance.py checks one case per row and that each case uses its row; the round trip restores a cap
Argo would drop from the policy annotation, so only an exact delay at the boundary shows whether the Argo
compiler refuses what Argo v3.6.5 cannot run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from alas_argo.cli import main
from alas_argo.engines import conformance
from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo
from alas_argo.engines.conformance import ENGINES, MATRIX, UnsupportedFeature, check_supported, matrix_json
from alas_argo.ir import Backoff, Branch, Catch, Condition, Edge, Node, Policy, Retry, Workflow
from tests.engines.samples import with_node


def _with_retry(attempts: int, **backoff: Any) -> Workflow:
    return with_node(Node(id="work", role="solver"),
                     policy=Policy(retry=Retry(max_attempts=attempts, backoff=Backoff(**backoff))))


# (attempts, backoff, binds): Argo waits duration * factor ** k before retry k + 1 (k from 0), factor 1 unless
# exponential, so the longest delay of max_attempts - 1 retries is initial * factor ** (max_attempts - 2).
CAPS = {
    # 1, 3, 9 s: the third delay passes a 7 s cap (a product initial * factor * 2 = 6 would not).
    "exponential past the cap": (4, {"kind": "exponential", "initial": 1, "factor": 3, "max": 7}, True),
    # 2 then 4 s against a 4 s cap: reached, not exceeded, so nothing is lost by not rendering it.
    "exponential reaching the cap": (3, {"kind": "exponential", "initial": 2, "factor": 2, "max": 4}, False),
    # One retry: its only delay, 5 s, already passes a 3 s cap.
    "one retry past the cap": (2, {"kind": "exponential", "initial": 5, "max": 3}, True),
    # Fixed and linear render factor 1 on Argo: 2 s every time (the default factor 2 plays no part).
    "fixed under the cap": (3, {"kind": "fixed", "initial": 2, "max": 3}, False),
    "linear under the cap": (3, {"kind": "linear", "initial": 2, "max": 3}, False),
    "fixed past the cap": (3, {"kind": "fixed", "initial": 4, "max": 3}, True),
}


@pytest.mark.parametrize("case", CAPS)
def test_argo_refuses_exactly_the_caps_a_delay_would_pass(case: str) -> None:
    attempts, backoff, binds = CAPS[case]
    wf = _with_retry(attempts, **backoff)
    rows = {f.key: f.uses(wf, wf.node("work")) for f in MATRIX if f.key.startswith("backoff_max")}
    assert rows == {"backoff_max": not binds, "backoff_max_binding": binds}
    if binds:
        with pytest.raises(UnsupportedFeature) as err:
            to_argo(wf, image="alas:test")
        assert (err.value.engine, err.value.node, err.value.feature) == ("argo", "work", "backoff_max_binding")
    else:
        assert from_argo(to_argo(wf, image="alas:test")) == wf


def test_retry_rows_count_only_retries_of_a_node_with_a_policy() -> None:
    """`_retry` builds the predicate of every retry/backoff row (they are built once, when the module is
    imported, so this checks the builder those rows share): no policy or one attempt is no retry, whatever the
    row's own condition says; otherwise the row's condition decides, and it is given the node's Retry."""
    seen: list[Any] = []

    def condition(r: Any) -> bool:
        seen.append(r)
        return True

    uses = conformance._retry(condition)
    plain = with_node(Node(id="work", role="solver"))
    assert uses(plain, plain.node("work")) is False
    once = _with_retry(1)
    assert uses(once, once.node("work")) is False
    assert seen == []
    twice = _with_retry(2, kind="fixed")
    assert uses(twice, twice.node("work")) is True
    assert seen == [twice.policies["p"].retry]
    assert conformance._retry(lambda r: False)(twice, twice.node("work")) is False


def _any_of_behind_a_choice(*, catch_into_join: bool) -> Workflow:
    """`work` joins the two targets of one choice; with ``catch_into_join`` a failed `a` is also caught into it."""
    policies = {"p": Policy(catch=[Catch(errors=["ContractError"], next="work")])} if catch_into_join else {}
    return Workflow(name="row", nodes=[
        Node(id="c", kind="choice", choices=[Branch(when=Condition(path="inputs.mode", value="a"), next="a")],
             default="b"),
        Node(id="a", role="x", policy_ref="p" if catch_into_join else None), Node(id="b", role="y"),
        Node(id="work", role="z", join="any_of")],
        edges=[Edge(source="a", target="work"), Edge(source="b", target="work")], policies=policies,
        meta={"inputs": {"mode": "a"}})


def test_an_any_of_join_also_entered_by_a_catch_route_is_refused_by_asl() -> None:
    # Only choice targets joined by edges converge natively in ASL; a catch arc into the join is another way
    # in, so the join is no longer "exactly one candidate runs".
    check_supported("asl", _any_of_behind_a_choice(catch_into_join=False))
    with pytest.raises(UnsupportedFeature) as err:
        check_supported("asl", _any_of_behind_a_choice(catch_into_join=True))
    assert (err.value.engine, err.value.node, err.value.feature) == ("asl", "work", "any_of_concurrent")
    assert str(err.value).startswith("asl cannot express any_of_concurrent (needs concurrent candidates")
    check_supported("argo", _any_of_behind_a_choice(catch_into_join=True))  # native on Argo


def test_matrix_json_rows_and_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    rows = matrix_json()
    assert [r["feature"] for r in rows] == [f.key for f in MATRIX]
    assert next(r for r in rows if r["feature"] == "parallel_concurrency") == {
        "feature": "parallel_concurrency", "ir": "max_concurrency of a parallel node",
        "argo": {"support": "unsupported", "mapping": "a DAG cannot bound a group of sibling tasks"},
        "asl": {"support": "unsupported", "mapping": "Parallel states have no concurrency bound"}}
    assert next(r for r in rows if r["feature"] == "dependencies")["asl"]["support"] == "approximated"
    for r, f in zip(rows, MATRIX, strict=True):
        assert r["ir"] == f.ir
        for e in ENGINES:
            assert (r[e]["support"], r[e]["mapping"]) == (str(f.support(e)[0]), f.support(e)[1])
    # In process: `alas` on PATH may be another tree's.
    assert main(["engines", "matrix", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == rows
