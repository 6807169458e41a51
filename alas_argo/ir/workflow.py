"""The workflow: nodes, edges, named policies and schemas, plus the dependency graph the engines and the
runtime derive from them.

Besides explicit edges, three constructs imply dependencies: a choice node precedes each of its branch
targets, a parallel node follows each of its branches, and a catch route precedes its ``next`` node.
:meth:`Workflow.dependencies` lists them all, tagged, so that every consumer sees the same graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, StringConstraints

from alas_argo.ir.base import IRModel, content_hash
from alas_argo.ir.node import Node, NodeKind
from alas_argo.ir.policy import Policy

__all__ = ["Dependency", "Edge", "Via", "Workflow"]


class Edge(IRModel):
    """``target`` runs after ``source`` (and, for any_of joins, edge order is the preference order)."""

    source: str = Field(..., min_length=1, description="Id of the upstream node.")
    target: str = Field(..., min_length=1, description="Id of the downstream node.")


class Via(StrEnum):
    """Where a dependency comes from."""

    EDGE = "edge"
    CHOICE = "choice"
    BRANCH = "branch"
    CATCH = "catch"


@dataclass(frozen=True)
class Dependency:
    """One arc of the derived graph; ``errors`` are the caught error names of a catch arc."""

    source: str
    target: str
    via: Via
    errors: tuple[str, ...] = field(default=())


class Workflow(IRModel):
    """A workflow in the canonical IR."""

    name: str = Field(..., min_length=1, pattern=r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$",
                      description="Workflow name (a DNS label, as Kubernetes object names must be).")
    version: int = Field(1, ge=1, description="Plan version of this workflow definition.")
    description: str | None = Field(None, description="What the workflow does.")
    nodes: list[Node] = Field(..., min_length=1, description="The nodes, in declaration order.")
    edges: list[Edge] = Field(default_factory=list, description="Explicit dependencies.")
    policies: dict[Annotated[str, StringConstraints(min_length=1)], Policy] = Field(
        default_factory=dict, description="Named policies nodes refer to.")
    schemas: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Named JSON Schemas the "
                                               "nodes' contracts may share.")
    log_schemas: dict[str, dict[str, Any]] = Field(default_factory=dict, description="JSON Schema of the "
                                                   "payload per log event type this workflow writes.")
    meta: dict[str, Any] = Field(default_factory=dict, description="Free-form annotations (labels, "
                                 "provenance, engine hints).")

    def node(self, node_id: str) -> Node:
        """The node with id ``node_id``; KeyError if there is none."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def node_map(self) -> dict[str, Node]:
        """Nodes by id (the first of duplicates; validation reports duplicates)."""
        out: dict[str, Node] = {}
        for n in self.nodes:
            out.setdefault(n.id, n)
        return out

    def policy_for(self, node: Node) -> Policy:
        """The node's policy, or the all-defaults policy when it has no ``policy_ref``."""
        if node.policy_ref is None:
            return Policy()
        return self.policies[node.policy_ref]

    def compensation_of(self, node: Node) -> str | None:
        """The id of the node that compensates ``node`` (its own field first, then its policy's)."""
        if node.compensation is not None:
            return node.compensation
        if node.policy_ref is not None and node.policy_ref in self.policies:
            return self.policies[node.policy_ref].compensation
        return None

    def compensation_ids(self) -> set[str]:
        """Ids of nodes that only run as compensations (never scheduled by the graph)."""
        out: set[str] = set()
        for n in self.nodes:
            c = self.compensation_of(n)
            if c is not None:
                out.add(c)
        return out

    def dependencies(self) -> list[Dependency]:
        """Every arc of the graph: explicit edges, choice arcs, parallel-branch arcs and catch arcs."""
        deps = [Dependency(e.source, e.target, Via.EDGE) for e in self.edges]
        for n in self.nodes:
            if n.kind is NodeKind.CHOICE:
                targets = [b.next for b in n.choices] + ([n.default] if n.default else [])
                for t in dict.fromkeys(targets):
                    deps.append(Dependency(n.id, t, Via.CHOICE))
            if n.kind is NodeKind.PARALLEL:
                deps.extend(Dependency(b, n.id, Via.BRANCH) for b in n.branches)
            if n.policy_ref is not None and n.policy_ref in self.policies:
                for c in self.policies[n.policy_ref].catch:
                    deps.append(Dependency(n.id, c.next, Via.CATCH, tuple(c.errors)))
        return deps

    def digest(self) -> str:
        """Content hash of the whole definition."""
        return content_hash(self.to_json())
