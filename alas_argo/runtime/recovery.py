"""Recovery escalation: once a node's retries are spent, patch it (local repair), and if that fails too,
replan (a new plan version). Levels are taken in order and none is skipped: replan only runs after every
patch attempt has failed, and a patch only after the retry level is exhausted."""

from __future__ import annotations

from typing import Any, Protocol

from alas_argo import interrupts
from alas_argo.ir.node import Node
from alas_argo.log.events import EventType
from alas_argo.runtime.context import Failure, Handler, NodeContext
from alas_argo.runtime.contracts import ContractChecker
from alas_argo.runtime.dispatch import Dispatcher
from alas_argo.runtime.policies import primary_error_name
from alas_argo.runtime.result import Outcome
from alas_argo.runtime.run_state import Cancelled, RunState
from alas_argo.runtime.states import NodeState

__all__ = ["LEVELS", "Recovery", "Runner"]

#: The escalation ladder, in order.
LEVELS = ("retry", "patch", "replan")


class Runner(Protocol):
    """What the ladder needs of the node runner that owns it (:class:`~alas_argo.runtime.lifecycle.NodeRunner`).

    A protocol rather than an import: the runner builds its Recovery, so importing the runner here would
    close an import circle.
    """

    run: RunState
    dispatcher: Dispatcher
    contracts: ContractChecker

    def handler(self, role: str | None, node_id: str) -> Handler: ...

    def context(self, node: Node, attempt: int, deps: dict[str, Any], **extra: Any) -> NodeContext: ...

    def input_document(self, node: Node, deps: dict[str, Any]) -> dict[str, Any]: ...


class Recovery:
    """Runs the patch and replan levels of a node's repair spec."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def escalate(self, node: Node, deps: dict[str, Any], error: BaseException, *, side_effecting: bool,
                 key: str | None) -> Outcome:
        """Try patch, then replan; the node ends executed (with the repaired output) or failed."""
        run, runner = self.runner.run, self.runner
        spec = node.repair
        assert spec is not None
        policy = run.workflow.policy_for(node)
        run.move(node.id, NodeState.FAILED_RETRYABLE, error=error)
        ladder = [("patch", spec.patch, spec.max_patches)]
        if spec.replan is not None:
            ladder.append(("replan", spec.replan, spec.max_replans))
        previous = "retry"
        for level, role, tries in ladder:
            run.escalations.append((node.id, level))
            run.record(EventType.RECOVERY_ESCALATED, node.id, **{"from": previous, "to": level,
                                                                  "error": f"{primary_error_name(error)}: "
                                                                           f"{error}"})
            previous = level
            for _ in range(tries):
                interrupts.check(f"node {node.id} {level}")  # a stop request: no repair starts, as no retry
                run.move(node.id, NodeState.RUNNING)
                failure = Failure(error=primary_error_name(error), error_type=type(error).__name__,
                                  message=str(error), output=run.last_output.get(node.id))
                ctx = runner.context(node, run.attempts.get(node.id, 1), deps, role=role, failure=failure,
                                     level=level)
                try:
                    doc = runner.input_document(node, deps)
                    output = runner.dispatcher.call(runner.handler(role, node.id), ctx, doc, policy.timeout)
                    run.last_output[node.id] = output
                    runner.contracts.check(node.output, output, node_id=node.id, what=f"{level} output")
                except Exception as e:
                    if run.state(node.id) is NodeState.CANCELLED:
                        raise Cancelled(node.id) from None
                    error = e
                    run.move(node.id, NodeState.FAILED_RETRYABLE, error=e, payload={"level": level})
                    continue
                if level == "replan":
                    with run.lock:
                        run.plan_versions.append(run.plan_versions[-1].successor(
                            {"node": node.id, "output": output}, reason=f"replan of {node.id}"))
                        version = run.plan_versions[-1].version
                    run.record(EventType.PLAN_PROPOSED, node.id, version=version, reason="replan")
                tie = run.journal.put_idempotent(key, {"output": output}) if key is not None else None
                run.executed(node.id, output, side_effecting=side_effecting, key=key, record_hash=tie)
                return Outcome(True, output)
        run.errors[node.id] = error
        run.move(node.id, NodeState.FAILED, error=error)
        return Outcome(False, error=error)
