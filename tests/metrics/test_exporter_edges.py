"""The exporter's edges: what `samples` hands on, what `fold_samples` takes and how, and what a scrape shows.

The registry and the folded samples are process-wide and mutmut runs each mutant in a process that already ran
the tests, so every check here reads a difference, or a series no other test creates (a fresh label value).
"""

from __future__ import annotations

import gzip
import re
import urllib.request
import uuid

import pytest
from prometheus_client.parser import text_string_to_metric_families

from alas_argo import metrics
from alas_argo.metrics import REGISTRY, Point, exposition, fold_samples, samples

TEXT_0_0_4 = "text/plain; version=0.0.4; charset=utf-8"


def exposed(text: str, name: str, labels: dict[str, str]) -> float | None:
    """The value of one sample in an exposition, read with the client library's own parser (None if absent)."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return float(s.value)
    return None


def fresh(prefix: str) -> str:
    """A label value no other test uses (the label's cap is far: a handful per run)."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_samples_are_the_counters_and_histograms_only_with_sorted_labels_and_zeros() -> None:
    backend = fresh("s")
    metrics.observe_log_append(backend, 0.003)
    metrics.count_run_outcome(metrics.RunOutcome.FAILED)
    got = {(p.name, p.labels): p.value for p in samples()}
    names = {name for name, _ in got}
    # No gauge (up, last pass) and no `_created` timestamps: those are not additive.
    assert "alas_exporter_up" not in names and not any(n.endswith("_created") for n in names)
    assert "alas_log_append_duration_seconds_bucket" in names and "alas_runs_total" in names
    assert got[("alas_log_append_duration_seconds_count", (("backend", backend),))] == 1.0
    assert got[("alas_log_append_duration_seconds_sum", (("backend", backend),))] == pytest.approx(0.003)
    # Labels as sorted pairs, `le` last for a bucket; a bucket below the value is handed on at 0, not left out.
    assert got[("alas_log_append_duration_seconds_bucket", (("backend", backend), ("le", "0.001")))] == 0.0
    assert got[("alas_log_append_duration_seconds_bucket", (("backend", backend), ("le", "0.005")))] == 1.0
    assert all(isinstance(p.value, float) and list(p.labels) == sorted(p.labels) for p in samples())
    # An unlabelled counter is a sample too, with no labels.
    assert ("alas_plans_retracted_total", ()) in got


def test_a_fold_is_added_to_the_process_own_sample_and_kept_across_scrapes() -> None:
    key = ("alas_runs_total", {"outcome": "succeeded"})
    metrics.count_run_outcome(metrics.RunOutcome.SUCCEEDED)
    before = exposed(exposition().decode(), *key)
    assert before is not None
    assert fold_samples([Point("alas_runs_total", (("outcome", "succeeded"),), 2)]) == 1  # an int is a number
    assert fold_samples([Point("alas_runs_total", (("outcome", "succeeded"),), 0.5)]) == 1  # folds add up
    first = exposition().decode()
    assert exposed(first, *key) == before + 2.5
    # A scrape reads the folded samples, it does not consume them: the next one shows the same.
    assert exposition().decode() == first
    # Nor are they handed on again: `samples` is this process's own counting only.
    assert {p.value for p in samples() if p.name == "alas_runs_total" and p.labels == (("outcome", "succeeded"),)} \
        == {REGISTRY.get_sample_value("alas_runs_total", {"outcome": "succeeded"})}


def test_a_series_nothing_was_folded_into_is_exposed_as_counted() -> None:
    backend = fresh("o")
    metrics.observe_log_append(backend, 0.003)
    text = exposition().decode()
    assert exposed(text, "alas_log_append_duration_seconds_count", {"backend": backend}) == 1.0
    assert exposed(text, "alas_log_append_duration_seconds_bucket", {"backend": backend, "le": "0.001"}) == 0.0


def test_a_zero_is_taken_and_creates_the_series() -> None:
    backend = fresh("z")
    assert fold_samples([Point("alas_log_append_duration_seconds_count", (("backend", backend),), 0.0)]) == 1
    assert exposed(exposition().decode(), "alas_log_append_duration_seconds_count", {"backend": backend}) == 0.0


def test_fold_counts_what_it_took_and_skips_the_rest_one_by_one() -> None:
    backend = fresh("m")
    taken = fold_samples([
        Point("alas_log_append_duration_seconds_count", (("backend", backend),), 1.0),
        Point("alas_log_append_duration_seconds_count", (("backend", backend),), -0.5),     # negative
        Point("alas_log_append_duration_seconds_count", (("le", "1.0"), ("backend", backend)), 1.0),  # unsorted
        Point("alas_log_append_duration_seconds_bucket", (("backend", backend),), 1.0),     # a bucket needs le
        Point("alas_log_append_duration_seconds", (("backend", backend),), 1.0),            # the family, no sample
        Point("alas_log_append_duration_seconds_sum", (("backend", backend),), 0.25)])
    assert taken == 2
    text = exposition().decode()
    assert exposed(text, "alas_log_append_duration_seconds_count", {"backend": backend}) == 1.0
    assert exposed(text, "alas_log_append_duration_seconds_sum", {"backend": backend}) == 0.25
    assert exposed(text, "alas_log_append_duration_seconds_bucket", {"backend": backend}) is None


def test_folded_label_values_pass_the_label_rule_but_le_is_kept_as_written() -> None:
    backend = fresh("Up")  # upper case: the label rule lowers it
    before_other = exposed(exposition().decode(), "alas_log_append_duration_seconds_count",
                           {"backend": "other"}) or 0.0
    assert fold_samples([
        Point("alas_log_append_duration_seconds_bucket", (("backend", backend), ("le", "+Inf")), 1.0),
        Point("alas_log_append_duration_seconds_count", (("backend", "job 3 step 2"),), 4.0)]) == 2
    text = exposition().decode()
    assert exposed(text, "alas_log_append_duration_seconds_bucket",
                   {"backend": backend.lower(), "le": "+Inf"}) == 1.0
    assert backend not in text  # the case as reported never becomes a series
    assert exposed(text, "alas_log_append_duration_seconds_count", {"backend": "other"}) == before_other + 4.0
    assert "job 3 step 2" not in text


def test_a_folded_histogram_is_written_in_the_client_library_s_order() -> None:
    """Buckets by bound (numerically: 0.01 before 0.1 before 1.0 before +Inf), then count, then sum."""
    backend = fresh("h")
    labels = (("backend", backend),)
    points = [Point("alas_log_append_duration_seconds_sum", labels, 0.3),
              Point("alas_log_append_duration_seconds_bucket", (*labels, ("le", "+Inf")), 3.0),
              Point("alas_log_append_duration_seconds_count", labels, 3.0),
              Point("alas_log_append_duration_seconds_bucket", (*labels, ("le", "1.0")), 3.0),
              Point("alas_log_append_duration_seconds_bucket", (*labels, ("le", "0.01")), 1.0),
              Point("alas_log_append_duration_seconds_bucket", (*labels, ("le", "0.1")), 2.0)]
    assert fold_samples(points) == 6
    lines = [line for line in exposition().decode().splitlines() if f'backend="{backend}"' in line]
    assert lines == [
        f'alas_log_append_duration_seconds_bucket{{backend="{backend}",le="0.01"}} 1.0',
        f'alas_log_append_duration_seconds_bucket{{backend="{backend}",le="0.1"}} 2.0',
        f'alas_log_append_duration_seconds_bucket{{backend="{backend}",le="1.0"}} 3.0',
        f'alas_log_append_duration_seconds_bucket{{backend="{backend}",le="+Inf"}} 3.0',
        f'alas_log_append_duration_seconds_count{{backend="{backend}"}} 3.0',
        f'alas_log_append_duration_seconds_sum{{backend="{backend}"}} 0.3']


def test_folded_series_stay_inside_their_family_and_the_text_parses() -> None:
    """A folded series the process never counted itself is written under its own family's HELP/TYPE, and the
    whole exposition is one Prometheus can read (each family once, its samples together)."""
    backend = fresh("f")
    assert fold_samples([Point("alas_log_append_duration_seconds_count", (("backend", backend),), 2.0)]) == 1
    text = exposition().decode()
    family_of = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in family_of, family.name  # one block per family
        for s in family.samples:
            family_of[(s.name, tuple(sorted(s.labels.items())))] = (family.name, family.type)
    assert family_of[("alas_log_append_duration_seconds_count", (("backend", backend),))] == \
        ("alas_log_append_duration_seconds", "histogram")
    block = text.split("# TYPE alas_log_append_duration_seconds histogram\n", 1)[1].split("# HELP", 1)[0]
    assert f'alas_log_append_duration_seconds_count{{backend="{backend}"}} 2.0' in block
    # Gauges pass through untouched.
    assert re.search(r"^# TYPE alas_exporter_up gauge$", text, re.M)


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, bytes, str | None]:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as resp:
        return resp.status, resp.headers["Content-Type"], resp.read(), resp.headers["Content-Encoding"]


