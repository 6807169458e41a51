"""Names shared by the Argo compiler and its reverse parser: annotation keys, template names, durations,
retry expressions and idempotency-key templates, each with its inverse next to it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from alas_argo.ir.base import canonical_json
from alas_argo.runtime.policies import MISSING, resolve

__all__ = [
    "ANN_COMPENSATES", "ANN_ITEM_OF", "ANN_KIND", "ANN_NODE", "ANN_NODE_EXTRAS", "ANN_POLICY", "ANN_POLICY_EXTRAS",
    "ANN_RUNG", "ANN_RUNG_OF", "ANN_WF_EXTRAS",
    "COMPENSATE", "ENDED", "EXIT_HANDLER", "LABEL_VERSION", "LABEL_WORKFLOW", "MAIN", "OUTPUTS",
    "dns", "format_duration", "key_from_argo", "key_to_argo", "parse_duration", "placeholders", "retry_expression",
    "retry_names", "substitutions",
]

_P = "alas-argo.dev/"
ANN_NODE = _P + "node"
ANN_KIND = _P + "kind"
ANN_POLICY = _P + "policy"
ANN_ITEM_OF = _P + "item-of"
ANN_COMPENSATES = _P + "compensates"
ANN_NODE_EXTRAS = _P + "node-extras"
ANN_POLICY_EXTRAS = _P + "policy-extras"
ANN_WF_EXTRAS = _P + "ir-extras"
#: On the template of a repair ladder's later rung: the node it belongs to, and its level (patch, replan).
ANN_RUNG_OF = _P + "rung-of"
ANN_RUNG = _P + "rung"
LABEL_WORKFLOW = _P + "workflow"
LABEL_VERSION = _P + "ir-version"
MAIN = "main"
EXIT_HANDLER = "exit-handler"
COMPENSATE = "compensate"
#: The pod-less template (a zero-length suspend) of the task that ends after a caught node, either way.
ENDED = "ended"
#: Directory the steps write Argo output parameters to (an emptyDir: the root filesystem is read-only).
OUTPUTS = "/tmp/outputs"

#: Exit codes of `alas step` (alas_argo.errors): 75 transient, 1 integrity, 2 other permanent errors. Transient
#: too, because the step is idempotent against the log and running it again is safe:
#: - 143, SIGTERM's default action: the pod was stopped (deleted, evicted, drained) while Python was starting or
#:   exiting, outside the window in which `alas step` turns SIGTERM into exit 75. On the cluster, a step
#:   signalled while Python started failed its whole workflow this way (Failed, exit 143) before it was retried;
#: - a node in Argo's Error phase: the pod gone (deleted, evicted, its node lost) before it reported an exit code.
#: 137 (SIGKILL) is not: it is also how the OOM killer ends a step, which running it again would repeat.
_EXIT_TERMS: dict[str, tuple[str, ...]] = {
    "TransientError": ("asInt(lastRetry.exitCode) == 75", "asInt(lastRetry.exitCode) == 143",
                       "lastRetry.status == 'Error'"),
    "Timeout": ("lastRetry.message contains 'deadline'",),
    "IntegrityError": ("asInt(lastRetry.exitCode) == 1",),
    "PermanentError": ("asInt(lastRetry.exitCode) == 2",)}
#: Every error class of the package by the exit code `alas step` ends with when it is raised (its class's
#: ``exit_code``), so a policy's ``retry_on`` retries on Argo what it retries locally; a name not here is read
#: as a permanent error (tests/engines/test_argo_names_edges.py checks every AlasError subclass is here).
_ALIASES = {
    # exit 75
    "StoreUnavailable": "TransientError", "ConflictError": "TransientError", "LlmUnavailable": "TransientError",
    "ArgoUnavailable": "TransientError",
    # the runtime's own timeout of a node is Argo's deadline
    "NodeTimeout": "Timeout",
    # exit 2
    "InputError": "PermanentError", "ContractError": "PermanentError", "WorkflowError": "PermanentError",
    "InfeasibleError": "PermanentError", "NoSolutionError": "PermanentError", "StoreError": "PermanentError",
    "LoopGuardTripped": "PermanentError", "RecordNotFound": "PermanentError", "IllegalTransition": "PermanentError",
    "LlmAuthError": "PermanentError", "LlmRequestError": "PermanentError", "ParseError": "PermanentError",
    "UnsupportedFeature": "PermanentError", "RunNotFound": "PermanentError", "RemoteError": "PermanentError",
    "LlmEndpointError": "PermanentError", "AlasError": "PermanentError"}
_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def dns(node_id: str) -> str:
    """An Argo template / task name for an IR node id (Argo names allow no underscores)."""
    return node_id.replace("_", "-").lower()


def format_duration(seconds: float) -> str:
    """Seconds as a Go duration string ("2s", "0.25s", "0.00005s": Go reads no exponent, repr writes 5e-05)."""
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{Decimal(repr(float(seconds))):f}s"  # the shortest digits that read back as the same float


def parse_duration(text: str | int) -> float:
    """Inverse of :func:`format_duration`, also reading "1m30s" and bare integers."""
    if isinstance(text, int) or str(text).isdigit():
        return float(text)
    parts = _DURATION.findall(str(text))
    if not parts or "".join(n + u for n, u in parts) != str(text):
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def retry_expression(retry_on: list[str]) -> tuple[str, str | None]:
    """(retryPolicy, expression) for IR error names; Argo only sees exit codes and the node message."""
    if "*" in retry_on:
        return "Always", None
    terms = dict.fromkeys(term for n in retry_on
                          for term in _EXIT_TERMS[_ALIASES.get(n, n if n in _EXIT_TERMS else "PermanentError")])
    return "Always", " || ".join(terms) or "false"


def retry_names(policy: str | None, expression: str | None) -> list[str]:
    """Inverse of :func:`retry_expression` (error names by canonical class)."""
    if expression is None:
        return ["*"] if policy in ("Always", None) else ["TransientError"]
    by_term = {term: name for name, terms in _EXIT_TERMS.items() for term in terms}
    return list(dict.fromkeys(by_term[t] for t in expression.split(" || ") if t in by_term))


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_SUBSTITUTION = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


def substitutions(text: str) -> tuple[list[str], list[str]]:
    """What Argo substitutes in ``text``: the ``{{...}}`` references, in order, and the openings that start none
    (a ``{{`` never closed, or one followed by a third brace, as in ``{{{workflow.name}}}``), each as the text from
    it on (at most 40 characters). Argo's templating takes every ``{{`` as the start of a reference, so a
    workflow holding one of the latter is refused at submission."""
    refs: list[str] = []
    strays: list[str] = []
    at = text.find("{{")
    while at != -1:
        if (m := _SUBSTITUTION.match(text, at)) is None:
            strays.append(text[at:at + 40])
            at = text.find("{{", at + 2)
        else:
            refs.append(m.group(1))
            at = text.find("{{", m.end())
    return refs, strays


def placeholders(key: str) -> list[str]:
    """The placeholders of an IR idempotency-key template (``{run}``, ``{node}``, ``{<dep>.<field>}``, ...)."""
    return _PLACEHOLDER.findall(key)


def key_to_argo(key: str, *, node_id: str, run: str, deps: list[str], has_item: bool,
                params: Mapping[str, Any] | None = None) -> str:
    """An IR idempotency-key template in Argo's substitution syntax (memoize.key); a node's ``params`` are
    fixed at compile time, so ``{<param>}`` (or a path into one) is written as its value, as the runtime does.
    A map item's key (``has_item``) ends with the item unless the template names it."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        root = name.split(".")[0]
        if name == "run":
            return run
        if name == "node":
            return dns(node_id)
        if name in ("item", "index"):
            # Only a map item has one; elsewhere the placeholder is empty, as in the local runtime.
            return "{{inputs.parameters.item}}" if has_item else "none"
        if root == "inputs" and "." in name:
            return "{{workflow.parameters." + name.split(".", 1)[1] + "}}"
        if root in deps:
            # The log key of that dependency's output: unique per run and output, which is what a key needs.
            return "{{inputs.parameters.in-" + dns(root) + "}}"
        if params is not None and root in params:
            value = resolve(name, params)  # as the local runtime's render_key reads it
            if value is MISSING:
                return run  # resolves to nothing (the local runtime refuses the key when the node runs)
            return value if isinstance(value, str) else canonical_json(value)
        return run
    out = _PLACEHOLDER.sub(sub, key)
    if has_item and not {"item", "index"} & set(placeholders(key)):
        # Every item pod runs under the node's key: without the item, the first item's recorded output would
        # be every other item's too (`alas step` reuses what a key recorded).
        out += "/{{inputs.parameters.item}}"
    return out


def key_from_argo(key: str, *, node_id: str, run: str) -> str:
    """Best-effort inverse of :func:`key_to_argo` (the compiler records the original when this misses)."""
    out = key.replace(run, "{run}").replace("{{inputs.parameters.item}}", "{item}")
    out = re.sub(r"\{\{workflow\.parameters\.([\w-]+)\}\}", r"{inputs.\1}", out)
    return re.sub(rf"(?<!\w){re.escape(dns(node_id))}(?!\w)", "{node}", out)
