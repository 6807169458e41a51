"""Names shared by the ASL compiler and its reverse parser: reserved states, resources, error names,
Choice-rule comparators and the Comment envelope, each with its inverse next to it."""

from __future__ import annotations

import json
import re
from typing import Any

from alas_argo.errors import InputError

__all__ = [
    "ALIVE_SUFFIX",
    "COMMENT_PREFIX",
    "FAIL_STATE",
    "GATE_SUFFIX",
    "ITEM_SUFFIX",
    "MAX_STATE_NAME",
    "RESOURCE",
    "SKIPPED_END",
    "UNDO_PREFIX",
    "condition_to_rule",
    "from_comment",
    "from_error",
    "path_from_asl",
    "path_to_asl",
    "ref",
    "ref_parts",
    "role_of",
    "rule_to_condition",
    "rung_state",
    "to_comment",
    "to_error",
]

#: Prefix of compensation states and the terminal state of a rollback (node ids may not use it).
UNDO_PREFIX = "alas-undo-"
FAIL_STATE = "alas-rolled-back"
#: Resource of every Task: one `alas step <role>` runner; the role is what follows it.
RESOURCE = "arn:aws:states:::alas:step/"
COMMENT_PREFIX = "alas-argo:"
#: Suffix of the Task state inside a Map's ItemProcessor ("/" cannot occur in a node id).
ITEM_SUFFIX = "/item"
#: Suffix of the Choice state in front of a run of chained nodes sharing one gate (IR ``when``): it enters the
#: run when the gate holds, else goes on to the state after the run (the next gate, if that is gated too).
GATE_SUFFIX = "/gate"
#: Suffix of the Choice state in front of a run of chained nodes downstream of caught nodes: after a caught
#: failure of one of them (its error recorded, no result) it goes on past the run, as the local runtime skips
#: what follows a caught failure; else it enters the run.
ALIVE_SUFFIX = "/alive"
#: The state a skip lands on when the skipped run ends the chain.
SKIPPED_END = "alas-skipped-end"
#: The longest state name ASL allows ("State names MUST have length of less than or equal to 80 Unicode
#: characters"); Step Functions refuses a definition with a longer one.
MAX_STATE_NAME = 80


def role_of(resource: Any) -> str:
    """The role a Task's ``Resource`` names: what follows :data:`RESOURCE` (a role may hold ``/``), or the last
    segment of another ARN."""
    text = str(resource or "")
    return text.removeprefix(RESOURCE) if text.startswith(RESOURCE) else text.rsplit("/", 1)[-1]


def rung_state(node_id: str, level: str) -> str:
    """The Task state of a repair ladder's later rung (``repair_1/patch``; "/" cannot occur in a node id)."""
    return f"{node_id}/{level}"

_ERRORS = {"*": "States.ALL", "Timeout": "States.Timeout"}
_ERRORS_BACK = {v: k for k, v in _ERRORS.items()}


def to_error(name: str) -> str:
    """An IR error name as an ASL error name."""
    return _ERRORS.get(name, name)


def from_error(name: str) -> str:
    """Inverse of :func:`to_error`."""
    return _ERRORS_BACK.get(name, name)


def to_comment(doc: dict[str, Any] | None, text: str | None = None) -> str | None:
    """A Comment carrying ``doc`` (the IR values ASL cannot say) after a human-readable ``text``."""
    if not doc:
        return text
    payload = COMMENT_PREFIX + json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return payload if text is None else f"{text} {payload}"


def from_comment(comment: str | None) -> dict[str, Any]:
    """Inverse of :func:`to_comment` ({} when the Comment carries nothing).

    Raises:
        InputError: What follows the prefix is not a JSON object (a hand-edited or cut Comment): the reverse
            parser promises an InputError for a malformed definition, not a JSONDecodeError.
    """
    if not comment or COMMENT_PREFIX not in comment:
        return {}
    text = comment.split(COMMENT_PREFIX, 1)[1]
    try:
        out = json.loads(text)
    except ValueError as e:
        raise InputError(f"Comment is not JSON after {COMMENT_PREFIX!r} ({e}): {text[:60]!r}") from None
    if not isinstance(out, dict):
        raise InputError(f"Comment after {COMMENT_PREFIX!r} is not a JSON object: {text[:60]!r}")
    return out


# A list index (``output.rows.0``) is written in brackets, ``$.rows[0]``: JSONPath's dot notation takes only
# member names that start with a letter or ``_``, so Step Functions would not read ``.0`` as an index.
_SEGMENT = re.compile(r"\.([A-Za-z0-9_]+)|\['([^']*)'\]|\[(\d+)\]")


def ref(*parts: str) -> str:
    """A Reference Path ``$.a.b_c[0]``: ASL path steps are letters, digits and ``_`` only, so other characters
    (the ``-`` of node ids) become ``_``, and an all-digit step is a list index (``[0]``; an object key of
    digits cannot be told from one); where that loses information, the Comment keeps the IR value."""
    return "$" + "".join(f"[{p}]" if re.fullmatch(r"[0-9]+", p) else "." + re.sub(r"[^A-Za-z0-9_]", "_", p)
                         for p in parts)


