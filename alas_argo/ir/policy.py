"""Execution policies: retry with backoff, timeout, catch, idempotency, compensation, loop guard, failure
strategy.

Every field here maps onto an engine construct (docs/ir-and-engines.md): ``retry`` onto Argo's
``retryStrategy`` and ASL's ``Retry``, ``timeout`` onto ``activeDeadlineSeconds`` / ``TimeoutSeconds``,
``catch`` onto ``Catch`` / dependent tasks, ``loop_guard`` onto an iteration counter plus a deadline.
Times are seconds (floats, so tests can use milliseconds).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, model_validator

from alas_argo.bounds import MAX_WAIT_SECONDS
from alas_argo.ir.base import IRModel

__all__ = [
    "ANY_ERROR",
    "TIMEOUT_ERROR",
    "Backoff",
    "BackoffKind",
    "Catch",
    "Idempotency",
    "LoopGuard",
    "OnFailure",
    "Policy",
    "Retry",
]

#: Error name that matches every error (ASL's ``States.ALL``).
ANY_ERROR = "*"
#: Error name a node timeout carries (ASL's ``States.Timeout``).
TIMEOUT_ERROR = "Timeout"


class BackoffKind(StrEnum):
    """How the delay between attempts grows."""

    FIXED = "fixed"
    LINEAR = "linear"
    EXPONENTIAL = "exponential"


class OnFailure(StrEnum):
    """What a node's definitive failure (retries, recovery and catch exhausted) does to the run.

    - ``stop``: the run fails; committed side effects are left as they are (for inspection).
    - ``skip``: the run goes on; the node stays failed and its dependents run without its output.
    - ``rollback``: the run fails and the compensations of committed side-effecting nodes run in
      reverse commit order (saga semantics). The default.
    - ``retry``: the node escalates through recovery (retry, then its repair spec's patch, then replan)
      and, if that is exhausted too, the run rolls back. Requires a repair spec.
    """

    STOP = "stop"
    SKIP = "skip"
    ROLLBACK = "rollback"
    RETRY = "retry"


class Backoff(IRModel):
    """Delay before attempt ``n + 1`` after ``n`` failed attempts.

    ``fixed``: ``initial``; ``linear``: ``initial * n``; ``exponential``: ``initial * factor ** (n - 1)``;
    each capped at ``max``; with ``jitter`` j the delay is drawn uniformly from ``[d * (1 - j), d]``
    (j = 1 is ASL's ``FULL`` jitter), from a seeded generator.
    """

    kind: BackoffKind = Field(BackoffKind.EXPONENTIAL, description="Growth of the delay: fixed, linear or "
                              "exponential.")
    initial: float = Field(1.0, ge=0, le=MAX_WAIT_SECONDS,
                           description="Delay after the first failed attempt, in seconds.")
    max: float | None = Field(None, ge=0, le=MAX_WAIT_SECONDS, description="Cap on any single delay, in seconds.")
    factor: float = Field(2.0, ge=1, description="Growth factor of exponential backoff.")
    jitter: float = Field(0.0, ge=0, le=1, description="Fraction of each delay that is randomized "
                          "(0 none, 1 full jitter).")


class Retry(IRModel):
    """How often a node is attempted and which errors are worth another attempt."""

    max_attempts: int = Field(1, ge=1, description="Total attempts including the first (1 = no retry).")
    backoff: Backoff = Field(default_factory=Backoff, description="Delay between attempts.")
    retry_on: list[str] = Field(
        default_factory=lambda: ["TransientError", TIMEOUT_ERROR],
        description="Error names that may be retried: an error class name (or a base class name, e.g. "
        "'TransientError'), 'Timeout', 'ContractError' for output-contract violations, or '*' for all.")


class Catch(IRModel):
    """Route a definitive failure to a handler node instead of failing the run."""

    errors: list[str] = Field(..., min_length=1, description="Error names this catch handles ('*' for all).")
    next: str = Field(..., min_length=1, description="Id of the node that runs when the error is caught.")


class Idempotency(IRModel):
    """Run a node at most once per key: a recorded result is returned instead of running again."""

    key: str = Field(..., min_length=1, description="Key template; '{name}' or '{a.b.c}' placeholders are "
                     "filled from the node's context: node (its id), run (the run id), inputs.<run input>, "
                     "<param name>, <dependency id>.<field>. One key per node (a map node's whole output).")


class LoopGuard(IRModel):
    """Bounds on a looping node: it stops with ``LoopGuardTripped`` when either bound is reached."""

    max_iters: int = Field(..., ge=1, description="Maximum number of loop iterations (over all attempts).")
    deadline: float | None = Field(None, gt=0, le=MAX_WAIT_SECONDS, description="Maximum seconds from the "
                                   "loop's first iteration; no new iteration starts after it.")


class Policy(IRModel):
    """A named bundle of execution policies that nodes refer to by ``policy_ref``."""

    retry: Retry = Field(default_factory=Retry, description="Attempts and backoff.")
    timeout: float | None = Field(None, gt=0, le=MAX_WAIT_SECONDS,
                                  description="Seconds one attempt may run before it is "
                                  "stopped and fails with 'Timeout'.")
    catch: list[Catch] = Field(default_factory=list, description="Error routes, tried in order.")
    idempotency: Idempotency | None = Field(None, description="Idempotency key template.")
    compensation: str | None = Field(None, description="Default compensation node id for nodes using this "
                                     "policy (a node's own 'compensation' wins).")
    loop_guard: LoopGuard | None = Field(None, description="Guard of looping nodes.")
    on_failure: OnFailure = Field(OnFailure.ROLLBACK, description="What a definitive failure does to the "
                                  "run: stop, skip, rollback or retry (escalate through recovery).")

    @model_validator(mode="after")
    def _catch_targets_unique(self) -> Policy:
        # Two routes for the same error name would make routing depend on list order silently.
        seen: set[str] = set()
        for c in self.catch:
            for name in c.errors:
                if name in seen:
                    raise ValueError(f"error {name!r} is caught twice")
                seen.add(name)
        return self
