"""The closed taxonomy of execution-log event types (docs/execution-log.md)."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["EventType"]


class EventType(StrEnum):
    """Every event type the log accepts; anything else is rejected."""

    RUN_STARTED = "run.started"
    RUN_RESUMED = "run.resumed"
    RUN_SUCCEEDED = "run.succeeded"
    RUN_FAILED = "run.failed"
    #: A stop request (SIGINT / SIGTERM) ended the run; what finished is kept and the run can be resumed.
    RUN_INTERRUPTED = "run.interrupted"
    #: What a run was asked to do (instance, disruptions, planner, seed, limits, ...) and their hash.
    RUN_INPUTS = "run.inputs"
    NODE_READY = "node.ready"
    NODE_STARTED = "node.started"
    NODE_SUCCEEDED = "node.succeeded"
    NODE_RETRYING = "node.retrying"
    NODE_FAILED = "node.failed"
    NODE_SKIPPED = "node.skipped"
    NODE_CANCELLED = "node.cancelled"
    NODE_TIMED_OUT = "node.timed_out"
    NODE_IDEMPOTENT_HIT = "node.idempotent_hit"
    RECOVERY_ESCALATED = "recovery.escalated"
    VALIDATION_PASSED = "validation.passed"
    VALIDATION_FAILED = "validation.failed"
    REPAIR_STARTED = "repair.started"
    REPAIR_FINISHED = "repair.finished"
    PLAN_PROPOSED = "plan.proposed"
    PLAN_COMMITTED = "plan.committed"
    PLAN_RETRACTED = "plan.retracted"
    DISRUPTION_OBSERVED = "disruption.observed"
    COMPENSATION_STARTED = "compensation.started"
    COMPENSATION_FINISHED = "compensation.finished"
    LOOP_GUARD_TRIPPED = "loop.guard_tripped"
    LLM_EXCHANGE = "llm.exchange"
