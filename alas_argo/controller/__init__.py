"""The long-running repair service (`alas controller`): disruption events over HTTP -> LCRP on the run's
current plan in the log -> a new committed version; plus /healthz, /readyz and /metrics."""

from __future__ import annotations

from alas_argo.controller.bucket import create_bucket, create_bucket_when_reachable
from alas_argo.controller.contracts import DisruptionRequest, RepairResponse, parse_request
from alas_argo.controller.http_server import ControllerServer, serve
from alas_argo.controller.repair_service import RepairService, RunNotFound, carry_forward

__all__ = [
    "ControllerServer",
    "DisruptionRequest",
    "RepairResponse",
    "RepairService",
    "RunNotFound",
    "carry_forward",
    "create_bucket",
    "create_bucket_when_reachable",
    "parse_request",
    "serve",
]
