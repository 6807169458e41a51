"""A writer process for the concurrency tests (importable by a spawned interpreter)."""

from __future__ import annotations

from typing import Any

from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store

__all__ = ["make_store", "write_events"]


def make_store(spec: dict[str, Any]) -> Store:
    """Rebuild a store from a picklable description: {"fs": root} or {"s3": S3Store kwargs}."""
    if "fs" in spec:
        return FsStore(spec["fs"])
    return S3Store(**spec["s3"])


def write_events(spec: dict[str, Any], run_id: str, writer: str, count: int, commits: int = 0,
                 barrier: Any = None, results: Any = None) -> None:
    """Append ``count`` events tagged (writer, i), and commit ``commits`` plans, through its own log.

    ``barrier`` (waited on before the first append) makes the writers start together; the number of
    lost races is put on the ``results`` queue when given.
    """
    log = ExecutionLog(make_store(spec), run_id)
    log.events()  # load before the barrier, so that the writers really start together
    if barrier is not None:
        barrier.wait()
    for i in range(count):
        log.append("node.succeeded", node_id=writer, payload={"writer": writer, "i": i})
        if i < commits:
            log.commit_plan({"instance": writer, "makespan": i, "operations": []}, node_id=writer)
    if results is not None:
        results.put(log.lost_races)