def ref_parts(path: str) -> list[str]:
    """Inverse of :func:`ref`."""
    return [a or b or c for a, b, c in _SEGMENT.findall(path[1:])]


def path_to_asl(path: str) -> str:
    """A dotted IR path (``inputs.x`` or ``<node>.<field>``) as a Reference Path into the state document."""
    parts = path.split(".")
    return ref(*parts) if parts[0] in ("inputs", "item") else ref("results", *parts)


def path_from_asl(path: str) -> str:
    """Inverse of :func:`path_to_asl`."""
    parts = ref_parts(path)
    return ".".join(parts[1:] if parts[0] == "results" else parts)


_CMP = {"eq": "Equals", "lt": "LessThan", "le": "LessThanEquals", "gt": "GreaterThan", "ge": "GreaterThanEquals"}
_CMP_BACK = {v: k for k, v in _CMP.items()}


def _compare(var: str, op: str, value: Any) -> dict[str, Any]:
    if value is None and op == "eq":
        return {"Variable": var, "IsNull": True}
    if isinstance(value, bool):
        return {"Variable": var, "BooleanEquals": value}
    kind = "Numeric" if isinstance(value, int | float) else "String"
    return {"Variable": var, f"{kind}{_CMP[op]}": value if kind == "Numeric" else str(value)}


def condition_to_rule(cond: dict[str, Any]) -> dict[str, Any]:
    """A Choice rule (without Next) for an IR condition (JSON form).

    Every test but ``exists`` is guarded by ``IsPresent``: Step Functions fails the execution (States.Runtime,
    "Invalid path") when a Choice compares a path the state document does not hold, where the local runtime
    reads a comparison of a missing value as false (``runtime.policies``; ``ne`` too). With the guard a
    missing path is false in ASL as well, and ``negate`` turns that false into true, as locally.
    """
    var, op, value = path_to_asl(cond["path"]), cond.get("op", "eq"), cond.get("value")
    if op == "exists":
        rule = {"Variable": var, "IsPresent": True}
    else:
        if op == "truthy":  # approximated: ASL has no truthiness test, booleans only
            test = {"Variable": var, "BooleanEquals": True}
        elif op == "ne":
            test = {"Not": _compare(var, "eq", value)}
        elif op == "in":
            test = {"Or": [_compare(var, "eq", v) for v in value or []]}
        else:
            test = _compare(var, op, value)
        rule = {"And": [{"Variable": var, "IsPresent": True}, test]}
    return {"Not": rule} if cond.get("negate") else rule


def _unguarded(rule: dict[str, Any]) -> dict[str, Any] | None:
    """The test inside :func:`condition_to_rule`'s ``IsPresent`` guard, or None when ``rule`` is not one."""
    parts = rule.get("And")
    if (set(rule) <= {"And", "Next"} and isinstance(parts, list) and len(parts) == 2 and isinstance(parts[0], dict)
            and set(parts[0]) == {"Variable", "IsPresent"} and parts[0]["IsPresent"] is True
            and isinstance(parts[1], dict)):
        inner = parts[1].get("Not", parts[1])
        first = inner.get("Or", [inner])
        if all(isinstance(r, dict) and r.get("Variable") == parts[0]["Variable"] for r in first):
            return dict(parts[1])
    return None


def rule_to_condition(rule: dict[str, Any]) -> dict[str, Any]:
    """Inverse of :func:`condition_to_rule` (truthy reads back as ``eq true``; the Comment corrects it). A rule
    without the ``IsPresent`` guard (a document rendered before it) reads back as the same condition."""
    if (test := _unguarded(rule)) is not None:
        return rule_to_condition(test)
    if "Not" in rule and set(rule) <= {"Not", "Next"}:
        inner = rule_to_condition(rule["Not"])
        if inner["op"] == "eq" and not inner.get("negate") and "Not" not in rule["Not"]:
            return {**inner, "op": "ne"}
        return {**inner, "negate": not inner.get("negate", False)}
    if "Or" in rule:
        parts = [rule_to_condition(r) for r in rule["Or"]]
        return {"path": parts[0]["path"], "op": "in", "value": [p["value"] for p in parts], "negate": False}
    if not isinstance(rule.get("Variable"), str):  # an And this compiler did not write, or no test at all
        raise ValueError(f"unsupported Choice rule {sorted(rule)}")
    path = path_from_asl(rule["Variable"])
    if "IsPresent" in rule:
        return {"path": path, "op": "exists", "value": None, "negate": False}
    if "IsNull" in rule:
        return {"path": path, "op": "eq", "value": None, "negate": False}
    if "BooleanEquals" in rule:
        return {"path": path, "op": "eq", "value": rule["BooleanEquals"], "negate": False}
    for key, value in rule.items():
        for prefix in ("Numeric", "String"):
            if key.startswith(prefix) and key[len(prefix):] in _CMP_BACK:
                return {"path": path, "op": _CMP_BACK[key[len(prefix):]], "value": value, "negate": False}
    raise ValueError(f"unsupported Choice rule {sorted(rule)}")
