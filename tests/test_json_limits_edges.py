"""Edges of alas_argo.json_limits left open by mutation testing: the place every refusal names (the file or body,
and the line and column of the refused token, found outside strings and longer numbers, within a bounded
search), each limit at its boundary (depth, integer digits, the count of values), the walk not stopping early
at a boolean, a mapping's non-string keys held to the limits, and the exact error ``loads`` raises."""

from __future__ import annotations

import json

import pytest

from alas_argo.errors import InputError
from alas_argo.json_limits import MAX_DEPTH, MAX_INT_DIGITS, MAX_NODES, check_document, load_json, loads
from alas_argo.step_context import item_value

TOO_LONG = "1" * (MAX_INT_DIGITS + 1)


def _refusal(text: str | bytes, where: str = "doc.json") -> InputError:
    with pytest.raises(InputError) as caught:
        load_json(text, where=where)
    return caught.value


def _check_refusal(doc: object, where: str = "w.yaml") -> InputError:
    with pytest.raises(InputError) as caught:
        check_document(doc, where=where)
    return caught.value


@pytest.mark.parametrize(("text", "where", "message"), [
    ('{"a": 1,\n "b": [2,\n   NaN]}', "doc.json line 3 column 4", "invalid JSON: NaN is not a JSON number"),
    ("NaN", "doc.json line 1 column 1", "invalid JSON: NaN is not a JSON number"),
    ("\n\n  -Infinity", "doc.json line 3 column 3", "invalid JSON: -Infinity is not a JSON number"),
    (TOO_LONG, "doc.json line 1 column 1", f"invalid JSON: integer of {MAX_INT_DIGITS + 1} digits (at most 18)"),
    ("[1,\n -" + TOO_LONG + "]", "doc.json line 2 column 2", "invalid JSON: integer of 19 digits (at most 18)"),
    ("{\n\n\n\n\n\n\n\n\n\n\n\n\"t\": 1e999}", "doc.json line 13 column 6",
     "invalid JSON: number 1e999 is out of range"),
])
def test_a_refused_token_is_named_by_line_and_column(text: str, where: str, message: str) -> None:
    error = _refusal(text)
    assert (error.where, error.message) == (where, message)


@pytest.mark.parametrize("text", [
    '{"note": "NaN", "t": NaN}',  # first inside a string
    '{"a": "x", "b": "NaN", "t": NaN}',  # after an odd number of strings' quotes, and three
    '{"n": "", "b": "a NaN", "t": NaN}',
])
def test_the_token_is_found_outside_strings(text: str) -> None:
    assert _refusal(text).where == f"doc.json line 1 column {text.rindex('NaN') + 1}"


@pytest.mark.parametrize(("before", "after"), [("0.", ""), ("2", ".5"), ("0e-", ""), ("0e", ""), ("0E", ""),
                                               ("0e+", "")])
def test_the_token_is_found_outside_longer_numbers(before: str, after: str) -> None:
    """The refused integer's digits first occur inside an accepted number (after a digit, a point, a sign or an
    exponent): that is not where it stands."""
    decoy = before + TOO_LONG + after
    text = f"[0, {decoy}, {TOO_LONG}]"
    assert isinstance(load_json(decoy, where="x"), float)  # the decoy alone is accepted
    assert _refusal(text).where == f"doc.json line 1 column {text.rindex(TOO_LONG) + 1}"


def test_the_search_for_the_place_is_bounded() -> None:
    """Each candidate costs a scan of the text before it: past 50 the error names the document alone (a body
    of a million decoys would otherwise take minutes to refuse)."""
    def text(decoys: int) -> str:
        return json.dumps({"s": ["NaN"] * decoys})[:-1] + ', "t": NaN}'

    assert _refusal(text(49)).where == f"doc.json line 1 column {text(49).rindex('NaN') + 1}"
    assert _refusal(text(50)).where == "doc.json"


def test_a_long_out_of_range_number_is_cut_to_20_characters() -> None:
    assert _refusal("[" + "1" * 400 + "e999]").message == "invalid JSON: number 11111111111111111111 is out of range"


@pytest.mark.parametrize(("text", "where", "message"), [
    (b'{"a": "\xff"}', "doc.json", "not UTF-8 text (byte 7)"),
    ('{"a": 1,\n "b" 2}', "doc.json line 2 column 6", "invalid JSON: Expecting ':' delimiter"),
    ("[" * 100_000, "doc.json", f"invalid JSON: nested more than {MAX_DEPTH} levels deep"),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "doc.json", f"nested more than {MAX_DEPTH} levels deep"),
])
def test_every_refusal_names_the_document(text: str | bytes, where: str, message: str) -> None:
    error = _refusal(text)
    assert (error.where, error.message) == (where, message)
    assert str(error) == f"{where}: {message}"


