"""The edges of redaction (alas_argo.log.redaction): a marker answers "the same value?" and nothing more,
whole objects and list elements are hidden, paths that miss are ignored, a bad path is named."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.errors import InputError
from alas_argo.log.redaction import is_redacted, redact_payload

KEY = b"k" * 32


def test_equal_values_give_equal_markers_and_different_values_different_ones() -> None:
    payload = {"a": "tok-1", "b": "tok-1", "c": "tok-2", "list": ["tok-1", "tok-2", "tok-1"]}
    out = redact_payload(payload, ["a", "b", "c", "list.*"], key=KEY)
    assert out["a"] == out["b"] == out["list"][0] == out["list"][2]
    assert out["c"] == out["list"][1] != out["a"]
    assert all(is_redacted(v) for v in [out["a"], out["c"], *out["list"]])


@pytest.mark.parametrize("secret", [{"authorization": "Bearer x", "cookie": "c"}, {}, {"redacted": "plain"}],
                         ids=["headers", "empty object", "lookalike"])
def test_an_object_named_for_redaction_is_hidden_whole(secret: dict[str, Any]) -> None:
    out = redact_payload({"request": {"headers": secret, "model": "m"}}, ["request.headers"], key=KEY)
    assert is_redacted(out["request"]["headers"]) and out["request"]["model"] == "m"
    assert "Bearer" not in repr(out) and "plain" not in repr(out)


@pytest.mark.parametrize("value", [5, None, "redacted", ["redacted"], {"redacted": 5}, {"redacted": "x", "y": 1},
                                   {"redacted": "sha256:abc"}])
def test_only_a_marker_is_taken_for_one(value: Any) -> None:
    assert not is_redacted(value)


def test_a_list_element_already_redacted_is_left_as_it_is() -> None:
    once = redact_payload({"list": ["a", "b"], "deep": [{"t": "x"}]}, ["list.*", "deep.0.t"], key=KEY)
    assert redact_payload(once, ["list.*", "list.1", "deep.*.t"], key=KEY) == once
    assert redact_payload(once, ["list.0"], key=b"another key") == once  # a marker is never re-marked


@pytest.mark.parametrize("path", ["list.2", "list.9", "list.name", "list.-1", "list.0.x", "missing.0",
                                  "scalar.x", "scalar.0", "list.\u00b2", "list." + "9" * 5000, "list.\u0661"])
def test_a_path_that_misses_is_ignored(path: str) -> None:
    # "\u00b2" (superscript two) passes str.isdigit() but not int(), 5000 digits pass neither Python's
    # 4300-digit limit nor the list, an Arabic-Indic one is not the ASCII index a path names: no element, and
    # no ValueError out of an append.
    payload = {"list": ["a", "b"], "scalar": "s"}
    assert redact_payload(payload, [path], key=KEY) == payload


@pytest.mark.parametrize("path", ["list.2", "list.02", "list." + "0" * 5000 + "2"])
def test_an_index_redacts_that_element_only(path: str) -> None:
    out = redact_payload({"list": ["a", "b", "c"]}, [path], key=KEY)
    assert out["list"][:2] == ["a", "b"] and is_redacted(out["list"][2])


@pytest.mark.parametrize("bad", ["", "a..b", ".a", "a."])
def test_a_bad_path_is_named(bad: str) -> None:
    with pytest.raises(InputError) as caught:
        redact_payload({"a": 1}, ["a", bad], key=KEY)
    assert (caught.value.message, caught.value.where) == (f"invalid redaction path {bad!r}", "redact")


def test_a_field_name_reaching_a_list_hides_that_field_in_every_element() -> None:
    payload = {"messages": [{"role": "user", "content": "tok-1"}, {"role": "system"},
                            [{"content": "tok-2"}], "plain"]}
    out = redact_payload(payload, ["messages.content"], key=KEY)
    assert out["messages"][0]["role"] == "user" and is_redacted(out["messages"][0]["content"])
    assert out["messages"][1] == {"role": "system"} and out["messages"][3] == "plain"
    assert is_redacted(out["messages"][2][0]["content"])
    assert out == redact_payload(payload, ["messages.*.content", "messages.2.*.content"], key=KEY)
