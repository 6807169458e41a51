"""Edges of alas_argo.runtime.journal (MemoryJournal) left open by mutation testing: the shape of a recorded
event (``seq``, ``time``, ``redact`` were never read back), the refusal of a type outside the taxonomy naming
the journal, and the idempotency records kept and handed out as deep copies, so neither the writer nor a
reader changing a nested value afterwards alters what a later reader gets."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import ContractError
from alas_argo.log.events import EventType
from alas_argo.runtime import Journal, MemoryJournal


def test_an_event_has_its_place_time_type_node_attempt_payload_and_redactions() -> None:
    journal = MemoryJournal()
    payload: dict[str, Any] = {"k": 1}
    journal.record(EventType.NODE_STARTED, node_id="n1", attempt=2, payload=payload, redact=("secret",))
    journal.record("run.succeeded")
    payload["k"] = 2  # the event keeps its own copy of the payload
    first, second = journal.events
    assert set(first) == {"seq", "time", "type", "node_id", "attempt", "payload", "redact"}
    assert (first["seq"], first["type"], first["node_id"], first["attempt"]) == (0, "node.started", "n1", 2)
    assert first["payload"] == {"k": 1} and first["redact"] == ["secret"]
    assert isinstance(first["time"], float) and isinstance(second["time"], float)
    assert (second["seq"], second["type"], second["node_id"], second["attempt"]) == (1, "run.succeeded", None, None)
    assert second["payload"] == {} and second["redact"] == []
    assert journal.types() == ["node.started", "run.succeeded"] and journal.types("n1") == ["node.started"]


def test_a_type_outside_the_taxonomy_is_refused_naming_the_journal() -> None:
    journal = MemoryJournal()
    with pytest.raises(ContractError) as refused:
        journal.record("node.exploded", node_id="n1")
    assert refused.value.where == "journal"
    assert str(refused.value) == "journal: unknown event type 'node.exploded'"
    assert journal.events == []


def test_idempotency_records_are_deep_copies_both_ways() -> None:
    journal = MemoryJournal()
    assert isinstance(journal, Journal)
    assert journal.get_idempotent("k") is None
    result: dict[str, Any] = {"out": {"jobs": [1, 2]}}
    journal.put_idempotent("k", result)
    result["out"]["jobs"].append(3)  # the writer's later change does not reach the record
    read = journal.get_idempotent("k")
    assert read == {"out": {"jobs": [1, 2]}}
    assert read is not None
    read["out"]["jobs"].clear()  # nor does a reader's
    assert journal.get_idempotent("k") == {"out": {"jobs": [1, 2]}}
    journal.put_idempotent("k", {"out": "second"})  # first writer wins
    assert journal.get_idempotent("k") == {"out": {"jobs": [1, 2]}}
