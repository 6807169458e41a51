"""Documents from outside (files, request bodies, stored objects) read within limits.

Python's ``json`` raises ``RecursionError`` on deeply nested arrays and ``ValueError`` on integers of more
than 4,300 digits, and accepts ``NaN`` and ``1e999``; a YAML document can nest as deep and alias a node a
million times. Every parser of the project reads through :func:`load_json` (or checks a decoded document
with :func:`check_document`), so each of those becomes one :class:`~alas_argo.errors.InputError` naming the
place, and nothing downstream meets a value no real document holds: no schedule is 64 levels deep, no time
has 19 digits. Short texts whose readers word their own error around ``json.JSONDecodeError`` (workflow
parameters, step flags, an endpoint's answer) are read through :func:`loads`, so nesting too deep to decode, or
an integer too long for ``int``, is one more malformed text for them, not a RecursionError or ValueError that
escapes as a crash.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from typing import Any

from alas_argo.errors import InputError

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "MAX_NODES", "check_document", "load_json", "loads"]

#: Deepest nesting of arrays and objects accepted (an instance is 4 deep, a workflow about 10).
MAX_DEPTH = 64
#: Most digits of an integer (int64 has 19; every time of the project is far below).
MAX_INT_DIGITS = 18
#: Most values in one decoded document, counting a YAML alias each time it is used.
MAX_NODES = 2_000_000


class _Refused(Exception):
    """Raised inside the decoder's hooks; turned into an InputError with the place of ``token``."""

    def __init__(self, message: str, token: str) -> None:
        super().__init__(message)
        self.token = token


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})", text)
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text[:20]} is out of range", text)
    return value


def _parse_constant(name: str) -> float:
    raise _Refused(f"{name} is not a JSON number", name)


def _position(text: str, token: str, where: str) -> str:
    """``where line L column C`` of the first occurrence of ``token`` outside a string, as far as a plain
    search can tell (the decoder's hooks are not told where they are)."""
    for match in itertools.islice(re.finditer(re.escape(token), text), 50):  # bounded: this is the error path
        before = text[: match.start()]
        # Not inside a longer number (`in` on the last character would skip a token opening the text: "" is in
        # every string).
        if before.count('"') % 2 == 0 and not (before[-1:].isdigit() or before.endswith(tuple(".-eE+"))):
            line = before.count("\n") + 1
            return f"{where} line {line} column {match.start() - before.rfind(chr(10))}"
    return where


def load_json(data: str | bytes, *, where: str) -> Any:
    """Decode a JSON document within the limits of this module.

    Args:
        data: The document (bytes must be UTF-8).
        where: The place named in errors (a file path, ``body``).

    Raises:
        InputError: not UTF-8, not JSON, nested deeper than :data:`MAX_DEPTH`, an integer longer than
            :data:`MAX_INT_DIGITS` digits, or a non-finite number.
    """
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise InputError(f"not UTF-8 text (byte {e.start})", where=where) from None
    # A byte order mark, which Windows editors write and RFC 8259 lets a parser ignore: json refuses it.
    data = data.removeprefix("\ufeff")
    try:
        doc = json.loads(data, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg}", where=f"{where} line {e.lineno} column {e.colno}") from None
    except _Refused as e:
        raise InputError(f"invalid JSON: {e}", where=_position(data, e.token, where)) from None
    except RecursionError:
        raise InputError(f"invalid JSON: nested more than {MAX_DEPTH} levels deep", where=where) from None
    check_document(doc, where=where)
    return doc


def loads(text: str | bytes) -> Any:
    """``json.loads``, with nesting too deep for Python to decode and an integer too long for ``int`` raised as
    the ``json.JSONDecodeError`` its callers already catch (``e.msg`` says why)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deep to decode", str(text)[:1], 0) from None
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError | UnicodeDecodeError):
            raise
        # int() refuses more than 4,300 digits (sys.get_int_max_str_digits) with a bare ValueError.
        raise json.JSONDecodeError("integer too long to decode", str(text)[:1], 0) from None


def check_document(doc: Any, *, where: str) -> None:
    """Check a decoded document (JSON or YAML) against the limits, without recursion.

    Raises:
        InputError: nesting deeper than :data:`MAX_DEPTH`, more than :data:`MAX_NODES` values, an integer
            longer than :data:`MAX_INT_DIGITS` digits, or a non-finite float.
    """
    limit = 10**MAX_INT_DIGITS
    stack: list[tuple[Any, int]] = [(doc, 1)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise InputError(f"document holds more than {MAX_NODES} values", where=where)
        # Sets too (YAML's !!set loads as one, and escaped every limit before), and tuples from Python callers.
        if isinstance(node, dict | list | set | frozenset | tuple):
            if depth > MAX_DEPTH:
                raise InputError(f"nested more than {MAX_DEPTH} levels deep", where=where)
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)
            if isinstance(node, dict):
                stack.extend((key, depth + 1) for key in node if not isinstance(key, str))
        elif isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if not -limit < node < limit:
                raise InputError(f"integer out of range (at most {MAX_INT_DIGITS} digits)", where=where)
        elif isinstance(node, float) and not math.isfinite(node):
            raise InputError(f"number {node} is out of range", where=where)
