"""IR nodes: a tagged union over ``kind`` (task, choice, parallel, map) sharing one field set.

One model with a ``kind`` tag keeps the wire format flat (what both engines and the JSON Schema want); the
kind-specific fields are checked by :mod:`alas_argo.ir.validation`, which reports every problem at once
instead of failing on the first.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from alas_argo.ir.base import IRModel, content_hash
from alas_argo.ir.condition import Branch, Condition, Loop

__all__ = ["Join", "Node", "NodeKind", "RepairSpec", "SideEffect"]


class NodeKind(StrEnum):
    """What a node does when it runs."""

    TASK = "task"
    CHOICE = "choice"
    PARALLEL = "parallel"
    MAP = "map"


class Join(StrEnum):
    """How a node with several incoming edges waits for them."""

    ALL_OF = "all_of"
    ANY_OF = "any_of"


class SideEffect(StrEnum):
    """What a node does to the world outside the run; write and external need a compensation."""

    NONE = "none"
    READ = "read"
    WRITE = "write"
    EXTERNAL = "external"


class RepairSpec(IRModel):
    """Recovery handlers of a node: escalation goes retry -> patch -> replan, never skipping a level."""

    patch: str = Field(..., min_length=1, description="Role of the local-repair handler; it gets the failure "
                       "and returns a corrected output.")
    replan: str | None = Field(None, description="Role of the replan handler; it returns a new output or a "
                               "new workflow (a new plan version).")
    max_patches: int = Field(1, ge=1, description="Patch attempts before escalating to replan.")
    max_replans: int = Field(1, ge=1, description="Replan attempts before the node fails.")


class Node(IRModel):
    """One step of a workflow."""

    id: str = Field(..., min_length=1, pattern=r"^[A-Za-z_][\w-]*$", description="Unique node id.")
    kind: NodeKind = Field(NodeKind.TASK, description="task, choice, parallel or map.")
    role: str | None = Field(None, description="Handler role that runs the node (task and map nodes).")
    description: str | None = Field(None, description="What the node is for, in one sentence.")
    params: dict[str, Any] = Field(default_factory=dict, description="Static parameters merged into the "
                                   "node's input document.")
    input: dict[str, Any] | None = Field(None, description="JSON Schema the node's input document must "
                                         "satisfy.")
    output: dict[str, Any] | None = Field(None, description="JSON Schema the output must satisfy (each item's "
                                          "output for map nodes); a node is executed only if it does.")
    join: Join = Field(Join.ALL_OF, description="all_of: wait for every incoming edge; any_of: the first "
                      "success in declared edge order wins, the other candidates are skipped.")
    # Not empty: the compilers read "" as no policy and the runtime as the policy named "" (min_length on both
    # the reference and the policies' names settles it).
    policy_ref: str | None = Field(None, min_length=1,
                                   description="Name of the workflow policy that governs this node.")
    side_effect: SideEffect = Field(SideEffect.NONE, description="none, read, write or external.")
    compensation: str | None = Field(None, description="Id of the node that undoes this node's side effect.")
    repair: RepairSpec | None = Field(None, description="Patch and replan handlers for recovery.")
    choices: list[Branch] = Field(default_factory=list, description="Branches of a choice node, in order.")
    default: str | None = Field(None, description="Node a choice takes when no branch holds.")
    branches: list[str] = Field(default_factory=list, description="Node ids a parallel node groups; it "
                                "finishes when they all have, with their outputs by id.")
    items: str | None = Field(None, description="Dotted path to the list a map node fans out over "
                              "('inputs.jobs' or '<node>.<field>').")
    max_concurrency: int | None = Field(None, ge=1, description="Bound on concurrent branches or items.")
    loop: Loop | None = Field(None, description="Makes a task node loop until a condition holds.")
    when: Condition | None = Field(None, description="Gate: the node runs only if this condition holds, decided "
                                   "once its dependencies are done, on the run's inputs or the output of an "
                                   "ungated ancestor; otherwise it is skipped without running, and a plain "
                                   "dependency on it is satisfied (as Argo's bare `depends` on a Skipped task) "
                                   "while its output exists for no one.")

    def digest(self) -> str:
        """Content hash of the node's definition (of its wire form; two nodes with the same hash are the same node)."""
        return content_hash(self.to_json())
