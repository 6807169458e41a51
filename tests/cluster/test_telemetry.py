"""Runs after the other cluster tests (file order). Prometheus (Debian's, started by scripts/cluster) scrapes
the controller and the operator the way the chart's ServiceMonitor describes; the project's rules load and
evaluate; the dashboards' panels return data after the other cluster tests ran, the step pods' counts included
(they reach Prometheus through the controller)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.conftest import ROOT, record_figure
from tests.cluster.conftest import prometheus_api as api

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]

Query = Callable[[str], list[dict[str, Any]]]
def test_both_services_are_scraped(prometheus: Query) -> None:
    # Until both answer: a service seen down may be a pod just replaced (the operator-away test scales the
    # operator to 0 and back shortly before, when run with -k), which the next scrape finds up.
    deadline = time.monotonic() + 60
    while True:
        up = {r["metric"].get("service", ""): r["value"][1] for r in prometheus('up{job="alas"}')}
        both = all(any(name in s and v == "1" for s, v in up.items()) for name in ("controller", "operator"))
        if both or time.monotonic() > deadline:
            break
        time.sleep(5)
    assert any("controller" in s and v == "1" for s, v in up.items()), up
    assert any("operator" in s and v == "1" for s, v in up.items()), up


def test_the_rules_load_and_evaluate() -> None:
    deadline = time.monotonic() + 60
    while True:  # a rule's health is "unknown" until its group's first evaluation
        rules = [r for g in api("/api/v1/rules")["groups"] for r in g["rules"]]
        if (rules and all(r.get("health") != "unknown" for r in rules)) or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert rules
    assert any(r["type"] == "alerting" for r in rules)
    bad = [(r["name"], r.get("lastError")) for r in rules if r.get("health") != "ok"]
    assert not bad, bad


def test_step_pods_counts_reach_prometheus(prometheus: Query) -> None:
    """What only workflow step pods count (baseline commits, validator verdicts, S3 log appends) is scraped from
    the controller, which folded the pods' reports."""
    # The largest value each series reached (one series per controller pod): a controller replaced since (the
    # replicas test upgrades, deletes and rolls back the controller) starts its counters again, and the reports
    # it folded before are not folded twice.
    wanted = {"plan commits": 'sum(max_over_time(alas_plans_committed_total{source="plan"}[3h]))',
              "verdicts": "sum(max_over_time(alas_validations_total[3h]))",
              "s3 appends": 'sum(max_over_time(alas_log_append_duration_seconds_count{backend="s3"}[3h]))'}
    deadline = time.monotonic() + 60
    while True:
        got = {name: float(r[0]["value"][1]) if (r := prometheus(q)) else 0.0 for name, q in wanted.items()}
        if all(got.values()) or time.monotonic() > deadline:
            break
        time.sleep(5)
    record_figure("step_pod_metrics", got)
    assert all(v > 0 for v in got.values()), got


def panel_queries() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "observability" / "dashboards").glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    found.append((f"{path.stem}: {panel.get('title')}", target["expr"]))
    return found


def metrics_of(expr: str, recorded: dict[str, str]) -> set[str]:
    """The raw metric names a query needs (recording rules expanded to their expressions)."""
    names = set(re.findall(r"\b(alas(?::\w+)+|alas_\w+)\b", expr))
    raw: set[str] = set()
    for name in names:
        if ":" in name and name in recorded:
            raw |= metrics_of(recorded[name], recorded)
        else:
            raw.add(re.sub(r"_(bucket|sum|count)$", "", name))
    return raw


def exposed() -> set[str]:
    """Metric families the scraped services expose (what the panels can ever show from them)."""
    families = api("/api/v1/label/__name__/values")
    return {re.sub(r"_(bucket|sum|count|total|created)$", "", f) for f in families if f.startswith("alas_")}


def test_every_panel_on_scraped_metrics_returns_data(prometheus: Query) -> None:
    rules = yaml_rules()
    scraped = exposed()
    checked, empty = [], []
    for title, expr in panel_queries():
        needed = {re.sub(r"_total$", "", m) for m in metrics_of(expr, rules)}
        if not needed <= scraped:
            # Nothing on the cluster counted it: the LLM panels, when no run used an LLM planner (step pods'
            # counts reach Prometheus through the controller; see alas_argo/metrics_outbox.py).
            continue
        checked.append(title)
        # A rate needs two scrapes (5 s apart) of a series that may have appeared with the last test's repair.
        deadline = time.monotonic() + 30
        while not prometheus(expr.replace("[5m]", "[30m]").replace("[15m]", "[30m]")):
            if time.monotonic() > deadline:
                empty.append((title, expr))
                break
            time.sleep(3)
    record_figure("dashboard_panels", {"checked": len(checked), "with_data": len(checked) - len(empty),
                                       "nothing_counted": sorted({t for t, _ in panel_queries()} - set(checked))})
    assert checked, "no panel reads a metric the scraped services expose"
    assert not empty, empty


def yaml_rules() -> dict[str, str]:
    import yaml

    doc = yaml.safe_load(Path(ROOT / "observability" / "rules" / "alas.rules.yaml").read_text())
    return {r["record"]: r["expr"] for g in doc["groups"] for r in g["rules"] if "record" in r}
