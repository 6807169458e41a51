"""What the reconciler asks the I/O layer to do, and the operator's configuration.

Actions are plain frozen values so that the reconcile functions stay pure and their tests compare them
with ``==``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.bounds import MAX_WAIT_SECONDS

__all__ = ["Action", "CreateWorkflow", "OperatorConfig", "PatchStatus", "PostDisruption", "PostOutcome"]

#: Largest ttlStrategy the Workflow CRD takes (``format: int32`` in its schema): a larger one passed the flag
#: and would only be refused by the API server, on each Workflow the operator created.
MAX_TTL = 2**31 - 1


class OperatorConfig(BaseModel):
    """Where the operator sends work, and how patient it is."""

    model_config = ConfigDict(frozen=True)

    plan_template: str = Field("alas-plan", description="WorkflowTemplate of a single-instance PlanRun.")
    bench_template: str = Field("alas-bench", description="WorkflowTemplate of a suite fan-out PlanRun.")
    service_account: str = Field("alas-workflow", description="ServiceAccount the workflow pods run as.")
    pod_gc: str | None = Field(None, description="Argo podGC strategy of submitted Workflows (None: the "
                                                 "template's).")
    ttl_after_success: int | None = Field(None, ge=0, le=MAX_TTL,
                                          description="Seconds a succeeded Workflow is kept (None: "
                                                                   "the template's ttlStrategy).")
    ttl_after_failure: int | None = Field(None, ge=0, le=MAX_TTL,
                                          description="Seconds a failed Workflow is kept (None: the "
                                                                   "template's ttlStrategy).")
    controller_url: str = Field("http://alas-controller:8080", description="Base URL of the repair controller.")
    retry_base_seconds: float = Field(5.0, gt=0, le=MAX_WAIT_SECONDS,
                                      description="First delay after a transient repair failure.")
    retry_max_seconds: float = Field(300.0, gt=0, le=MAX_WAIT_SECONDS,
                                     description="Cap of the exponential retry delay.")
    max_attempts: int = Field(8, ge=1, description="Repair attempts before a Disruption is marked Failed.")


@dataclass(frozen=True)
class CreateWorkflow:
    """Create this Argo Workflow (an AlreadyExists answer counts as done)."""

    namespace: str
    manifest: dict[str, Any]


@dataclass(frozen=True)
class PatchStatus:
    """Replace the ``.status`` fields given here on one custom object."""

    plural: str
    namespace: str
    name: str
    status: dict[str, Any]


@dataclass(frozen=True)
class PostDisruption:
    """POST the disruption to the controller, then record the outcome with ``status_after_post``."""

    namespace: str
    name: str
    run: str
    body: dict[str, Any]
    idempotency_key: str


@dataclass(frozen=True)
class PostOutcome:
    """What the controller answered to a :class:`PostDisruption` (or why it could not answer).

    Attributes:
        status_code: HTTP status, or 0 when no response arrived (connection refused, timeout).
        body: The parsed JSON response body (empty when there was none or it was not JSON).
        message: A one-line description for ``.status.message``.
    """

    status_code: int
    body: dict[str, Any] = field(default_factory=dict)
    message: str = ""

    @property
    def ok(self) -> bool:
        """Whether the repair was committed (2xx)."""
        return 200 <= self.status_code < 300

    @property
    def transient(self) -> bool:
        """Whether trying again later may succeed: no answer, a timeout, a conflict, throttling or a 5xx."""
        return self.status_code in (0, 408, 409, 425, 429) or self.status_code >= 500


Action = CreateWorkflow | PatchStatus | PostDisruption
