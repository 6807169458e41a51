"""The versioned execution log: a store interface with filesystem and S3 backends, hash-chained events,
immutable plan versions and their retractions, idempotency records, the head that anchors a run and opens
it in a bounded number of requests, keyed seals, verification and replay (docs/execution-log.md)."""

from alas_argo.log.event import GENESIS_HASH, Event, canonical_json
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, check_run_id, event_key, plan_key
from alas_argo.log.fs_store import FsStore
from alas_argo.log.head import LogHead
from alas_argo.log.plans import PlanDiff, decode_plan, diff_plans, encode_plan, plan_hash
from alas_argo.log.redaction import is_redacted, redact_payload
from alas_argo.log.runs import RunSummary, list_runs
from alas_argo.log.store import RecordNotFound, Store, open_store
from alas_argo.log.verification import Problem, VerifyReport, verify_log

__all__ = [
    "GENESIS_HASH",
    "Event",
    "EventType",
    "ExecutionLog",
    "FsStore",
    "LogHead",
    "PlanDiff",
    "Problem",
    "RecordNotFound",
    "RunSummary",
    "Store",
    "VerifyReport",
    "canonical_json",
    "check_run_id",
    "decode_plan",
    "diff_plans",
    "encode_plan",
    "event_key",
    "is_redacted",
    "list_runs",
    "open_store",
    "plan_hash",
    "plan_key",
    "redact_payload",
    "verify_log",
]
