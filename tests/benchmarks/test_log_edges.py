"""`alas bench log` (alas_argo.benchmarks.log) reports what it measured: each figure is computed from the times,
bytes and replay it really took, on the runs it really wrote. The clock is scripted where a figure is a time,
so the arithmetic (milliseconds, percentiles, rounding) is checked exactly and nothing depends on the machine's
speed; the stores, plans and replays are real."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from alas_argo.benchmarks import log as bench
from alas_argo.cli import main
from alas_argo.errors import StoreUnavailable
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import DispatchingRule, dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import replay as replay_module
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.replay import ReplayReport
from alas_argo.settings import load_settings


class _Clock:
    """``perf_counter`` answering the given readings in turn (the module's other ``time`` uses pass through)."""

    def __init__(self, readings: list[float]) -> None:
        self.readings = iter(readings)

    def perf_counter(self) -> float:
        return next(self.readings)


def _script_clock(monkeypatch: pytest.MonkeyPatch, readings: list[float]) -> None:
    clock = _Clock(readings)
    fake = types.SimpleNamespace(perf_counter=clock.perf_counter, monotonic=bench.time.monotonic,
                                 sleep=bench.time.sleep)
    monkeypatch.setattr(bench, "time", fake)


def _only_run(store: FsStore, prefix: str) -> ExecutionLog:
    (run,) = [r for r in store.children(prefix="runs/") if r.startswith(prefix)]
    return ExecutionLog(store, run)


@pytest.mark.parametrize(("values", "q", "expected"), [
    ([float(v) for v in range(100, 0, -1)], 0.99, 99.0),  # sorted first; index round(0.99 * 99) = 98
    ([float(v) for v in range(1, 101)], 1.0, 100.0),  # the top is the largest value, not past the end
    ([float(v) for v in range(1, 101)], 0.0, 1.0),
    ([3.0, 1.0, 2.0], 0.99, 3.0),  # round(1.98) = 2: the largest of three
    ([3.0, 1.0, 2.0], 0.5, 2.0),
    ([7.0], 0.99, 7.0),
])
def test_percentile_is_the_nearest_rank_of_the_sorted_values(values: list[float], q: float, expected: float) -> None:
    assert bench._percentile(values, q) == expected


def test_append_figures_come_from_the_timed_appends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Four appends taking 1.23456, 4.0004, 2.0004 and 10.0004 ms.
    _script_clock(monkeypatch, [0.0, 0.00123456, 1.0, 1.0040004, 2.0, 2.0020004, 3.0, 3.0100004])
    store = FsStore(tmp_path)
    figures = bench.bench_appends(store, 4)
    # p50 is the median (3.0004, between the two middle ones), p99 the nearest rank (round(0.99 * 3) = 3: the
    # largest), the mean 4.30894; every figure in milliseconds, to 3 decimals.
    assert figures == {"appends": 4, "p50_ms": 3.0, "p99_ms": 10.0, "mean_ms": 4.309, "max_ms": 10.0}
    # The appends timed are the documented small node.succeeded events of one writer's fresh run.
    run = _only_run(store, "bench-append-")
    events = run.events()
    assert [(e.type, e.node_id, e.attempt) for e in events] == [("node.succeeded", "bench", 1)] * 4
    assert [e.payload for e in events] == [{"i": i, "makespan": 1000 + i, "seconds": 0.01} for i in range(4)]


def test_p99_is_below_the_maximum_from_51_appends_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 101 appends taking 1, 2, ..., 101 ms (timed in reverse order): p99 is the 100th, not the slowest.
    readings = [x for i in range(101) for x in (float(i), float(i) + (101 - i) / 1000)]
    _script_clock(monkeypatch, readings)
    figures = bench.bench_appends(FsStore(tmp_path), 101)
    assert figures == {"appends": 101, "p50_ms": 51.0, "p99_ms": 100.0, "mean_ms": 51.0, "max_ms": 101.0}


def test_a_single_append_is_its_own_percentiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _script_clock(monkeypatch, [5.0, 5.0025])
    figures = bench.bench_appends(FsStore(tmp_path), 1)
    assert figures == {"appends": 1, "p50_ms": 2.5, "p99_ms": 2.5, "mean_ms": 2.5, "max_ms": 2.5}


def test_plan_bytes_are_the_stored_sizes_of_the_committed_plans(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    figures = bench.bench_plan_bytes(store, 2)
    run = _only_run(store, "bench-bytes-")
    assert run.versions() == [1, 2]
    # The versions are Giffler-Thompson plans of ta61 with random priorities, one seed per version.
    instance = get_instance("ta61")
    docs = [dispatch(instance, DispatchingRule.RANDOM, seed=s).to_json() for s in (0, 1)]
    assert [run.plan(v)["operations"] for v in (1, 2)] == [d["operations"] for d in docs] and docs[0] != docs[1]
    stored = [int(run.plan_event(v).payload["bytes"]) for v in (1, 2)]
    plain = [len(json.dumps(d, indent=1)) for d in docs]
    assert figures == {"versions": 2, "operations": 1000, "bytes_per_version": round(sum(stored) / 2),
                       "json_bytes_per_version": round(sum(plain) / 2),
                       "ratio": round(sum(plain) / sum(stored), 1)}
    assert figures["ratio"] > 1


def test_the_replay_figure_is_the_replay_of_the_run_it_built(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[ExecutionLog, ReplayReport]] = []
    real = replay_module.replay_log

    def spy(log: ExecutionLog, *args: Any, **kwargs: Any) -> ReplayReport:
        report = real(log, *args, **kwargs)
        seen.append((log, report))
        return report

    monkeypatch.setattr(replay_module, "replay_log", spy)
    _script_clock(monkeypatch, [10.0, 12.3456])  # the build's start and end
    store = FsStore(tmp_path)
    result = bench.bench_replay(store, versions=10)
    ((reader, report),) = seen
    run = _only_run(store, "bench-replay-")
    assert reader.run_id == run.run_id
    events = run.events()
    assert result == {"versions": 10, "events": len(events), "steps": len(report.steps), "parity": True,
                      "replay_seconds": report.seconds, "build_seconds": 2.346}
    # Nine fresh plans, the tenth a right-shift repair of the ninth after a breakdown; each version validated.
    assert run.versions() == list(range(1, 11))
    commits = [e.payload for e in events if e.type == "plan.committed"]
    assert [c["reason"] for c in commits] == ["commit"] * 9 + ["repair"]
    (repair_event,) = [e for e in events if e.type == "repair.finished"]
    repaired = repair_event.payload
    assert repair_event.node_id == "repair"
    assert {e.node_id for e in events if e.type.startswith("validation.")} == {"validate"}
    assert (repaired["baseline_version"], repaired["result_version"], repaired["method"]) == (9, 10, "right-shift")
    assert (repaired["budget"], repaired["seed"], repaired["workers"]) == (1.0, 0, 1)
    assert repaired["instance"] == {"name": "ta61"} and [e["kind"] for e in repaired["disruption"]["events"]] == [
        "machine_breakdown"]
    # The breakdown is reproducible from the log: the generator's, on the ninth plan, with the version's seed.
    ninth = Schedule.model_validate(run.plan(9))
    breakdown = generate_disruption(get_instance("ta61"), ninth, "breakdown", seed=10)
    assert repaired["disruption"] == breakdown.to_json()
    # The repair's own metrics are recorded with it (all but its time, which is measured).
    again = repair(get_instance("ta61"), ninth, breakdown, "right-shift", 1.0, seed=0, workers=1)
    recorded, expected = dict(repaired["metrics"]), json.loads(json.dumps(again.metrics()))
    recorded.pop("seconds"), expected.pop("seconds")
    assert recorded == expected
    assert run.plan(10) == json.loads(json.dumps(again.schedule.to_json()))
    # Every version is a valid plan, and recorded as one.
    assert [e.type for e in events if e.type.startswith("validation.")] == ["validation.passed"] * 10
    checks = [e.payload for e in events if e.type.startswith("validation.")]
    assert [c["plan_version"] for c in checks] == list(range(1, 11))
    assert [c["baseline_version"] for c in checks] == [None] * 9 + [9]
    assert checks[-1]["disruption"] == repaired["disruption"] and checks[0]["disruption"] is None
    assert {c["instance"]["name"] for c in checks} == {"ta61"}
    assert [s.kind for s in report.steps].count("repair") == 1 and len(report.steps) == 11


def test_fewer_than_ten_versions_are_all_fresh_plans(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    result = bench.bench_replay(store, versions=3)
    assert (result["versions"], result["steps"], result["parity"]) == (3, 3, True)
    assert not [e for e in _only_run(store, "bench-replay-").events() if e.type == "repair.finished"]


@pytest.mark.usefixtures("no_store_env")
def test_all_three_figures_by_default(tmp_path: Path) -> None:
    settings = load_settings(store={"kind": "fs", "root": str(tmp_path)})
    result = bench.run_log_bench(settings, appends=2, versions=3, plan_versions=1)
    assert result["store"] == FsStore(tmp_path).location
    assert (result["append"]["appends"], result["plan_bytes"]["versions"]) == (2, 1)
    assert (result["replay"]["versions"], result["replay"]["steps"], result["replay"]["parity"]) == (3, 3, True)
    # Each figure on its own run, all in the store given.
    assert [r.rsplit("-", 1)[0] for r in FsStore(tmp_path).children(prefix="runs/")] == sorted(
        ["bench-append", "bench-bytes", "bench-replay"])


@pytest.fixture
def no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store configured on the machine must not decide which store the bench runs on."""
    for var in ("ALAS_STORE__KIND", "ALAS_STORE__ROOT", "ALAS_STORE__S3_ENDPOINT", "ALAS_STORE__S3_BUCKET",
                "ALAS_STORE__S3_ACCESS_KEY", "ALAS_STORE__S3_SECRET_KEY", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(var, raising=False)


def _refused(endpoint: str) -> bool:
    host, port = endpoint.removeprefix("http://").split(":")
    with socket.socket() as s:
        s.settimeout(5)
        return s.connect_ex((host, int(port))) != 0


@pytest.mark.usefixtures("no_store_env")
def test_s3_without_an_endpoint_runs_on_a_loopback_server_stopped_afterwards() -> None:
    result = bench.run_log_bench(load_settings(store={"kind": "s3"}), appends=2, plan_versions=1, replay=False)
    assert result["store"].startswith("s3://alas-bench/") and " at http://127.0.0.1:" in result["store"]
    assert result["append"]["appends"] == 2 and result["plan_bytes"]["versions"] == 1 and "replay" not in result
    assert _refused(result["store"].split(" at ")[1])  # the child server is gone


@pytest.mark.usefixtures("no_store_env")
def test_the_loopback_server_gives_the_bench_its_bucket_and_keys() -> None:
    with bench.loopback_s3() as store:
        endpoint = store["s3_endpoint"]
        assert store == {"kind": "s3", "s3_endpoint": endpoint, "s3_bucket": "alas-bench", "s3_access_key": "bench",
                         "s3_secret_key": "bench"}
        assert endpoint.startswith("http://127.0.0.1:") and not _refused(endpoint)
    assert _refused(endpoint)


def test_a_loopback_server_that_dies_is_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that exits while starting is a StoreUnavailable naming its endpoint, without waiting out the
    30 s the start is allowed."""
    started: list[subprocess.Popen[bytes]] = []

    def dying(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        assert args[1:4] == ["-m", "moto.server", "-H"] and args[4] == "127.0.0.1"
        started.append(subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], **kwargs))
        started[-1].wait()
        return started[-1]

    monkeypatch.setattr(bench, "subprocess", types.SimpleNamespace(Popen=dying, DEVNULL=subprocess.DEVNULL))
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")  # botocore's own retries of the refused connection: seconds
    with pytest.raises(StoreUnavailable) as info, bench.loopback_s3():
        pytest.fail("no store without a server")
    assert info.value.where is not None and str(info.value.where).startswith("http://127.0.0.1:")
    assert info.value.message.startswith("loopback S3 server did not start: ")
    assert started[0].returncode == 3


def test_the_cli_stores_ten_plan_versions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "log", "--root", str(tmp_path), "--appends", "1", "--no-replay", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["plan_bytes"]["versions"] == 10 and doc["append"]["appends"] == 1
    assert len(_only_run(FsStore(tmp_path), "bench-bytes-").versions()) == 10
