"""The metric helpers record what they are told into the dedicated registry, and the exporter serves it."""

from __future__ import annotations

import re
import urllib.request

import pytest

from alas_argo import metrics
from alas_argo.metrics import REGISTRY


def value(name: str, **labels: str) -> float:
    """The current value of one sample (0 when it does not exist yet)."""
    got = REGISTRY.get_sample_value(name, labels)
    return 0.0 if got is None else got


def test_observe_repair_feeds_every_repair_metric() -> None:
    before_count = value("alas_repairs_total", method="lcrp", fallback="false")
    before_sum = value("alas_repair_duration_seconds_sum", method="lcrp")
    before_moved = value("alas_repair_moved_operations_sum", method="lcrp")
    metrics.observe_repair("lcrp", 0.25, moved=7, edit_radius=12, makespan_gap=0.04)
    assert value("alas_repairs_total", method="lcrp", fallback="false") == before_count + 1
    assert value("alas_repair_duration_seconds_sum", method="lcrp") == pytest.approx(before_sum + 0.25)
    assert value("alas_repair_moved_operations_sum", method="lcrp") == before_moved + 7
    # 12 falls in the le=20 bucket but not in le=10.
    assert value("alas_repair_edit_radius_bucket", method="lcrp", le="20.0") >= 1
    assert value("alas_repair_makespan_gap_ratio_bucket", method="lcrp", le="0.05") >= 1


def test_fallback_is_a_separate_series() -> None:
    before = value("alas_repairs_total", method="lcrp", fallback="true")
    metrics.observe_repair("lcrp", 1.0, moved=30, edit_radius=36, makespan_gap=0.0, fallback=True)
    assert value("alas_repairs_total", method="lcrp", fallback="true") == before + 1


def test_validation_counts_verdicts_and_codes() -> None:
    v0 = value("alas_validations_total", verdict="invalid")
    c0 = value("alas_validation_violations_total", code="machine_overlap")
    metrics.observe_validation(False, ["machine_overlap", "machine_overlap", "precedence"])
    assert value("alas_validations_total", verdict="invalid") == v0 + 1
    assert value("alas_validation_violations_total", code="machine_overlap") == c0 + 2


@pytest.mark.parametrize("event", list(metrics.PolicyEvent))
def test_policy_events_by_enum(event: metrics.PolicyEvent) -> None:
    before = value("alas_policy_events_total", event=event.value)
    metrics.count_policy_event(event)
    metrics.count_policy_event(event.value)
    assert value("alas_policy_events_total", event=event.value) == before + 2


def test_unknown_policy_event_and_outcome_are_folded() -> None:
    before = value("alas_policy_events_total", event="other")
    metrics.count_policy_event("explode")
    assert value("alas_policy_events_total", event="other") == before + 1
    before = value("alas_runs_total", outcome="other")
    metrics.count_run_outcome("weird")
    assert value("alas_runs_total", outcome="other") == before + 1
    assert REGISTRY.get_sample_value("alas_runs_total", {"outcome": "weird"}) is None


def test_label_values_are_shape_checked_and_capped() -> None:
    assert metrics.label_value("code", "Machine_Overlap") == "machine_overlap"
    assert metrics.label_value("method", "right-shift") == "right-shift"
    assert metrics.label_value("code", "job 3 step 2") == "other"
    assert metrics.label_value("code", "x" * 80) == "other"
    label = "test_cap_label"
    taken = [metrics.label_value(label, f"v{i}") for i in range(metrics.MAX_LABEL_VALUES + 5)]
    assert taken[: metrics.MAX_LABEL_VALUES] == [f"v{i}" for i in range(metrics.MAX_LABEL_VALUES)]
    assert set(taken[metrics.MAX_LABEL_VALUES:]) == {"other"}
    assert metrics.label_value(label, "v0") == "v0"  # already-seen values keep their own series


