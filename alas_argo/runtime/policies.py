"""Pure policy helpers: error naming and matching, dotted-path lookup, conditions, idempotency keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from alas_argo.errors import AlasError, TransientError, WorkflowError
from alas_argo.ir.base import canonical_json
from alas_argo.ir.condition import Condition, Op
from alas_argo.ir.policy import ANY_ERROR, TIMEOUT_ERROR
from alas_argo.ir.validation import PLACEHOLDER

__all__ = [
    "MISSING",
    "NodeTimeout",
    "RemoteError",
    "error_names",
    "evaluate",
    "matches",
    "primary_error_name",
    "render_key",
    "resolve",
]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: What :func:`resolve` returns for a path that leads nowhere.
MISSING: Any = _Missing()


class NodeTimeout(TransientError):
    """An attempt ran past its policy timeout and was stopped."""

    error_name = TIMEOUT_ERROR


class RemoteError(AlasError):
    """An error raised in a child process that could not be sent back as itself; keeps its type names so
    retry_on and catch still match it."""

    def __init__(self, message: str, type_names: Iterable[str], *, transient: bool = False) -> None:
        super().__init__(message)
        self.type_names = tuple(type_names)
        self.transient = transient

    def __reduce__(self) -> Any:
        # Its constructor takes extra arguments, which default exception pickling would drop.
        return (RemoteError, (self.message, self.type_names), {"transient": self.transient})

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        self.transient = bool((state or {}).get("transient"))


def error_names(exc: BaseException) -> set[str]:
    """Names an error answers to: its class and base class names, plus ``Timeout`` for timeouts."""
    if isinstance(exc, RemoteError):
        names = set(exc.type_names)
    else:
        names = {cls.__name__ for cls in type(exc).__mro__ if cls not in (object, BaseException)}
    extra = getattr(exc, "error_name", None)
    if isinstance(extra, str):
        names.add(extra)
    return names


def primary_error_name(exc: BaseException) -> str:
    """The one name recorded for an error: ``Timeout`` for timeouts, else the class name."""
    extra = getattr(exc, "error_name", None)
    if isinstance(extra, str):
        return extra
    if isinstance(exc, RemoteError) and exc.type_names:
        return exc.type_names[0]
    return type(exc).__name__


def matches(patterns: Iterable[str], exc: BaseException) -> bool:
    """Whether any of ``patterns`` (error names or ``*``) matches ``exc``."""
    names = error_names(exc)
    return any(p == ANY_ERROR or p in names for p in patterns)


def resolve(path: str, scope: Mapping[str, Any]) -> Any:
    """The value at dotted ``path`` in ``scope`` (dict keys, list indices), or :data:`MISSING`."""
    value: Any = scope
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list | tuple) and part.lstrip("-").isdigit() and -len(value) <= int(part) \
                < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def _compare(op: Op, left: Any, right: Any) -> bool:
    if op is Op.EXISTS:
        return left is not MISSING
    if left is MISSING:
        return False
    if op is Op.TRUTHY:
        return bool(left)
    if op is Op.EQ:
        return bool(left == right)
    if op is Op.NE:
        return bool(left != right)
    if op is Op.IN:
        return isinstance(right, list) and left in right
    try:
        if op is Op.LT:
            return bool(left < right)
        if op is Op.LE:
            return bool(left <= right)
        if op is Op.GT:
            return bool(left > right)
        return bool(left >= right)
    except TypeError:
        # Comparing incomparable values (None < 3) is a false condition, not a crash of the run.
        return False


def evaluate(condition: Condition, scope: Mapping[str, Any]) -> bool:
    """Evaluate ``condition`` against ``scope`` (roots: inputs, output, item, node ids)."""
    result = _compare(condition.op, resolve(condition.path, scope), condition.value)
    return not result if condition.negate else result


def render_key(template: str, scope: Mapping[str, Any], *, node_id: str) -> str:
    """Fill an idempotency key template; a placeholder that resolves to nothing is a WorkflowError."""

    def fill(m: Any) -> str:
        value = resolve(m.group(1), scope)
        if value is MISSING:
            raise WorkflowError(f"idempotency key placeholder {{{m.group(1)}}} resolves to nothing",
                                where={"node": node_id})
        return value if isinstance(value, str) else canonical_json(value)

    return str(PLACEHOLDER.sub(fill, template))
