"""The canonical workflow IR: nodes, edges, policies, contracts, plan versions, validation, JSON Schema."""

from alas_argo.ir.base import FrozenIRModel, IRModel, canonical_json, content_hash
from alas_argo.ir.condition import Branch, Condition, Loop, Op
from alas_argo.ir.node import Join, Node, NodeKind, RepairSpec, SideEffect
from alas_argo.ir.plan import PlanVersion
from alas_argo.ir.policy import (
    ANY_ERROR,
    TIMEOUT_ERROR,
    Backoff,
    BackoffKind,
    Catch,
    Idempotency,
    LoopGuard,
    OnFailure,
    Policy,
    Retry,
)
from alas_argo.ir.schema import workflow_schema
from alas_argo.ir.validation import Problem, ensure_valid, parse_workflow, validate, validate_document
from alas_argo.ir.workflow import Dependency, Edge, Via, Workflow

__all__ = [
    "ANY_ERROR",
    "TIMEOUT_ERROR",
    "Backoff",
    "BackoffKind",
    "Branch",
    "Catch",
    "Condition",
    "Dependency",
    "Edge",
    "FrozenIRModel",
    "IRModel",
    "Idempotency",
    "Join",
    "Loop",
    "LoopGuard",
    "Node",
    "NodeKind",
    "OnFailure",
    "Op",
    "PlanVersion",
    "Policy",
    "Problem",
    "RepairSpec",
    "Retry",
    "SideEffect",
    "Via",
    "Workflow",
    "canonical_json",
    "content_hash",
    "ensure_valid",
    "parse_workflow",
    "validate",
    "validate_document",
    "workflow_schema",
]
