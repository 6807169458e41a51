"""Edges of alas_argo.metrics.series left open by mutation testing: what each helper counts, exactly, and which
series it creates. A value outside a closed set lands on ``other`` (and never on a series of its own), a label
that reached :data:`MAX_LABEL_VALUES` folds new values into ``other`` under that label's own name (the
operator's applied and failed actions share one), a helper creates exactly the documented series (both
verdicts, both fallback flags, both LLM failure kinds, both token kinds) and no stray one, missing usage keys
count 0 (not 1), clamps stop at 0, and ``observe_repair_record`` (a repair's recorded metrics) feeds every
repair metric with the gap to the baseline, and records nothing for a patch. Every metric's type and label
names are those of its row in docs/operations.md (the docs test checks the names only).

Every count is read as a difference before/after: mutmut runs each mutant in a process forked from one that
already ran the tests, so absolute values there hold other tests' counts. A series the right code never
creates is checked to be absent. Every test starts from empty label sets (``_seen``), so the suite's own
values never reach the cap and the cap tests' filled sets never leak.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from alas_argo import metrics
from alas_argo.metrics import REGISTRY, series

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fresh_label_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(series, "_seen", {})


def full(label: str) -> None:
    """Give ``label`` its MAX_LABEL_VALUES distinct values already, so any new value is folded."""
    series._seen[label] = {f"taken-{i}" for i in range(metrics.MAX_LABEL_VALUES)}


def value(name: str, **labels: str) -> float:
    got = REGISTRY.get_sample_value(name, labels)
    return 0.0 if got is None else got


def label_values(sample: str, label: str, **where: str) -> set[str]:
    """Every value ``label`` takes among the samples named ``sample`` whose other labels match ``where``."""
    return {s.labels[label] for family in REGISTRY.collect() for s in family.samples
            if s.name == sample and all(s.labels.get(k) == v for k, v in where.items())}


def test_a_route_outside_the_closed_set_counts_as_other_and_never_as_itself() -> None:
    other = value("alas_http_requests_total", route="other", code="404")
    metrics.count_http_request("/runs/secret-run-id-7", 404)
    assert value("alas_http_requests_total", route="other", code="404") == other + 1
    assert "/runs/secret-run-id-7" not in label_values("alas_http_requests_total", "route")
    assert label_values("alas_http_requests_total", "route") <= series.HTTP_ROUTES


@pytest.mark.parametrize("count", [metrics.count_operator_action, metrics.count_operator_failure])
def test_an_action_beyond_the_cap_of_the_action_label_is_folded_into_other(count: Callable[[str], None]) -> None:
    name = ("alas_operator_actions_total" if count is metrics.count_operator_action
            else "alas_operator_action_failures_total")
    full("action")
    other = value(name, action="other")
    count("BrandNewAction")
    assert value(name, action="other") == other + 1
    assert REGISTRY.get_sample_value(name, {"action": "brandnewaction"}) is None


def test_an_action_is_counted_under_its_lower_case_name_while_the_label_has_room() -> None:
    before = value("alas_operator_action_failures_total", action="patchstatus")
    metrics.count_operator_failure("PatchStatus")
    assert value("alas_operator_action_failures_total", action="patchstatus") == before + 1


def test_a_plain_string_outcome_in_the_closed_set_is_counted_under_its_own_name() -> None:
    failed, other = value("alas_runs_total", outcome="failed"), value("alas_runs_total", outcome="other")
    metrics.count_run_outcome("failed")
    assert value("alas_runs_total", outcome="failed") == failed + 1
    assert value("alas_runs_total", outcome="other") == other


def test_a_valid_verdict_counts_valid_only_and_both_verdict_series_exist_and_no_other() -> None:
    valid, invalid = value("alas_validations_total", verdict="valid"), value("alas_validations_total",
                                                                               verdict="invalid")
    metrics.observe_validation(True)
    assert value("alas_validations_total", verdict="valid") == valid + 1
    assert value("alas_validations_total", verdict="invalid") == invalid
    assert label_values("alas_validations_total", "verdict") == {"valid", "invalid"}


def test_a_violation_code_beyond_the_cap_of_the_code_label_is_folded_into_other() -> None:
    full("code")
    other, invalid = value("alas_validation_violations_total", code="other"), value("alas_validations_total",
                                                                                     verdict="invalid")
    metrics.observe_validation(False, ["brand_new_code", "brand_new_code"])
    assert value("alas_validation_violations_total", code="other") == other + 2
    assert value("alas_validations_total", verdict="invalid") == invalid + 1
    assert REGISTRY.get_sample_value("alas_validation_violations_total", {"code": "brand_new_code"}) is None


def test_a_repair_creates_exactly_its_method_s_two_fallback_series() -> None:
    metrics.observe_repair("edges-method", 0.1, moved=1, edit_radius=1, makespan_gap=0.0)
    assert label_values("alas_repairs_total", "fallback", method="edges-method") == {"true", "false"}
    assert label_values("alas_repairs_total", "fallback") == {"true", "false"}
    assert "None" not in label_values("alas_repairs_total", "method")


def test_a_repair_that_moved_nothing_records_zero_moves_and_a_zero_radius() -> None:
    m = "edges-zero"
    names = ("alas_repair_moved_operations_sum", "alas_repair_moved_operations_count", "alas_repair_edit_radius_sum",
             "alas_repair_duration_seconds_sum", "alas_repair_makespan_gap_ratio_sum")
    before = {name: value(name, method=m) for name in names}
    first_bucket = value("alas_repair_edit_radius_bucket", method=m, le="0.0")
    metrics.observe_repair(m, 0.0, moved=0, edit_radius=0, makespan_gap=0.0)
    assert value("alas_repair_edit_radius_bucket", method=m, le="0.0") == first_bucket + 1  # 0 operations
    metrics.observe_repair(m, -1.0, moved=-3, edit_radius=-2, makespan_gap=-0.5)  # clamped to 0, not dropped
    after = {name: value(name, method=m) for name in names}
    assert after == {**before, "alas_repair_moved_operations_count": before["alas_repair_moved_operations_count"] + 2}


def test_a_method_beyond_the_cap_of_the_method_label_is_folded_into_other() -> None:
    full("method")
    other = value("alas_repairs_total", method="other", fallback="false")
    metrics.observe_repair("edges-new-method", 0.1, moved=1, edit_radius=1, makespan_gap=0.0)
    assert value("alas_repairs_total", method="other", fallback="false") == other + 1
    assert "edges-new-method" not in label_values("alas_repairs_total", "method")


def test_a_backend_beyond_the_cap_of_the_backend_label_is_folded_into_other() -> None:
    full("backend")
    other = value("alas_log_append_duration_seconds_count", backend="other")
    metrics.observe_log_append("edges-backend", 0.002)
    assert value("alas_log_append_duration_seconds_count", backend="other") == other + 1
    assert REGISTRY.get_sample_value("alas_log_append_duration_seconds_count", {"backend": "edges-backend"}) is None


def test_an_llm_exchange_counts_its_role_its_tokens_and_its_latency_exactly() -> None:
    role = "edges_planner"
    calls = value("alas_llm_calls_total", role=role)
    latency = value("alas_llm_exchange_duration_seconds_sum", role=role)
    fast = value("alas_llm_exchange_duration_seconds_bucket", role=role, le="0.25")
    prompt, completion = value("alas_llm_tokens_total", kind="prompt"), value("alas_llm_tokens_total",
                                                                              kind="completion")
    failures, unusable = value("alas_llm_failures_total", kind="failures"), value("alas_llm_failures_total",
                                                                                  kind="unusable")
    metrics.observe_llm_exchange({"role": role, "calls": 3, "prompt_tokens": 120, "completion_tokens": 45,
                                  "failures": 1, "unusable": 0, "latency_s": 0.2})
    assert value("alas_llm_calls_total", role=role) == calls + 3
    assert value("alas_llm_tokens_total", kind="prompt") == prompt + 120
    assert value("alas_llm_tokens_total", kind="completion") == completion + 45
    assert value("alas_llm_failures_total", kind="failures") == failures + 1
    assert value("alas_llm_failures_total", kind="unusable") == unusable
    assert value("alas_llm_exchange_duration_seconds_sum", role=role) == pytest.approx(latency + 0.2)
    assert value("alas_llm_exchange_duration_seconds_bucket", role=role, le="0.25") == fast + 1
    assert label_values("alas_llm_tokens_total", "kind") == {"prompt", "completion"}
    assert label_values("alas_llm_failures_total", "kind") == {"failures", "unusable"}


def test_an_llm_exchange_without_counts_adds_nothing_and_is_a_job_agent_s() -> None:
    calls = value("alas_llm_calls_total", role="job_agent")
    prompt, completion = value("alas_llm_tokens_total", kind="prompt"), value("alas_llm_tokens_total",
                                                                              kind="completion")
    failures, unusable = value("alas_llm_failures_total", kind="failures"), value("alas_llm_failures_total",
                                                                                  kind="unusable")
    latency = value("alas_llm_exchange_duration_seconds_count", role="job_agent")
    metrics.observe_llm_exchange({})
    metrics.observe_llm_exchange({"role": None, "failures": None, "unusable": None})
    assert value("alas_llm_calls_total", role="job_agent") == calls
    assert REGISTRY.get_sample_value("alas_llm_calls_total", {"role": "job_agent"}) is not None
    assert value("alas_llm_tokens_total", kind="prompt") == prompt
    assert value("alas_llm_tokens_total", kind="completion") == completion
    assert value("alas_llm_failures_total", kind="failures") == failures
    assert value("alas_llm_failures_total", kind="unusable") == unusable
    assert value("alas_llm_exchange_duration_seconds_count", role="job_agent") == latency  # no latency_s given
    metrics.observe_llm_exchange({"calls": 2})  # no role: the job agent's
    assert value("alas_llm_calls_total", role="job_agent") == calls + 2


def test_an_llm_role_beyond_the_cap_of_the_role_label_is_folded_into_other() -> None:
    full("role")
    other = value("alas_llm_calls_total", role="other")
    metrics.observe_llm_exchange({"role": "edges_new_role", "calls": 2})
    assert value("alas_llm_calls_total", role="other") == other + 2
    assert REGISTRY.get_sample_value("alas_llm_calls_total", {"role": "edges_new_role"}) is None


def record(**changes: object) -> dict[str, object]:
    """A repair's recorded metrics, as ``RepairResult.metrics()`` writes them (the fields the helper reads)."""
    base: dict[str, object] = {
        "method": "edges-record", "makespan": 66, "baseline_makespan": 60, "moved_operations": 4,
        "total_start_shift": 9, "edit_radius": 6, "wip_moved": 0, "fallback": False, "seconds": 0.3, "valid": True}
    return {**base, **changes}


