"""Step pods hand their metrics to the controller through the store (alas_argo.metrics_outbox): every report
is folded into a controller's exposition exactly once, whatever the number of replicas."""

from __future__ import annotations

import json
import logging
import re
import uuid
from pathlib import Path

import pytest

from alas_argo import metrics
from alas_argo.log import FsStore
from alas_argo.metrics_outbox import CLAIMS, OUTBOX, MetricsInbox, read_report, write_report


def exposed(name: str, **labels: str) -> float:
    """The value of one sample in the exposition (0 when absent)."""
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in metrics.exposition().decode().splitlines():
        if re.fullmatch(rf"{re.escape(name)}(\{{{re.escape(want)}\}})? \S+", line) and (want or "{" not in line):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def settle(store: FsStore) -> None:
    """Report what this test process counted so far, so the next report holds only what a test adds."""
    write_report(store, source="earlier tests")


Report = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def report_of(store: FsStore, key: str) -> Report:
    return {(p.name, p.labels): p.value for p in read_report(store.get(key=key), where=key)}


def test_a_report_holds_what_grew_since_the_last_one(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    settle(store)
    assert write_report(store, source="test") is None  # nothing grew
    metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
    metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
    # A backend nothing else uses, new on every run (mutmut runs a test more than once in one process): its
    # series are new here.
    fresh = f"outbox-{uuid.uuid4().hex[:8]}"
    metrics.observe_log_append(fresh, 0.003)
    key = write_report(store, source="test")
    assert key is not None and key.startswith(OUTBOX)
    got = report_of(store, key)
    compensated = ("alas_runs_total", (("outcome", "compensated"),))
    assert got.pop(compensated) == 2.0
    backend = ("backend", fresh)
    # A sum is a float difference of two running totals.
    assert got.pop(("alas_log_append_duration_seconds_sum", (backend,))) == pytest.approx(0.003)
    expected: Report = {
        ("alas_log_append_duration_seconds_count", (backend,)): 1.0,
        # New series are handed on at 0 too, so the controller shows them (a ratio then reads 0, not "no data").
        **{("alas_log_append_duration_seconds_bucket", (backend, ("le", le))): 0.0 for le in ("0.0005", "0.001")},
        **{("alas_log_append_duration_seconds_bucket", (backend, ("le", le))): 1.0
           for le in ("0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0", "2.5", "+Inf")}}
    assert got == expected
    metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
    again = write_report(store, source="test")
    assert again is not None and report_of(store, again) == {compensated: 1.0}


def test_the_inbox_folds_each_report_into_the_exposition_once(tmp_path: Path) -> None:
    """A pod's counts appear in the controller's /metrics on top of its own, and polling again adds nothing."""
    store = FsStore(tmp_path)
    settle(store)
    inbox = MetricsInbox(store)
    inbox.poll()  # the settling report: earlier tests' counts, folded now so they do not blur what follows
    metrics.observe_validation(False, ["machine_overlap", "precedence", "precedence"])
    counted = exposed("alas_validation_violations_total", code="precedence")
    assert write_report(store, source="step controller") is not None
    assert inbox.poll() == 1
    assert exposed("alas_validation_violations_total", code="precedence") == counted + 2
    assert inbox.poll() == 0
    assert exposed("alas_validation_violations_total", code="precedence") == counted + 2


def test_two_replicas_fold_each_report_exactly_once(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    settle(store)
    first, second = MetricsInbox(store, owner="replica-a"), MetricsInbox(store, owner="replica-b")
    first.poll()
    second.poll()
    folded: list[tuple[int, int]] = []
    for _ in range(6):
        metrics.count_policy_event(metrics.PolicyEvent.TIMEOUT)
        write_report(store, source="step")
        folded.append((first.poll(), second.poll()) if len(folded) % 2 else (second.poll(), first.poll()))
    assert sum(a + b for a, b in folded) == 6
    claims = store.list(prefix=CLAIMS)
    owners = [store.get(key=k).decode() for k in claims]
    assert len(claims) == len(store.list(prefix=OUTBOX)) and set(owners) <= {"replica-a", "replica-b"}


def test_reports_before_the_window_are_not_read(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    settle(store)
    metrics.count_plan_committed("plan")
    write_report(store, source="an hour ago", clock=lambda: 1_000_000.0)
    inbox = MetricsInbox(store, lookback=600.0, clock=lambda: 1_000_000.0 + 3600)
    assert inbox.poll() == 0 and store.list(prefix=CLAIMS) == []


def test_a_malformed_report_is_skipped_and_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = FsStore(tmp_path)
    settle(store)
    inbox = MetricsInbox(store)
    inbox.poll()
    store.put(key=f"{OUTBOX}29991231T235959.000000Z-broken.json", data=b'{"format": 1, "samples": ')
    metrics.count_plan_committed("repair")
    write_report(store, source="step")
    with caplog.at_level(logging.WARNING, logger="alas_argo.metrics_outbox"):
        assert inbox.poll() == 1
    assert "broken.json" in caplog.text


def test_a_report_cannot_add_series_this_process_could_not_create() -> None:
    """Folding takes only the project's counters and histograms with their exact labels and sane values."""
    before = metrics.exposition().decode()
    taken = metrics.fold_samples([
        metrics.Point("alas_exporter_up", (), 1.0),                                   # a gauge
        metrics.Point("process_cpu_seconds_total", (), 5.0),                          # not ours
        metrics.Point("alas_runs_total", (("color", "red"),), 1.0),                   # wrong label
        metrics.Point("alas_runs_total", (("outcome", "failed"),), -1.0),             # negative
        metrics.Point("alas_runs_total", (("outcome", "failed"),), float("inf")),     # not finite
        metrics.Point("alas_runs_total", (("outcome", "failed"),), float("nan"))])    # not a number
    assert taken == 0 and metrics.exposition().decode() == before


def test_read_report_refuses_other_documents() -> None:
    from alas_argo.errors import InputError

    for data in (b"[]", b'{"format": 2, "samples": []}', json.dumps({"format": 1}).encode(), b"{"):
        with pytest.raises(InputError):
            read_report(data, where="metrics/x.json")
    points = read_report(json.dumps({"format": 1, "samples": [["alas_runs_total", {"outcome": "failed"}, 1],
                                                              ["bad"], ["alas_runs_total", {}, True]]}).encode(),
                         where="metrics/y.json")
    assert points == [metrics.Point("alas_runs_total", (("outcome", "failed"),), 1.0)]


def test_every_counter_and_histogram_of_the_registry_can_be_handed_on() -> None:
    """Whatever a pod counts on any of the project's counters or histograms reaches the controller: none is left
    out of the fold, and nothing else is in it."""
    kinds = {family.name: family.type for family in metrics.REGISTRY.collect()}
    additive = {name for name, kind in kinds.items() if kind in ("counter", "histogram")}
    assert additive and {"alas_http_requests", "alas_operator_actions"} <= additive
    parts = {"counter": ("total",), "histogram": ("bucket", "sum", "count")}
    expected = {f"{name}_{part}" for name in additive for part in parts[kinds[name]]}
    assert set(metrics.exporter._ADDITIVE) == expected  # the fold's own table


def test_the_exporter_endpoint_serves_the_folded_samples_too() -> None:
    """`alas metrics serve` shows what was folded in, as the controller's /metrics does (one view, two doors)."""
    import urllib.request

    server = metrics.serve("127.0.0.1", 0)
    try:
        before = exposed("alas_runs_total", outcome="compensated")
        assert metrics.fold_samples([metrics.Point("alas_runs_total", (("outcome", "compensated"),), 3.0)]) == 1
        with urllib.request.urlopen(f"http://127.0.0.1:{server.server_port}/metrics", timeout=10) as resp:
            served = resp.read().decode()
        assert f'alas_runs_total{{outcome="compensated"}} {before + 3.0}' in served
    finally:
        server.shutdown()
        server.server_close()
