"""Redaction of payload fields before they reach the store.

A field named for redaction (a dotted path into the payload: ``"request.headers.authorization"``; a
numeric segment indexes a list, ``*`` means every element, and a name reaching a list names that field in
every element: ``"messages.content"``) is replaced by a marker
``{"redacted": "hmac-sha256:<hex>"}``. The marker is a keyed hash (HMAC) rather than a plain or salted hash
stored next to it, because a low-entropy secret (a short token, a name) would otherwise be recoverable by
brute force from the log alone; equal values still give equal markers under one key, so "was the same
credential used twice?" stays answerable.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import os
from collections.abc import Iterable
from typing import Any

from alas_argo.errors import InputError
from alas_argo.log.event import canonical_json

__all__ = ["PROCESS_REDACTION_KEY", "is_redacted", "redact_payload"]

#: Default HMAC key: random per process, so markers are never reversible and only comparable within one
#: writer. Pass a stable key to ExecutionLog to compare markers across processes.
PROCESS_REDACTION_KEY = os.urandom(32)


def _marker(value: Any, key: bytes) -> dict[str, str]:
    digest = hmac.new(key, canonical_json(value), hashlib.sha256).hexdigest()
    return {"redacted": f"hmac-sha256:{digest}"}


def is_redacted(value: Any) -> bool:
    """Whether ``value`` is a redaction marker."""
    return isinstance(value, dict) and set(value) == {"redacted"} and str(value["redacted"]).startswith(
        "hmac-sha256:")


def _positions(head: str, size: int) -> list[int]:
    """The positions in a list of ``size`` that a path segment names: all of them for ``*``, one for an index
    in range written in ASCII digits, none for anything else (a name, ``-1``, an index past the end)."""
    if head == "*":
        return list(range(size))
    # Not int() on anything isdigit() accepts: "²" is a digit int() refuses, and a digit string longer than
    # Python's 4300-digit limit raises too; neither can name an element, so neither may crash the append.
    digits = head.lstrip("0") or "0"
    if head.isascii() and head.isdigit() and len(digits) <= len(str(size)) and int(digits) < size:
        return [int(digits)]
    return []


def _apply(node: Any, parts: list[str], key: bytes) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, dict):
        if head not in node:
            return  # absent: nothing to hide
        if rest:
            _apply(node[head], rest, key)
        elif not is_redacted(node[head]):
            node[head] = _marker(node[head], key)
    elif isinstance(node, list):
        if head != "*" and not (head.isascii() and head.isdigit()):
            # A field name reaching a list names that field in every element ("messages.content"): hiding it
            # everywhere is the safe reading; matching nothing would write the secret in clear.
            for element in node:
                _apply(element, parts, key)
            return
        for i in _positions(head, len(node)):
            if rest:
                _apply(node[i], rest, key)
            elif not is_redacted(node[i]):
                node[i] = _marker(node[i], key)


def redact_payload(payload: dict[str, Any], paths: Iterable[str], *, key: bytes = PROCESS_REDACTION_KEY
                   ) -> dict[str, Any]:
    """A copy of ``payload`` with every field at ``paths`` replaced by a keyed-hash marker.

    Paths that do not exist in the payload are ignored (there is nothing to leak); the input is not
    modified.

    Raises:
        InputError: A path is empty or has an empty segment.
    """
    out = copy.deepcopy(payload)
    for path in paths:
        parts = path.split(".")
        if not path or any(p == "" for p in parts):
            raise InputError(f"invalid redaction path {path!r}", where="redact")
        _apply(out, parts, key)
    return out