def test_the_endpoint_answers_each_format_prometheus_may_ask_for() -> None:
    """The text format with its content type by default; OpenMetrics when the scraper prefers it (Prometheus
    does); gzip when accepted; and `name[]` narrows the answer, as the client library documents (it was a
    500: the folded view lacked the restricted registry the library asks for)."""
    backend = fresh("e")
    assert fold_samples([Point("alas_log_append_duration_seconds_count", (("backend", backend),), 5.0)]) == 1
    metrics.count_plan_committed("plan")
    server = metrics.serve("127.0.0.1", 0)
    try:
        assert server.server_address[0] == "127.0.0.1"  # the host asked for, not every interface
        base = f"http://127.0.0.1:{server.server_port}/metrics"
        status, kind, body, encoding = get(base)
        assert (status, kind, encoding) == (200, TEXT_0_0_4, None)
        text = body.decode()
        assert exposed(text, "alas_log_append_duration_seconds_count", {"backend": backend}) == 5.0
        assert exposed(text, "alas_exporter_up", {}) == 1.0

        accept = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")  # Prometheus's own Accept header
        status, kind, body, _ = get(base, {"Accept": accept})
        assert status == 200 and kind.startswith("application/openmetrics-text; version=1.0.0")
        assert body.decode().endswith("# EOF\n")
        assert f'alas_log_append_duration_seconds_count{{backend="{backend}"}} 5.0' in body.decode()

        status, kind, body, encoding = get(base, {"Accept-Encoding": "gzip"})
        assert (status, encoding) == (200, "gzip")
        assert f'backend="{backend}"' in gzip.decompress(body).decode()

        status, kind, body, _ = get(f"{base}?name[]=alas_log_append_duration_seconds_count")
        assert (status, kind) == (200, TEXT_0_0_4)
        text = body.decode()
        assert exposed(text, "alas_log_append_duration_seconds_count", {"backend": backend}) == 5.0
        names = {s.name for family in text_string_to_metric_families(text) for s in family.samples}
        assert names == {"alas_log_append_duration_seconds_count"}
    finally:
        server.shutdown()
        server.server_close()


def test_the_fold_table_is_built_from_the_series_module_with_each_sample_s_labels() -> None:
    """`_ADDITIVE` is built once at import (so mutation testing, which forks after import, only sees a rebuild):
    each counter's `_total` and each histogram's three samples, mapped to the family and the label names a
    sample carries, a bucket's `le` last."""
    from alas_argo.metrics import exporter

    table = exporter._additive()
    assert table == exporter._ADDITIVE
    assert table["alas_runs_total"] == ("alas_runs", ("outcome",))
    assert table["alas_plans_retracted_total"] == ("alas_plans_retracted", ())
    assert table["alas_http_requests_total"] == ("alas_http_requests", ("route", "code"))
    assert table["alas_log_append_duration_seconds_bucket"] == ("alas_log_append_duration_seconds", ("backend", "le"))
    assert table["alas_log_append_duration_seconds_sum"] == ("alas_log_append_duration_seconds", ("backend",))
    assert table["alas_log_append_duration_seconds_count"] == ("alas_log_append_duration_seconds", ("backend",))
    assert "alas_exporter_up" not in table and "alas_runs_created" not in table
