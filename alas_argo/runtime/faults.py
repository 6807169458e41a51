"""Workflow-level fault injection: make chosen nodes fail transiently, fail for good, hang past their
timeout, or return structurally faulty output, on chosen attempts - to show policies and validation at work
on any workflow the local runtime runs (exported from :mod:`alas_argo.runtime` for tests and experiments; the
ablation benchmark's ``--faults`` injects the planner-level faults of :mod:`alas_argo.jssp.fault_injectors`
instead, through the pipeline).

A :class:`FaultPlan` wraps the handler registry; the wrapper decides per call from the seed, the node, the
attempt, the map item and the loop iteration, so a plan injects the same faults whatever order threads run
in. Only ordinary calls are faulted (not patch, replan or compensation calls): recovery is what a fault is
meant to exercise.
"""

from __future__ import annotations

import copy
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from alas_argo.errors import ContractError, TransientError
from alas_argo.runtime.context import Handler, NodeContext

__all__ = ["Corrupter", "Fault", "FaultKind", "FaultPlan", "FaultyHandler", "corrupt_output"]

#: Turns a good output into a faulty one (gets a copy of the output and a seeded generator).
Corrupter = Callable[[Any, random.Random], Any]


class FaultKind(StrEnum):
    """What an injected fault does."""

    TRANSIENT = "transient"
    PERMANENT = "permanent"
    HANG = "hang"
    CORRUPT = "corrupt"


def corrupt_output(output: Any, rng: random.Random) -> Any:
    """The default corrupter: drop one key of a dict (or one element of a list), else return None - a
    structural fault an output contract with required fields catches."""
    if isinstance(output, dict) and output:
        output.pop(rng.choice(sorted(output)))
        return output
    if isinstance(output, list) and output:
        output.pop(rng.randrange(len(output)))
        return output
    return None


@dataclass(frozen=True)
class Fault:
    """One fault rule.

    Attributes:
        node: Id of the node to fault.
        kind: transient (raise TransientError), permanent (raise ContractError), hang (sleep past the
            timeout until cancelled or killed), corrupt (return a corrupted output).
        attempts: Attempt numbers to fault; None for every attempt.
        probability: Chance of faulting a matching call (seeded).
        items: Map item indices to fault; None for all.
        corrupter: Domain-specific corrupter for ``corrupt`` (default :func:`corrupt_output`).
        hang_seconds: Upper bound of a hang (real seconds).
    """

    node: str
    kind: FaultKind
    attempts: tuple[int, ...] | None = (1,)
    probability: float = 1.0
    items: tuple[int, ...] | None = None
    corrupter: Corrupter | None = None
    hang_seconds: float = 3600.0


class FaultPlan:
    """A seeded set of faults, applied by wrapping a handler registry with :meth:`wrap`."""

    def __init__(self, faults: Sequence[Fault], seed: int = 0) -> None:
        self.faults = list(faults)
        self.seed = seed
        self._lock = threading.Lock()
        #: Injected faults in this process: dicts with node, kind, attempt, index, iteration.
        self.injected: list[dict[str, Any]] = []

    def __getstate__(self) -> dict[str, Any]:
        # Locks do not pickle; a copy in a worker process keeps its own record.
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @classmethod
    def spread(cls, nodes: Sequence[str], count: int, kinds: Sequence[FaultKind], seed: int = 0,
               corrupter: Corrupter | None = None) -> FaultPlan:
        """``count`` faults on first attempts, nodes and kinds drawn from a seeded generator."""
        rng = random.Random(seed)
        faults = [Fault(node=rng.choice(list(nodes)), kind=rng.choice(list(kinds)), corrupter=corrupter)
                  for _ in range(count)]
        return cls(faults, seed)

    def decide(self, ctx: NodeContext) -> tuple[Fault, random.Random] | None:
        """The fault that applies to this call, with its seeded generator, if any."""
        if ctx.level != "run":
            return None
        for k, f in enumerate(self.faults):
            if f.node != ctx.node_id or (f.attempts is not None and ctx.attempt not in f.attempts):
                continue
            if f.items is not None and ctx.index not in f.items:
                continue
            rng = random.Random(f"{self.seed}:{k}:{ctx.node_id}:{ctx.attempt}:{ctx.index}:{ctx.iteration}")
            if rng.random() < f.probability:
                return f, rng
        return None

    def wrap(self, handlers: Mapping[str, Handler]) -> dict[str, Handler]:
        """The registry with every handler wrapped so that this plan's faults are injected."""
        return {role: FaultyHandler(h, self) for role, h in handlers.items()}

    def _note(self, fault: Fault, ctx: NodeContext) -> None:
        with self._lock:
            self.injected.append({"node": ctx.node_id, "kind": str(fault.kind), "attempt": ctx.attempt,
                                  "index": ctx.index, "iteration": ctx.iteration})


class FaultyHandler:
    """A handler that consults a fault plan before (or after) calling the real one; picklable when the
    real handler is."""

    def __init__(self, handler: Handler, plan: FaultPlan) -> None:
        self.handler = handler
        self.plan = plan

    def __call__(self, ctx: NodeContext, inputs: dict[str, Any]) -> Any:
        """Call the handler, injecting the planned fault."""
        decided = self.plan.decide(ctx)
        if decided is None:
            return self.handler(ctx, inputs)
        fault, rng = decided
        self.plan._note(fault, ctx)
        if fault.kind is FaultKind.TRANSIENT:
            raise TransientError(f"injected transient fault (attempt {ctx.attempt})", where={"node": ctx.node_id})
        if fault.kind is FaultKind.PERMANENT:
            raise ContractError(f"injected permanent fault (attempt {ctx.attempt})", where={"node": ctx.node_id})
        if fault.kind is FaultKind.HANG:
            end = time.monotonic() + fault.hang_seconds
            # Sleep in slices so a cooperative cancel (thread timeout mode) ends the hang early.
            while time.monotonic() < end and not ctx.cancelled():
                time.sleep(0.01)
            raise TransientError("injected hang ended", where={"node": ctx.node_id})
        output = copy.deepcopy(self.handler(ctx, inputs))
        return (fault.corrupter or corrupt_output)(output, rng)
