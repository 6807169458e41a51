"""The public API of alas_argo.log is pinned: adding or removing a name is a deliberate change."""

from __future__ import annotations

import importlib

import alas_argo.log as log

EXPECTED = {
    "GENESIS_HASH", "Event", "EventType", "ExecutionLog", "FsStore", "LogHead", "PlanDiff", "Problem", "RecordNotFound",
    "RunSummary", "Store", "VerifyReport", "canonical_json", "check_run_id", "decode_plan", "diff_plans",
    "encode_plan", "event_key", "is_redacted", "list_runs", "open_store", "plan_hash", "plan_key",
    "redact_payload", "verify_log",
}
MODULES = ["cursor", "event", "events", "execution_log", "fs_store", "head", "idempotency", "layout", "plans",
           "redaction", "replay", "runs", "s3_store", "sealing", "store", "verification"]


def test_package_exports() -> None:
    assert set(log.__all__) == EXPECTED
    for name in log.__all__:
        assert getattr(log, name) is not None


def test_every_module_declares_all() -> None:
    for name in MODULES:
        module = importlib.import_module(f"alas_argo.log.{name}")
        assert module.__all__, name
        for exported in module.__all__:
            assert hasattr(module, exported), f"{name}.{exported}"
