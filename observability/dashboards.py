"""Grafana dashboards for ALAS, generated as code with grafana-foundation-sdk (pinned in pyproject.toml).

Run ``python3 observability/dashboards.py`` to (re)write the JSON files in ``observability/dashboards/``
and their copies in ``charts/alas/dashboards/`` (the chart turns each into a ConfigMap for the Grafana
sidecar). ``--check`` compares instead of writing and exits 1 on any difference; the tests do the same, so
a hand edit of the JSON or a change here without regenerating fails CI.

Every query reads metrics defined in ``alas_argo/metrics.py`` or recording rules defined in
``observability/rules/alas.rules.yaml``; ``tests/observability/test_dashboards.py`` checks that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders.dashboard import Dashboard, DatasourceVariable, Row
from grafana_foundation_sdk.builders.prometheus import Dataquery as PromQuery
from grafana_foundation_sdk.builders.stat import Panel as Stat
from grafana_foundation_sdk.builders.timeseries import Panel as Timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef

__all__ = ["DASHBOARD_DIRS", "build_all", "main", "overview_dashboard", "render", "repair_dashboard"]

ROOT = Path(__file__).resolve().parent.parent
#: Where the rendered JSON goes: the golden copy and the chart's copy.
DASHBOARD_DIRS = (ROOT / "observability" / "dashboards", ROOT / "charts" / "alas" / "dashboards")

# Panels point at the dashboard's datasource variable so the JSON imports into any Grafana.
_DS = DataSourceRef(type_val="prometheus", uid="${datasource}")


def _query(expr: str, legend: str = "") -> PromQuery:
    q = PromQuery().expr(expr).datasource(_DS)
    return q.legend_format(legend) if legend else q


def _series(title: str, unit: str, *queries: PromQuery, description: str = "") -> Timeseries:
    panel = Timeseries().title(title).unit(unit).datasource(_DS).height(8).span(12).min(0)
    if description:
        panel = panel.description(description)
    for ref, q in zip("ABCDEFGH", queries, strict=False):
        panel = panel.with_target(q.ref_id(ref))
    return panel


def _stat(title: str, unit: str, expr: str, description: str) -> Stat:
    return (Stat().title(title).unit(unit).datasource(_DS).height(4).span(6).description(description)
            .with_target(_query(expr).ref_id("A")))


def _base(title: str, uid: str, description: str) -> Dashboard:
    return (Dashboard(title).uid(uid).description(description).tags(["alas", "generated"])
            .refresh("30s").time("now-1h", "now").timezone("browser")
            .with_variable(DatasourceVariable("datasource").label("Prometheus").type("prometheus")))


def overview_dashboard() -> Dashboard:
    """Runs, plans, validation and policy events at a glance."""
    return (
        _base("ALAS / Overview", "alas-overview",
              "Runs, committed plans, validator verdicts and policy events of the ALAS planner.")
        .with_row(Row("Now"))
        .with_panel(_stat("Plans committed (1h)", "short",
                          "sum(increase(alas_plans_committed_total[1h]))",
                          "Plan versions committed to the execution log in the last hour."))
        .with_panel(_stat("Validation failure ratio", "percentunit", "alas:validation_failure:ratio_rate5m",
                          "Share of candidate plans the validator rejected (5 min)."))
        .with_panel(_stat("Repair SLO (good ratio)", "percentunit",
                          "alas:repair_latency_slo:good_ratio_rate5m",
                          "Share of repairs that finished within 5 s (objective: 95%)."))
        .with_panel(_stat("Runs finished (1h)", "short", "sum(increase(alas_runs_total[1h]))",
                          "Runs that ended in the last hour, any outcome."))
        .with_row(Row("Runs and plans"))
        .with_panel(_series("Runs by outcome", "ops", _query("alas:runs:rate15m", "{{outcome}}")))
        .with_panel(_series("Plans committed by source", "ops",
                            _query("sum by (source) (rate(alas_plans_committed_total[5m]))", "{{source}}")))
        .with_row(Row("Validation"))
        .with_panel(_series("Verdicts", "ops",
                            _query("sum by (verdict) (rate(alas_validations_total[5m]))", "{{verdict}}")))
        .with_panel(_series("Violations by code", "ops",
                            _query("sum by (code) (rate(alas_validation_violations_total[5m]))", "{{code}}")))
        .with_row(Row("Policies"))
        .with_panel(_series("Policy events", "ops", _query("alas:policy_events:rate5m", "{{event}}"),
                            description="Retries, timeouts, compensations and loop-guard trips."))
        .with_panel(_series("Log append latency p99", "s",
                            _query("alas:log_append_duration_seconds:p99_5m", "{{backend}}")))
        .with_row(Row("Services"))
        .with_panel(_series("Controller requests", "reqps",
                            _query("sum by (route, code) (rate(alas_http_requests_total[5m]))",
                                   "{{route}} {{code}}")))
        .with_panel(_series("Operator actions", "ops",
                            _query("sum by (action) (rate(alas_operator_actions_total[5m]))", "{{action}}")))
        .with_row(Row("LLM backend"))
        .with_panel(_series("LLM tokens", "short",
                            _query("sum by (kind) (rate(alas_llm_tokens_total[5m]))", "{{kind}}"),
                            description="Prompt and completion tokens per second: what the endpoint bills."))
        .with_panel(_series("LLM calls and unusable answers", "ops",
                            _query("sum by (role) (rate(alas_llm_calls_total[5m]))", "calls {{role}}"),
                            _query("sum by (kind) (rate(alas_llm_failures_total[5m]))", "failed {{kind}}"),
                            description="Failed exchanges fall back to the heuristic agent for that job."))
        .with_panel(_series("LLM exchange latency", "s",
                            _query("histogram_quantile(0.5, sum by (le, role) "
                                   "(rate(alas_llm_exchange_duration_seconds_bucket[5m])))", "p50 {{role}}"),
                            _query("histogram_quantile(0.95, sum by (le, role) "
                                   "(rate(alas_llm_exchange_duration_seconds_bucket[5m])))", "p95 {{role}}")))
    )


def repair_dashboard() -> Dashboard:
    """Localized repair: how often, how fast, how local, how good."""
    return (
        _base("ALAS / Repair", "alas-repair",
              "Localized cascading repair (LCRP) and its baselines: rate, latency, edit radius, quality.")
        .with_row(Row("Throughput and latency"))
        .with_panel(_series("Repairs by method", "ops", _query("alas:repairs:rate5m", "{{method}}")))
        .with_panel(_series("Repair latency", "s",
                            _query("alas:repair_duration_seconds:p50_5m", "p50 {{method}}"),
                            _query("alas:repair_duration_seconds:p95_5m", "p95 {{method}}"),
                            description="Objective: 95% of repairs within 5 s."))
        .with_panel(_series("Fallbacks to full re-solve", "ops",
                            _query('sum by (method) (rate(alas_repairs_total{fallback="true"}[5m]))',
                                   "{{method}}")))
        .with_row(Row("Locality and quality"))
        .with_panel(_series("Mean edit radius", "short", _query(
            "sum by (method) (rate(alas_repair_edit_radius_sum[5m]))"
            " / sum by (method) (rate(alas_repair_edit_radius_count[5m]))", "{{method}}")))
        .with_panel(_series("Mean moved operations", "short", _query(
            "sum by (method) (rate(alas_repair_moved_operations_sum[5m]))"
            " / sum by (method) (rate(alas_repair_moved_operations_count[5m]))", "{{method}}")))
        .with_panel(_series("Makespan gap p95", "percentunit", _query(
            "histogram_quantile(0.95, sum by (le, method) (rate(alas_repair_makespan_gap_ratio_bucket[5m])))",
            "{{method}}")))
    )


def build_all() -> dict[str, Any]:
    """Every dashboard as a JSON-ready dict, keyed by file name."""
    encoder = JSONEncoder(sort_keys=True, indent=2)
    out: dict[str, Any] = {}
    for builder in (overview_dashboard(), repair_dashboard()):
        model = json.loads(encoder.encode(builder.build()))
        # The SDK leaves every panel id at 0 and "options" null; Grafana needs unique ids to link and
        # edit panels, and some panel plugins choke on null options.
        for number, panel in enumerate(model["panels"], start=1):
            panel["id"] = number
            if panel.get("options") is None:
                panel.pop("options", None)
        out[f"{model['uid']}.json"] = model
    return out


def render(model: dict[str, Any]) -> str:
    """The canonical text of one dashboard file (stable key order, trailing newline)."""
    return json.dumps(model, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the rendered dashboards; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing")
    args = parser.parse_args(argv)
    stale = []
    for name, model in build_all().items():
        text = render(model)
        for directory in DASHBOARD_DIRS:
            path = directory / name
            if args.check:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(str(path.relative_to(ROOT)))
            else:
                directory.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if stale:
        sys.stderr.write("stale dashboards (run python3 observability/dashboards.py): "
                         + ", ".join(stale) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