@pytest.mark.parametrize(("value", "refused"), [
    (10**MAX_INT_DIGITS - 1, False), (-(10**MAX_INT_DIGITS - 1), False),
    (10**MAX_INT_DIGITS, True), (-(10**MAX_INT_DIGITS), True),
])
def test_integers_at_the_limit(value: int, refused: bool) -> None:
    """Eighteen digits pass and nineteen do not, in a document from YAML or Python as in JSON text."""
    assert (len(str(abs(value))) > MAX_INT_DIGITS) is refused
    if refused:
        error = _check_refusal({"t": value})
        assert (error.where, error.message) == ("w.yaml", f"integer out of range (at most {MAX_INT_DIGITS} digits)")
        assert _refusal(str(value)).message.startswith(f"invalid JSON: integer of {MAX_INT_DIGITS + 1} digits")
    else:
        check_document({"t": value}, where="w.yaml")
        assert load_json(str(value), where="x") == value


def test_the_count_of_values_at_the_limit() -> None:
    check_document([0] * (MAX_NODES - 1), where="w.yaml")  # the list and its items: MAX_NODES values
    error = _check_refusal([0] * MAX_NODES)
    assert (error.where, error.message) == ("w.yaml", f"document holds more than {MAX_NODES} values")


@pytest.mark.parametrize(("doc", "message"), [
    ({"ok": [True, False], "t": [10**40, True]}, "integer out of range (at most 18 digits)"),
    ([float("inf"), False], "number inf is out of range"),
    ([float("nan")], "number nan is out of range"),
])
def test_a_boolean_does_not_end_the_walk(doc: object, message: str) -> None:
    """Booleans are ints to Python and skipped as such; the values after them are still checked."""
    error = _check_refusal(doc)
    assert (error.where, error.message) == ("w.yaml", message)


def test_non_string_keys_are_held_to_the_limits() -> None:
    """YAML keys may be integers (and Python callers' tuples): each is a value of its mapping's depth + 1."""
    error = _check_refusal({10**40: "x"})
    assert error.message == "integer out of range (at most 18 digits)"
    check_document({"a" * 10_000: 1, 10**17: 2, 1.5: 3, None: 4}, where="w.yaml")

    def key(levels: int) -> object:
        nested: object = ()
        for _ in range(levels - 1):
            nested = (nested,)
        return nested

    check_document({key(MAX_DEPTH - 1): 1}, where="w.yaml")  # the mapping at 1, its key MAX_DEPTH - 1 more
    assert _check_refusal({key(MAX_DEPTH): 1}).message == f"nested more than {MAX_DEPTH} levels deep"


def test_loads_raises_the_decode_error_of_its_callers_at_the_start() -> None:
    """Callers word their own message around ``e.msg`` (and some around the position): one error, at line 1
    column 1, not a RecursionError."""
    with pytest.raises(json.JSONDecodeError) as caught:
        loads("[" * 100_000)
    error = caught.value
    assert (error.msg, error.pos, error.lineno, error.colno) == ("nested too deep to decode", 0, 1, 1)
    assert str(error) == "nested too deep to decode: line 1 column 1 (char 0)"


def test_loads_raises_an_integer_too_long_for_int_as_a_decode_error() -> None:
    """int() refuses more than 4,300 digits with a bare ValueError, which escaped every caller catching
    JSONDecodeError (a workflow parameter, a step flag, a map item, an LLM answer) as a traceback."""
    for text in ("1" * 5000, '{"a": [-' + "7" * 4301 + "]}"):
        with pytest.raises(json.JSONDecodeError) as caught:
            loads(text)
        assert (caught.value.msg, caught.value.pos) == ("integer too long to decode", 0)
    assert loads("9" * 4300) == int("9" * 4300)  # within int()'s limit: decoded, the limits are load_json's
    assert item_value("1" * 5000) == "1" * 5000  # a map item that is no JSON is its text


def test_loads_passes_other_errors_through() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        loads('{"a": }')
    assert (caught.value.msg, caught.value.pos) == ("Expecting value", 6)
    with pytest.raises(UnicodeDecodeError):
        loads(b'"\xff"')
