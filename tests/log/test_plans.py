"""Plan encoding is lossless and compact; diffs are exact."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from alas_argo.log.plans import decode_plan, diff_plans, encode_plan, plan_hash

ints = st.integers(min_value=-(2**40), max_value=2**40)
ops = st.lists(st.fixed_dictionaries({"job": ints, "step": ints, "machine": ints, "start": ints, "end": ints}))
json_values = st.recursive(st.none() | st.booleans() | ints | st.text(max_size=5),
                           lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                           max_leaves=10)


@given(ops, st.dictionaries(st.text(max_size=6).filter(lambda k: k != "operations"), json_values, max_size=4))
def test_round_trip_is_lossless(operations: list[dict[str, int]], extra: dict[str, Any]) -> None:
    doc = {**extra, "operations": operations}
    assert decode_plan(encode_plan(doc), where="t") == doc


def test_irregular_operations_are_kept_verbatim() -> None:
    doc = {"operations": [{"job": 0, "step": 0, "machine": 1, "start": 0, "end": 2, "note": "late"},
                          {"job": 1, "step": 0, "machine": 1, "start": 2.5, "end": 4}]}
    assert decode_plan(encode_plan(doc), where="t") == doc


def test_equal_plans_give_equal_bytes_and_compression_pays() -> None:
    doc = {"instance": "big", "makespan": 9, "operations": [
        {"job": j, "step": s, "machine": (j + s) % 20, "start": 10 * s + j, "end": 10 * s + j + 7}
        for j in range(50) for s in range(20)]}
    assert encode_plan(doc) == encode_plan(dict(reversed(list(doc.items()))))
    import json

    assert len(encode_plan(doc)) < len(json.dumps(doc)) / 10
    assert plan_hash(doc) == plan_hash(decode_plan(encode_plan(doc), where="t"))


def test_diff_reports_added_removed_and_machine_changes() -> None:
    a = {"makespan": 5, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 2},
                                       {"job": 0, "step": 1, "machine": 1, "start": 2, "end": 5}]}
    b = {"makespan": 4, "operations": [{"job": 0, "step": 0, "machine": 2, "start": 0, "end": 2},
                                       {"job": 1, "step": 0, "machine": 1, "start": 1, "end": 4}]}
    d = diff_plans(a, b, version_a=1, version_b=2)
    assert d.moved_operations == [] and d.machine_changes == [(0, 0, 0, 2)]
    assert d.added == [(1, 0)] and d.removed == [(0, 1)] and d.makespan_change == -1
    assert d.to_json()["added"] == [[1, 0]]