REPAIR_SERIES = ("alas_repair_duration_seconds_sum", "alas_repair_moved_operations_sum",
                 "alas_repair_moved_operations_count", "alas_repair_edit_radius_sum",
                 "alas_repair_makespan_gap_ratio_sum", "alas_repair_makespan_gap_ratio_count")


def repair_values(m: str) -> dict[str, float]:
    """The repair samples of method ``m``, and its two fallback counts."""
    return {**{name: value(name, method=m) for name in REPAIR_SERIES},
            "fallback": value("alas_repairs_total", method=m, fallback="true"),
            "no fallback": value("alas_repairs_total", method=m, fallback="false")}


def grew(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {k: round(after[k] - before[k], 9) for k in before}


def test_a_repair_record_feeds_every_repair_metric_with_the_gap_to_its_baseline() -> None:
    m = "edges-record"
    before = repair_values(m)
    metrics.observe_repair_record(record(fallback=True))
    assert grew(before, repair_values(m)) == {
        "alas_repair_duration_seconds_sum": 0.3, "alas_repair_moved_operations_sum": 4,
        "alas_repair_moved_operations_count": 1, "alas_repair_edit_radius_sum": 6,
        "alas_repair_makespan_gap_ratio_sum": 0.1,  # (66 - 60) / 60
        "alas_repair_makespan_gap_ratio_count": 1, "fallback": 1, "no fallback": 0}
    before = repair_values(m)
    metrics.observe_repair_record(record())  # no fallback this time
    assert (grew(before, repair_values(m))["fallback"], grew(before, repair_values(m))["no fallback"]) == (0, 1)


def test_a_repair_record_without_a_fallback_or_moves_counts_neither() -> None:
    m = "edges-record-bare"
    rec = record(method=m)
    del rec["fallback"], rec["moved_operations"]
    before = repair_values(m)
    metrics.observe_repair_record(rec)
    got = grew(before, repair_values(m))
    assert (got["fallback"], got["no fallback"]) == (0, 1)
    assert (got["alas_repair_moved_operations_sum"], got["alas_repair_moved_operations_count"]) == (0, 1)


def test_a_repair_that_beat_its_baseline_records_a_zero_gap() -> None:
    m = "edges-record-better"
    before = repair_values(m)
    metrics.observe_repair_record(record(method=m, makespan=54, baseline_makespan=60))
    got = grew(before, repair_values(m))
    assert (got["alas_repair_makespan_gap_ratio_sum"], got["alas_repair_makespan_gap_ratio_count"]) == (0, 1)


@pytest.mark.parametrize("missing", ["seconds", "edit_radius"])
def test_a_patch_s_record_without_timing_or_radius_is_not_a_repair(missing: str) -> None:
    m = f"edges-patch-{missing.replace('_', '-')}"
    rec = record(method=m)
    del rec[missing]
    metrics.observe_repair_record(rec)
    assert m not in label_values("alas_repairs_total", "method")
    assert REGISTRY.get_sample_value("alas_repair_duration_seconds_count", {"method": m}) is None


def test_every_metric_has_the_type_and_labels_its_row_in_operations_md_gives() -> None:
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    collectors = {c._name: c for c in (getattr(series, n) for n in dir(series))
                  if hasattr(c, "_labelnames") and hasattr(c, "_name")}
    checked = set()
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`alas_"):
            continue
        names, kind, labels = re.findall(r"`(alas_[a-z_]+)`", cells[0]), cells[1], re.findall(r"`([a-z_]+)`",
                                                                                            cells[2])
        got: set[str] = set()
        for name in names:
            collector = collectors[name.removesuffix("_total")]
            assert collector._type in kind, (name, collector._type, kind)
            got |= set(collector._labelnames)
            checked.add(name)
        assert got == set(labels), (names, sorted(got), labels)
    assert len(checked) == len(collectors)


def test_a_baseline_of_one_divides_the_gap_by_one() -> None:
    # The guard against dividing by 0 must not touch a real baseline: one operation of one time unit, repaired
    # to a makespan of 3, is 200 % worse.
    m = "edges-record-unit"
    before = repair_values(m)
    metrics.observe_repair_record(record(method=m, makespan=3, baseline_makespan=1))
    assert grew(before, repair_values(m))["alas_repair_makespan_gap_ratio_sum"] == 2.0


@pytest.mark.parametrize("value", ["abc\n", "lcrp\n"])
def test_a_value_with_a_final_newline_is_other_not_a_series_of_its_own(value: str) -> None:
    # The shape is checked whole: a regex `$` matches before a final newline, so "abc\n" was a label value.
    assert series.label_value("newline-label", value) == "other"
    assert series.label_value("newline-label", value.strip()) == value.strip()
