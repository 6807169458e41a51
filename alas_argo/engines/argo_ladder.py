"""The repair escalation ladder as Argo DAG tasks: a node with a repair spec is its own task (the retry level:
the template's retryStrategy) followed by one task per later rung, each started by the failure of the one
before it, and its consumers take the output of whichever rung succeeded.

::

    repair-1                 (LCRP; exits non-zero on a permanent failure)
    repair-1-patch           depends: repair-1.Failed
    repair-1-replan          depends: repair-1-patch.Failed   (the last rung: its failure fails the workflow)
    recheck-1                depends: (repair-1.Succeeded || repair-1-patch.Succeeded || repair-1-replan.Succeeded)

Every rung runs ``alas step <role> --node <node> --rung <level>`` and records its output under the node, so
exactly one output exists whichever rung wrote it, and a consumer reads it from the log (``--recorded``)
instead of a task output parameter that a failed rung never set. A map node keeps the in-pod ladder (a
ladder per item would need a DAG per item): its items climb it themselves (``--repair``).
"""

from __future__ import annotations

import re

from alas_argo.engines import argo_names as nm
from alas_argo.ir import Node, NodeKind

__all__ = ["collapse", "failed_term", "laddered", "rungs", "succeeded_group"]


def laddered(n: Node) -> bool:
    """Whether ``n`` is compiled as a ladder of tasks (a repair spec on a node that is not a map)."""
    return n.repair is not None and n.kind is not NodeKind.MAP


def rungs(n: Node) -> list[tuple[str, str, str]]:
    """(level, role, task name) of the rungs after the node's own task, in order: patch, then replan."""
    spec = n.repair
    if spec is None or n.kind is NodeKind.MAP:
        return []
    out = [("patch", spec.patch, f"{nm.dns(n.id)}-patch")]
    if spec.replan is not None:
        out.append(("replan", spec.replan, f"{nm.dns(n.id)}-replan"))
    return out


def succeeded_group(n: Node, *, skipped: bool = False) -> str:
    """The ``depends`` term that holds once some rung of ``n`` succeeded (``skipped``: or the node's own task was
    skipped by a ``when``, which a bare dependency would accept too)."""
    name = nm.dns(n.id)
    terms = [f"{name}.Succeeded"] + ([f"{name}.Skipped"] if skipped else [])
    terms += [f"{task}.Succeeded" for _, _, task in rungs(n)]
    return "(" + " || ".join(terms) + ")"


def failed_term(n: Node) -> str:
    """The ``depends`` term of the ladder failing for good: its last rung failed (what a catch handler waits on)."""
    return f"{(rungs(n) or [('', '', nm.dns(n.id))])[-1][2]}.Failed"


def collapse(expr: str, ladders: dict[str, list[str]]) -> str:
    """``expr`` with each ladder's success group written back as ``<task>.Succeeded`` and each last rung's
    ``.Failed`` as ``<task>.Failed``: the ``depends`` the compiler writes for a node without a ladder.

    Args:
        expr: A ``depends`` expression.
        ladders: Task name of a laddered node -> the task names of its later rungs, in order.
    """
    # A skip policy's consumers accept the failure too: ``(x || x.Failed)`` reads as the plain dependency.
    expr = re.sub(r"\(\s*([A-Za-z0-9][\w-]*)(?:\.Succeeded)?\s*\|\|\s*\1\.Failed\s*\)", r"\1", expr)
    for task, later in ladders.items():
        group = [rf"{re.escape(task)}\.Succeeded", rf"(?:\s*\|\|\s*{re.escape(task)}\.Skipped)?"]
        group += [rf"\s*\|\|\s*{re.escape(r)}\.Succeeded" for r in later]
        expr = re.sub(r"\(\s*" + "".join(group) + r"\s*\)", f"{task}.Succeeded", expr)
        if later:
            expr = re.sub(rf"(?<![\w-]){re.escape(later[-1])}\.Failed", f"{task}.Failed", expr)
    # A laddered node under a skip policy: (its success group || its last rung failed).
    return re.sub(r"\(\s*([A-Za-z0-9][\w-]*)\.Succeeded\s*\|\|\s*\1\.Failed\s*\)", r"\1.Succeeded", expr)
