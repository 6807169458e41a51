"""Redacted fields never reach the store in clear: checked on the raw stored bytes of both backends."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.redaction import is_redacted, redact_payload
from alas_argo.log.store import Store

SECRET = "sk-live-4f9a1c2e7b"


def test_redacted_fields_are_not_in_the_raw_bytes(store: Store) -> None:
    log = ExecutionLog(store, "secret", redaction_key=b"k" * 32)
    payload = {"request": {"headers": {"authorization": f"Bearer {SECRET}"}, "model": "m"},
               "messages": [{"role": "user", "content": f"my key is {SECRET}"}, {"role": "assistant",
                                                                                 "content": "ok"}],
               "token": SECRET}
    event = log.append("llm.exchange", payload=payload,
                       redact=["request.headers.authorization", "messages.*.content", "token", "absent.path"])
    raw = store.get(key=event_key("secret", 0))
    assert SECRET.encode() not in raw and b"my key is" not in raw
    assert b'"model":"m"' in raw  # only the named fields are touched
    assert is_redacted(event.payload["token"]) and is_redacted(event.payload["messages"][1]["content"])
    assert event.redact == ["request.headers.authorization", "messages.*.content", "token", "absent.path"]
    # the same value under the same key gives the same marker: reuse stays visible without the value
    again = log.append("llm.exchange", payload={"token": SECRET}, redact=["token"])
    assert again.payload["token"] == event.payload["token"]
    assert log.verify().ok


def test_markers_depend_on_the_key_and_input_is_untouched() -> None:
    payload = {"a": {"b": "secret"}, "list": ["x", "y"]}
    one = redact_payload(payload, ["a.b", "list.1"], key=b"one")
    two = redact_payload(payload, ["a.b"], key=b"two")
    assert payload == {"a": {"b": "secret"}, "list": ["x", "y"]}
    assert one["a"]["b"] != two["a"]["b"] and one["list"][0] == "x" and is_redacted(one["list"][1])
    assert redact_payload(one, ["a.b"], key=b"one") == one  # redacting twice changes nothing


@pytest.mark.parametrize("bad", ["", "a..b", ".a"])
def test_bad_paths_are_input_errors(bad: str) -> None:
    with pytest.raises(InputError):
        redact_payload({"a": 1}, [bad])


def test_a_log_marks_with_the_redaction_key_it_was_given(store: Store) -> None:
    # Markers under a configured key are comparable across processes; the per-process default would not be.
    key = b"k" * 32
    event = ExecutionLog(store, "keyed", redaction_key=key).append("llm.exchange", payload={"token": SECRET},
                                                                   redact=["token"])
    assert event.payload == redact_payload({"token": SECRET}, ["token"], key=key)
