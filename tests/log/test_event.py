"""An event's canonical bytes and hash, recomputed from their documented definition (docs/execution-log.md).

The other log tests hash and check with the same functions, so a drift of the canonical form (key order,
whitespace, escaping, NaN, the ``sha256:`` prefix) passes them all and only breaks logs written before it:
here the bytes and the hash are derived with the standard library from the definition instead.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from alas_argo.errors import ContractError, IntegrityError
from alas_argo.log.event import GENESIS_HASH, Event, canonical_json, event_hash, seal_event


def test_canonical_json_is_sorted_compact_utf8() -> None:
    doc = {"b": 1, "a": [1.5, "é", {"d": None, "c": True}]}
    assert canonical_json(doc) == '{"a":[1.5,"é",{"c":true,"d":null}],"b":1}'.encode()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1, 2}, object()])
def test_what_json_cannot_represent_exactly_is_a_contract_error(value: object) -> None:
    with pytest.raises(ContractError) as caught:
        canonical_json({"x": value})
    assert caught.value.where == "log payload"
    assert caught.value.message.startswith("not representable as canonical JSON: ")


def test_an_events_hash_is_the_sha256_of_its_canonical_body() -> None:
    event = seal_event(seq=0, timestamp="2026-12-02T00:00:00.000000+00:00", run_id="r", type="run.started",
                       payload={"z": "ü", "a": 1}, prev_hash=GENESIS_HASH)
    body = {"seq": 0, "timestamp": "2026-12-02T00:00:00.000000+00:00", "run_id": "r", "correlation_id": None,
            "node_id": None, "attempt": None, "type": "run.started", "payload": {"a": 1, "z": "ü"}, "redact": [],
            "prev_hash": GENESIS_HASH}
    data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert event.body() == body
    assert event.hash == event_hash(body) == "sha256:" + hashlib.sha256(data).hexdigest()
    assert json.loads(event.to_bytes()) == {**body, "hash": event.hash}  # no "mac" without a key


def test_an_unreadable_event_names_where_it_is() -> None:
    where = "store/runs/r/events/00000000.json"
    with pytest.raises(IntegrityError) as caught:
        Event.from_bytes(b"not json", where=where)
    assert caught.value.where == where
    assert caught.value.message.startswith("unreadable event: event: ")  # a whole-document error
    with pytest.raises(IntegrityError) as caught:
        Event.from_bytes(b'{"seq": -1}', where=where)
    assert caught.value.message.startswith("unreadable event: seq: ")  # the first field in error
