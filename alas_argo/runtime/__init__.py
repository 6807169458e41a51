"""The local runtime: node state machine, ready-set scheduling on a pool, enforced policies, recovery
escalation, saga compensation, journal, and workflow-level fault injection.

Usage::

    def propose(ctx: NodeContext, inputs: dict) -> dict:      # one call per map item
        return {"job": ctx.item, "ops": ...}

    runtime = Runtime({"propose": propose, "merge": merge}, max_workers=2, listener=print)
    result = runtime.run(workflow, {"instance": "ta01"})      # validates first (WorkflowError)
    result.status, result.output("merge"), result.states, result.attempts

A handler gets the node's input document (its ``params`` plus the outputs of its dependencies by node id;
``item``/``index`` for map items, ``previous`` for loop iterations) and a :class:`NodeContext` (node id,
attempt, run inputs, dependency outputs, the failure being repaired for patch/replan/catch handlers).
"""

from alas_argo.runtime.backoff import base_delay, delay
from alas_argo.runtime.clock import Clock, FakeClock, RealClock
from alas_argo.runtime.context import Failure, Handler, NodeContext
from alas_argo.runtime.executor import Runtime
from alas_argo.runtime.faults import Fault, FaultKind, FaultPlan, corrupt_output
from alas_argo.runtime.journal import Journal, MemoryJournal
from alas_argo.runtime.policies import NodeTimeout, error_names, evaluate, matches, render_key, resolve
from alas_argo.runtime.recovery import LEVELS
from alas_argo.runtime.result import RunResult, RunStatus, StateChange
from alas_argo.runtime.run_state import Listener
from alas_argo.runtime.saga import Saga, compensation_key
from alas_argo.runtime.states import TERMINAL, TRANSITIONS, IllegalTransition, NodeState, NodeStateMachine

__all__ = [
    "LEVELS",
    "TERMINAL",
    "TRANSITIONS",
    "Clock",
    "Failure",
    "FakeClock",
    "Fault",
    "FaultKind",
    "FaultPlan",
    "Handler",
    "IllegalTransition",
    "Journal",
    "Listener",
    "MemoryJournal",
    "NodeContext",
    "NodeState",
    "NodeStateMachine",
    "NodeTimeout",
    "RealClock",
    "RunResult",
    "RunStatus",
    "Runtime",
    "Saga",
    "StateChange",
    "base_delay",
    "compensation_key",
    "corrupt_output",
    "delay",
    "error_names",
    "evaluate",
    "matches",
    "render_key",
    "resolve",
]
