"""`alas bench log`: append latency, bytes per stored plan version, and replay time of the execution log.

Three figures, each on a fresh run in the chosen store:

- append latency p50/p99: ``--appends`` single-writer appends of a small ``node.succeeded`` event;
- bytes per version: plans of the bundled 50x20 instance ``ta61`` (Giffler-Thompson with random priorities,
  a different seed per version) as stored, against their pretty-printed JSON;
- replay: a run of ``--versions`` committed versions (every tenth a right-shift repair of the previous
  one after a breakdown, the rest fresh plans), each validated, with the payloads of
  :mod:`alas_argo.log.replay`; the figure is the wall-clock time of :func:`replay_log` over it.

For ``--store s3`` without an endpoint in the settings, a moto S3 server is started on a free loopback
port in a child process (so that its CPU time is not charged to the client) and stopped afterwards. For
``--store fs`` without ``--root``, a temporary directory on the same filesystem as ``.alas`` is used and
removed afterwards, so that benchmark runs never mix with real ones.
"""

from __future__ import annotations

import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

from alas_argo.errors import StoreUnavailable
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.store import Store, open_store
from alas_argo.settings import Settings, StoreKind, load_settings

__all__ = ["bench_appends", "bench_plan_bytes", "bench_replay", "loopback_s3", "run_log_bench"]

BENCH_INSTANCE = "ta61"  # 50 jobs x 20 machines


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_appends(store: Store, appends: int) -> dict[str, float]:
    """Latency in milliseconds of ``appends`` appends by one writer to a fresh run."""
    log = ExecutionLog(store, f"bench-append-{uuid.uuid4().hex[:8]}")
    times = []
    for i in range(appends):
        t0 = time.perf_counter()
        log.append(EventType.NODE_SUCCEEDED, node_id="bench", attempt=1,
                   payload={"i": i, "makespan": 1000 + i, "seconds": 0.01})
        times.append((time.perf_counter() - t0) * 1000)
    return {"appends": appends, "p50_ms": round(statistics.median(times), 3),
            "p99_ms": round(_percentile(times, 0.99), 3), "mean_ms": round(statistics.fmean(times), 3),
            "max_ms": round(max(times), 3)}


def _plans(count: int) -> Iterator[dict[str, Any]]:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import DispatchingRule, dispatch

    instance = get_instance(BENCH_INSTANCE)
    for seed in range(count):
        yield dispatch(instance, DispatchingRule.RANDOM, seed=seed).to_json()


def bench_plan_bytes(store: Store, versions: int = 10) -> dict[str, float]:
    """Stored bytes per version of a 50x20 plan, against its JSON text."""
    log = ExecutionLog(store, f"bench-bytes-{uuid.uuid4().hex[:8]}")
    stored, plain = [], []
    for doc in _plans(versions):
        version = log.commit_plan(doc)
        stored.append(int(log.plan_event(version).payload["bytes"]))
        plain.append(len(json.dumps(doc, indent=1)))
    return {"versions": versions, "operations": 1000, "bytes_per_version": round(statistics.fmean(stored)),
            "json_bytes_per_version": round(statistics.fmean(plain)),
            "ratio": round(statistics.fmean(plain) / statistics.fmean(stored), 1)}


def bench_replay(store: Store, versions: int = 100) -> dict[str, Any]:
    """Build a run of ``versions`` versions with validations and repairs, then time its replay."""
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.disruption import generate_disruption
    from alas_argo.jssp.repair import repair
    from alas_argo.jssp.schedule import Schedule
    from alas_argo.jssp.validate import validate
    from alas_argo.log.replay import replay_log

    instance = get_instance(BENCH_INSTANCE)
    log = ExecutionLog(store, f"bench-replay-{uuid.uuid4().hex[:8]}")
    t0 = time.perf_counter()
    fresh = _plans(versions)
    previous: Schedule | None = None
    for v in range(1, versions + 1):
        ref = {"instance": {"name": instance.name}}
        if v % 10 == 0 and previous is not None:
            disruption = generate_disruption(instance, previous, "breakdown", seed=v)
            result = repair(instance, previous, disruption, "right-shift", 1.0, seed=0, workers=1)
            version = log.commit_plan(result.schedule.to_json(), reason="repair")
            log.append(EventType.REPAIR_FINISHED, node_id="repair", payload={
                **ref, "baseline_version": version - 1, "disruption": disruption.to_json(),
                "method": "right-shift", "budget": 1.0, "seed": 0, "workers": 1, "result_version": version,
                "metrics": result.metrics()})
            report = validate(instance, result.schedule, disruption=disruption, baseline=previous)
            extra = {"baseline_version": version - 1, "disruption": disruption.to_json()}
            previous = result.schedule
        else:
            previous = Schedule.model_validate(next(fresh))
            version = log.commit_plan(previous.to_json())
            report = validate(instance, previous)
            extra = {"baseline_version": None, "disruption": None}
        log.append(EventType.VALIDATION_PASSED if report.valid else EventType.VALIDATION_FAILED,
                   node_id="validate", payload={**ref, "plan_version": version, **extra,
                                                "report": report.to_json()})
    built = time.perf_counter() - t0
    replayed = replay_log(ExecutionLog(store, log.run_id))  # a fresh reader: nothing cached
    return {"versions": versions, "events": len(log.events()), "steps": len(replayed.steps),
            "parity": replayed.parity, "replay_seconds": replayed.seconds, "build_seconds": round(built, 3)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def loopback_s3() -> Iterator[dict[str, Any]]:
    """moto's S3 server in a child process on a free loopback port, with one bucket."""
    import boto3

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        endpoint = f"http://127.0.0.1:{port}"
        client = boto3.session.Session().client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                                aws_access_key_id="bench", aws_secret_access_key="bench")
        deadline = time.monotonic() + 30
        while True:
            try:
                client.create_bucket(Bucket="alas-bench")
                break
            except Exception as e:  # the server is still starting
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise StoreUnavailable(f"loopback S3 server did not start: {e}", where=endpoint) from e
                time.sleep(0.2)
        yield {"kind": "s3", "s3_endpoint": endpoint, "s3_bucket": "alas-bench", "s3_access_key": "bench",
               "s3_secret_key": "bench"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run_log_bench(settings: Settings, *, appends: int = 200, versions: int = 100, plan_versions: int = 10,
                  replay: bool = True) -> dict[str, Any]:
    """All three figures on the store of ``settings`` (starting a loopback S3 server when needed)."""
    with contextlib.ExitStack() as stack:
        if settings.store.kind is StoreKind.S3 and not settings.store.s3_endpoint:
            settings = load_settings(store=stack.enter_context(loopback_s3()))
        store = open_store(settings)
        out: dict[str, Any] = {"store": store.location, "append": bench_appends(store, appends),
                               "plan_bytes": bench_plan_bytes(store, plan_versions)}
        if replay:
            out["replay"] = bench_replay(store, versions)
        return out
