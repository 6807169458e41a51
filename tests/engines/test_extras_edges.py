"""The extras that make the engines' round trips lossless, on their own: ``apply_extras`` undoes ``json_diff``
exactly, for any JSON values, and the marker of a key to drop has a fixed wire form.

Found by mutation testing (scripts/mutation.py on alas_argo/engines/extras.py): through the compilers, a key
the native reading adds was still dropped when the marker became ``None`` (pydantic reads a ``None`` field as
absent), and no round trip ever diffed a dict against a non-dict or applied extras by hand, so the inverse was
checked only on the shapes the compilers happen to produce today.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo
from alas_argo.engines.extras import apply_extras, dumps, json_diff, loads
from alas_argo.errors import InputError
from tests.engines.samples import kitchen_sink


def json_values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """JSON values; keys never spell the marker's own key."""
    return st.recursive(leaves, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=4), max_leaves=12)


SCALARS = st.booleans() | st.integers(-5, 5) | st.floats(-2, 2) | st.text(max_size=3)
#: What the compilers diff is the IR as dumped with ``exclude_none``: no ``None`` where the diff could see it
#: (``None`` means "no difference"). The native reading may hold anything.
ORIGINAL = json_values(SCALARS)
NATIVE = json_values(st.none() | SCALARS)


@settings(max_examples=400, deadline=None)
@given(ORIGINAL, NATIVE)
def test_applying_the_diff_to_the_native_reading_gives_the_original_back(original: Any, native: Any) -> None:
    extras = json_diff(original, native)
    assert apply_extras(native, extras) == original
    if extras is None:
        assert original == native


def test_a_key_the_native_reading_adds_is_marked_absent_on_the_wire() -> None:
    """The marker is part of the annotations and comments of every compiled document: its spelling is a data
    contract, and applying it removes the key however deep it is."""
    original = {"a": 1, "n": {"x": [1, 2]}}
    native = {"a": 1, "b": None, "n": {"x": [1, 2], "y": 0}}
    extras = json_diff(original, native)
    assert dumps(extras) == '{"b":{"$absent":true},"n":{"y":{"$absent":true}}}'
    assert apply_extras(native, loads(dumps(extras))) == original


def test_a_dict_against_a_non_dict_is_replaced_whole_both_ways() -> None:
    assert json_diff({"a": 1}, [1, "a"]) == {"a": 1}
    assert json_diff([1, "a"], {"a": 1}) == [1, "a"]
    assert json_diff({"a": 1}, None) == {"a": 1}
    assert apply_extras([1, "a"], {"a": 1}) == {"a": 1}
    assert apply_extras(None, {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_values_of_another_type_differ_even_when_python_calls_them_equal() -> None:
    assert json_diff(1, 1.0) == 1 and json_diff(True, 1) is True and json_diff(1.0, 1) == 1.0
    assert json_diff({"f": 2.0}, {"f": 2}) == {"f": 2.0}
    assert json_diff({"f": 2}, {"f": 2}) is None


def test_hand_edited_extras_are_applied_without_crashing() -> None:
    """A hand-edited annotation may mark absent a key the native reading lacks, or give a node's extras as a
    non-object; the first is a no-op, the second replaces the node (which the IR's schema then refuses with an
    InputError rather than a traceback)."""
    assert apply_extras({"a": 1}, {"b": {"$absent": True}}) == {"a": 1}
    assert apply_extras({"a": 1}, [1]) == [1]
    assert apply_extras({"a": 1}, "x") == "x"
    assert apply_extras({"a": {"b": 1}}, {"a": {"c": 2}}) == {"a": {"b": 1, "c": 2}}
    assert apply_extras({"a": 5}, {"a": {"c": 2}}) == {"a": {"c": 2}}


def test_dumps_is_compact_and_key_sorted_and_loads_reads_a_missing_annotation_as_none() -> None:
    assert dumps({"b": [1, {"d": 1, "c": 2}], "a": None}) == '{"a":null,"b":[1,{"c":2,"d":1}]}'
    assert loads(None) is None
    assert loads('{"a":[1,2.5]}') == {"a": [1, 2.5]}


@pytest.mark.parametrize("text", ["{bad", "", '{"role":"job_agent"'])
def test_an_annotation_that_is_not_json_is_an_input_error(text: str) -> None:
    """A hand-edited or cut annotation: ``from_argo`` promises an InputError for a malformed document, and used
    to raise json's JSONDecodeError (a traceback for whoever read the document back)."""
    with pytest.raises(InputError) as e:
        loads(text, where="template agents")
    assert e.value.message.startswith("not JSON (") and e.value.message.endswith(f": {text!r}")
    assert e.value.where == "template agents"
    doc = to_argo(kitchen_sink(), image="alas:test")
    template = next(t for t in doc["spec"]["templates"] if t["name"] == "agents")
    template["metadata"]["annotations"]["alas-argo.dev/node-extras"] = text
    with pytest.raises(InputError) as read:
        from_argo(doc)
    assert read.value.message.startswith("not JSON (")
    assert read.value.where == "template agents alas-argo.dev/node-extras"
