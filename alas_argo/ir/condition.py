"""Conditions over prior outputs: choice branches and loop ``until`` tests.

A condition reads one value by a dotted path and compares it. The path's first segment names where to
look: ``inputs`` (the run's inputs), ``output`` (a loop iteration's own output), ``item`` (a map item), or
the id of a node whose output is read. The comparisons are the ones both engines can express (ASL Choice
rules, Argo ``when`` expressions).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from alas_argo.ir.base import IRModel

__all__ = ["Branch", "Condition", "Loop", "Op"]


class Op(StrEnum):
    """Comparison operators."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    IN = "in"
    EXISTS = "exists"
    TRUTHY = "truthy"


class Condition(IRModel):
    """``<value at path> <op> <value>``; a missing path is false for every op but ``exists``."""

    path: str = Field(..., min_length=1, pattern=r"^[A-Za-z_][\w-]*(\.[\w-]+)*$",
                      description="Dotted path: first segment 'inputs', 'output', 'item' or a node id.")
    op: Op = Field(Op.EQ, description="Comparison operator.")
    value: Any = Field(None, description="Right-hand side (a list for 'in'; unused by exists/truthy).")
    negate: bool = Field(False, description="Invert the result.")


class Branch(IRModel):
    """One branch of a choice node: the first branch whose condition holds is taken."""

    when: Condition = Field(..., description="Condition of this branch.")
    next: str = Field(..., min_length=1, description="Id of the node that runs when the branch is taken.")


class Loop(IRModel):
    """Makes a task node loop: its handler runs again, seeing its previous output, until ``until`` holds.

    Loops are a node attribute rather than a cycle in the graph so the DAG stays acyclic and every loop
    has exactly one place for its guard (the node's policy ``loop_guard``, required by validation).
    """

    until: Condition = Field(..., description="Evaluated on each iteration's output (path root 'output'); "
                             "the loop ends when it holds.")