def test_plans_runs_and_log_append() -> None:
    p0 = value("alas_plans_committed_total", source="repair")
    r0 = value("alas_runs_total", outcome="compensated")
    a0 = value("alas_log_append_duration_seconds_count", backend="s3")
    metrics.count_plan_committed("repair")
    metrics.count_run_outcome(metrics.RunOutcome.COMPENSATED)
    metrics.observe_log_append("s3", 0.003)
    assert value("alas_plans_committed_total", source="repair") == p0 + 1
    assert value("alas_runs_total", outcome="compensated") == r0 + 1
    assert value("alas_log_append_duration_seconds_count", backend="s3") == a0 + 1


def test_names_follow_conventions() -> None:
    text = metrics.exposition().decode()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name.startswith("alas_"), name
            if kind == "counter":
                assert name.endswith("_total"), name
    assert "process_cpu_seconds_total" not in text  # dedicated registry, not the global one


def test_exporter_serves_the_registry_on_loopback() -> None:
    metrics.count_plan_committed("plan")
    server = metrics.serve("127.0.0.1", 0)
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            body = resp.read().decode()
        assert resp.status == 200
        assert 'alas_plans_committed_total{source="plan"}' in body
        assert "alas_exporter_up 1.0" in body
    finally:
        server.shutdown()
        server.server_close()


def test_http_requests_and_operator_actions() -> None:
    before = value("alas_http_requests_total", route="disruptions", code="201")
    metrics.count_http_request("disruptions", 201)
    metrics.count_http_request("/runs/secret-run-id", 404)
    assert value("alas_http_requests_total", route="disruptions", code="201") == before + 1
    assert value("alas_http_requests_total", route="other", code="404") >= 1
    a0 = value("alas_operator_actions_total", action="createworkflow")
    metrics.count_operator_action("CreateWorkflow")
    assert value("alas_operator_actions_total", action="createworkflow") == a0 + 1


def test_llm_exchange_feeds_calls_tokens_latency_and_failures() -> None:
    calls0 = value("alas_llm_calls_total", role="job_agent")
    prompt0 = value("alas_llm_tokens_total", kind="prompt")
    unusable0 = value("alas_llm_failures_total", kind="unusable")
    lat0 = value("alas_llm_exchange_duration_seconds_count", role="job_agent")
    metrics.observe_llm_exchange({"role": "job_agent", "calls": 2, "prompt_tokens": 50, "completion_tokens": 20,
                                  "unusable": 1, "failures": 0, "latency_s": 0.4})
    assert value("alas_llm_calls_total", role="job_agent") == calls0 + 2
    assert value("alas_llm_tokens_total", kind="prompt") == prompt0 + 50
    assert value("alas_llm_failures_total", kind="unusable") == unusable0 + 1
    assert value("alas_llm_exchange_duration_seconds_count", role="job_agent") == lat0 + 1


def test_a_method_s_fallback_series_exists_before_any_fallback() -> None:
    # The series exists (a panel reads 0, not "no data") and a repair without fallback leaves it unchanged,
    # whatever other tests in this process recorded before.
    before = value("alas_repairs_total", method="aor", fallback="true")
    metrics.observe_repair("aor", 0.01, moved=3, edit_radius=4, makespan_gap=0.0, fallback=False)
    assert REGISTRY.get_sample_value("alas_repairs_total", {"method": "aor", "fallback": "true"}) == before
    assert REGISTRY.get_sample_value("alas_repairs_total", {"method": "aor", "fallback": "false"}) is not None


def test_one_verdict_creates_both_series_so_the_failure_ratio_reads_zero() -> None:
    metrics.observe_validation(True)
    text = metrics.exposition().decode()
    assert re.search(r'^alas_validations_total\{verdict="invalid"\} \d', text, re.M)
    assert re.search(r'^alas_validations_total\{verdict="valid"\} [1-9]', text, re.M)


def test_one_llm_exchange_creates_both_failure_series() -> None:
    metrics.observe_llm_exchange({"role": "job", "calls": 1, "prompt_tokens": 10, "completion_tokens": 2})
    text = metrics.exposition().decode()
    for kind in ("failures", "unusable"):
        assert re.search(rf'^alas_llm_failures_total\{{kind="{kind}"\}} \d', text, re.M), kind
