"""`alas bench open` (benchmarks/open_cost.py): the figures themselves, the run they are measured on, the
counting store, and the store the bench measures.

`tests/log/test_head.py` checks that the counts are equal for a short and a long run and below a bound, and
`tests/log/test_bench.py` that they are positive: a counter stuck at 1, a job agent not given its blueprint, or a
controller request without its Idempotency-Key all passed. Here the counts are the exact figures, and what each
measured access did is read back from the log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.benchmarks.open_cost import KINDS, CountingStore, build_run, measure_open, run_open_bench
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.settings import load_settings

#: The requests of each access on the filesystem store, whatever the run's length (S3 gives the same counts).
FIGURES = {"open": 6, "job_agent": 11, "controller": 19}
KEY = b"k" * 32


def test_counting_store_counts_every_operation_and_passes_it_on(tmp_path: Path) -> None:
    inner = FsStore(tmp_path)
    counting = CountingStore(inner)
    assert (counting.operations, counting.location, counting.seal_key) == (0, inner.location, None)
    assert counting.put_if_absent(key="runs/r/a", data=b"1") is True
    assert counting.put_if_absent(key="runs/r/a", data=b"2") is False
    counting.put(key="runs/r/b", data=b"3")
    assert counting.get(key="runs/r/a") == b"1" and counting.get(key="runs/r/b") == b"3"
    assert counting.list(prefix="runs/r/") == ["runs/r/a", "runs/r/b"]
    assert counting.list(prefix="runs/r/", start_after="runs/r/a") == ["runs/r/b"]
    assert counting.exists(key="runs/r/b") and not counting.exists(key="runs/r/c")
    assert counting.children(prefix="runs/") == ["r"]
    assert counting.operations == 10


def test_counting_store_keeps_the_inner_stores_seal_key(tmp_path: Path) -> None:
    """What a measured access writes into a keyed store is sealed, so the run still verifies afterwards."""
    keyed = FsStore(tmp_path)
    keyed.seal_key = KEY
    assert CountingStore(keyed).seal_key == KEY
    key = build_run(keyed, "r", 6)
    measure_open(lambda: _keyed(tmp_path), "r", key)
    report = ExecutionLog(keyed, "r").verify()
    assert report.ok, report


def _keyed(root: Path) -> FsStore:
    store = FsStore(root)
    store.seal_key = KEY
    return store


def test_the_run_is_the_blueprint_the_baseline_and_padding(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    assert build_run(store, "r", 7) == "output/wf-build/blueprint"  # the blueprint step's output, in its scope
    events = ExecutionLog(store, "r").events()
    assert [(e.type, e.node_id) for e in events[:4]] == [
        (EventType.NODE_STARTED, "blueprint"), (EventType.RUN_STARTED, "blueprint"),
        (EventType.NODE_SUCCEEDED, "blueprint"), (EventType.PLAN_COMMITTED, "commit-plan")]
    assert events[3].payload["reason"] == "plan" and events[3].payload["version"] == 1
    assert [(e.type, e.node_id, e.payload) for e in events[4:]] == [
        (EventType.NODE_SUCCEEDED, "padding", {"i": i}) for i in range(3)]


def test_a_run_shorter_than_its_skeleton_gets_no_padding(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    build_run(store, "r", 1)
    assert len(ExecutionLog(store, "r").events()) == 4


@pytest.mark.parametrize("events", [5, 40])
def test_each_access_costs_the_same_exact_requests_at_any_length(tmp_path: Path, events: int) -> None:
    store = FsStore(tmp_path)
    key = build_run(store, "r", events)
    assert measure_open(lambda: FsStore(tmp_path), "r", key) == FIGURES
    assert list(FIGURES) == list(KINDS)


def test_each_measured_access_did_its_work(tmp_path: Path) -> None:
    """The probe appended by the opener, the job agent for job 0, and one right-shift repair request for a
    1-unit breakdown of machine 0 under a fresh Idempotency-Key, committed as version 2."""
    store = FsStore(tmp_path)
    key = build_run(store, "r", 4)
    measure_open(lambda: FsStore(tmp_path), "r", key)
    log = ExecutionLog(store, "r")
    new = log.events()[4:]
    assert (new[0].type, new[0].node_id) == (EventType.NODE_STARTED, "probe")
    agent = [(e.type, e.payload.get("item"), e.payload.get("key")) for e in new if e.node_id == "agents"]
    scope = new[1].payload["scope"]
    assert agent == [(EventType.NODE_STARTED, 0, None), (EventType.NODE_SUCCEEDED, 0, f"output/{scope}/agents/0")]
    (commit,) = [e for e in new if e.type is EventType.PLAN_COMMITTED]
    assert (commit.node_id, commit.payload["version"], commit.payload["reason"]) == ("controller", 2, "repair")
    assert commit.payload["idempotency_key"].startswith("controller/bench-")
    assert commit.payload["meta"]["disruption"] == {
        "time": 0, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 0, "duration": 1}]}
    (finished,) = [e for e in new if e.type is EventType.REPAIR_FINISHED]
    assert (finished.payload["method"], finished.payload["budget"]) == ("right-shift", 1.0)


def test_the_bench_on_the_filesystem(tmp_path: Path) -> None:
    result = run_open_bench(load_settings(store={"kind": "fs", "root": str(tmp_path)}), [5, 12])
    assert result == {"store": f"fs:{tmp_path}", "unit": "store operations",
                      "rows": [{"events": 5, **FIGURES}, {"events": 12, **FIGURES}]}
    runs = FsStore(tmp_path).children(prefix="runs/")
    assert len(runs) == 2 and all(r.startswith(("bench-open-5-", "bench-open-12-")) for r in runs)


@pytest.mark.timeout(120)  # a loopback S3 server is started: about 3 s
def test_s3_without_an_endpoint_is_measured_on_a_loopback_server() -> None:
    result = run_open_bench(load_settings(store={"kind": "s3"}), [5])
    assert result["unit"] == "http requests" and result["store"].startswith("s3://alas-bench/ at http://127.0.0.1:")
    assert result["rows"] == [{"events": 5, **FIGURES}]
