"""Builders shared by the runtime tests."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from alas_argo.ir import Edge, Node, Policy, Workflow
from alas_argo.runtime import NodeContext

#: How long a handler meant to hang sleeps: far past every timeout the tests set (at most 30 s), so a call the
#: runtime failed to stop is noticed, yet finite, so that the child of a mutant that never stops it (mutation
#: testing) dies on its own instead of holding mutmut's output pipe open for good.
FOREVER = 120


def workflow(nodes: Sequence[Node | dict[str, Any]], edges: Sequence[tuple[str, str]] = (),
             policies: dict[str, Policy | dict[str, Any]] | None = None, **extra: Any) -> Workflow:
    """A workflow from short-hand parts (dicts are parsed as wire documents)."""
    return Workflow.model_validate({
        "name": "t",
        "nodes": [n.to_json() if isinstance(n, Node) else n for n in nodes],
        "edges": [Edge(source=s, target=t).to_json() for s, t in edges],
        "policies": {k: v.to_json() if isinstance(v, Policy) else v for k, v in (policies or {}).items()},
        **extra,
    })


class Calls:
    """A thread-safe log of handler calls."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, int]] = []

    def add(self, ctx: NodeContext) -> None:
        with self.lock:
            self.log.append((ctx.node_id, ctx.level, ctx.attempt))

    def of(self, node_id: str) -> list[tuple[str, str, int]]:
        return [c for c in self.log if c[0] == node_id]


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
