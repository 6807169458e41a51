"""What an engine document cannot say natively, carried alongside it so reverse parsing is lossless.

Each compiler builds the engine-native document first, parses it back with the native reading only, and
records the difference between the original IR and that reading as *extras* (Argo: annotations, ASL:
``Comment`` fields). The reverse parser applies the extras on top of its native reading. So the extras hold
exactly the approximated or unsupported parts, nothing the engine already says, and a round trip is
identical by construction *and* checked: the compilers verify it before returning.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from alas_argo.errors import InputError
from alas_argo.ir import Workflow, validate

__all__ = ["apply_extras", "decoded", "dumps", "json_diff", "loads", "normalized"]

#: Marks a key the native reading has but the original lacks (pydantic dumps omit ``None`` fields).
_ABSENT = {"$absent": True}


def json_diff(original: Any, native: Any) -> Any:
    """The parts of ``original`` that ``native`` gets wrong, or None when they agree.

    Dicts are compared key by key (recursively); any other value (lists included) is replaced whole.
    """
    if isinstance(original, dict) and isinstance(native, dict):
        out: dict[str, Any] = {}
        for key, value in original.items():
            if key not in native:
                out[key] = value
                continue
            sub = json_diff(value, native[key])
            if sub is not None:
                out[key] = sub
        for key in native:
            if key not in original:
                out[key] = dict(_ABSENT)
        return out or None
    if original == native and type(original) is type(native):
        return None
    return original


def apply_extras(native: Any, extras: Any) -> Any:
    """``native`` corrected by ``extras`` (the inverse of :func:`json_diff`)."""
    if extras is None:
        return native
    if isinstance(extras, dict) and isinstance(native, dict) and extras != _ABSENT:
        out = dict(native)
        for key, value in extras.items():
            if value == _ABSENT:
                out.pop(key, None)
            elif key in out and isinstance(value, dict) and isinstance(out[key], dict):
                out[key] = apply_extras(out[key], value)
            else:
                out[key] = value
        return out
    return extras


def normalized(model: type[BaseModel], doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with the model's defaults filled in (as the IR dumps it), or as read when it does not parse."""
    try:
        out: dict[str, Any] = model.model_validate(doc).model_dump(mode="json", by_alias=True, exclude_none=True)
    except ValueError:
        return doc
    return out


def dumps(doc: Any) -> str:
    """Compact, key-sorted JSON for an annotation or comment value. Argo substitutes every ``{{...}}`` in the
    templates it runs, so a string's ``{{`` is written ``{\\u007b``: the same JSON, which Argo leaves alone (compact
    JSON has no ``{{`` outside strings)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).replace("{{", "{\\u007b")


def loads(text: str | None, *, where: str | None = None) -> Any:
    """Inverse of :func:`dumps`; None for a missing annotation.

    Raises:
        InputError: ``text`` is not JSON (a hand-edited or cut annotation): the reverse parsers promise an
            InputError for a malformed document, not a JSONDecodeError.
    """
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError) as e:
        raise InputError(f"not JSON ({e}): {str(text)[:60]!r}", where=where) from None


def decoded(doc: dict[str, Any], *, what: str, where: str) -> Workflow:
    """The workflow a reverse parser assembled (``doc``, extras applied), or an InputError saying why ``what`` (the
    engine document, in words) encodes none: the IR's schema first, then its structure, since a hand-edited
    document can pass the schema and still say two nodes are one or point at a node that is not there."""
    try:
        wf = Workflow.model_validate(doc)
    except ValueError as e:
        raise InputError(f"{what} does not encode a valid IR workflow: {e}".splitlines()[0], where=where) from None
    if problems := validate(wf):
        raise InputError(f"{what} encodes an invalid IR workflow: {problems[0]}", where=wf.name)
    return wf
