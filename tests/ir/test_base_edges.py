"""`ir.base`: the exact text the IR hashes and keys are made of, and the wire form's plain JSON values.

`canonical_json` is hashed into every workflow, node and plan-version hash and written into rendered
idempotency keys, so its bytes are a contract: sorted keys, no whitespace, non-ASCII characters as they are
(not ``\\u`` escapes), and a value JSON has no type for written as its ``str``. Comparing two of its outputs
with each other (as the key-order test does) cannot see a change of spelling that moves every hash at once.
"""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import PurePosixPath
from typing import Any

from alas_argo.ir import Backoff, Edge, Node, Policy, Retry, Workflow, canonical_json, content_hash


def test_canonical_json_is_sorted_compact_and_keeps_non_ascii_characters() -> None:
    doc = {"b": [1, "é", None], "a": {"d": True, "c": 1.5}}
    assert canonical_json(doc) == '{"a":{"c":1.5,"d":true},"b":[1,"é",null]}'


def test_canonical_json_writes_a_value_json_has_no_type_for_as_its_text() -> None:
    assert canonical_json({"day": date(2026, 12, 7), "file": PurePosixPath("runs/r1")}) == \
        '{"day":"2026-12-07","file":"runs/r1"}'


def test_content_hash_is_the_sha256_of_the_canonical_utf8_text() -> None:
    doc = {"name": "planificación", "version": 1}
    text = '{"name":"planificación","version":1}'
    assert content_hash(doc) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    # The same digest spelt out, so a change of the text or the encoding shows even if both sides moved.
    assert content_hash({"a": 1}) == "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"


def _plain(value: Any) -> bool:
    """Whether ``value`` is made of JSON's own types only (an enum member, even a StrEnum, is not)."""
    if isinstance(value, dict):
        return all(type(k) is str and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_to_json_holds_plain_json_values_not_enum_members() -> None:
    wf = Workflow(name="demo", nodes=[Node(id="a", role="r", policy_ref="p"), Node(id="b", role="r")],
                  edges=[Edge(source="a", target="b")],
                  policies={"p": Policy(retry=Retry(max_attempts=2, backoff=Backoff(kind="linear")))})
    doc = wf.to_json()
    assert _plain(doc)
    assert type(doc["nodes"][0]["kind"]) is str and doc["nodes"][0]["kind"] == "task"
    assert type(doc["policies"]["p"]["retry"]["backoff"]["kind"]) is str
