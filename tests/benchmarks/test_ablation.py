"""The ablation benchmark: faults come from the planner (the simulator by default); injected faults on top."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from alas_argo.benchmarks.ablation import run_ablation, summarize_ablation
from alas_argo.cli import main


def test_planner_faults_separate_the_variants() -> None:
    rows = run_ablation(["abz5"], trials=2, time_limit=0.5)
    by_variant = {s["variant"]: s for s in summarize_ablation(rows)}
    assert by_variant["full"]["valid_rate_percent"] == 100.0 and by_variant["full"]["simulated"]
    assert by_variant["no_validator"]["valid_rate_percent"] == 0.0  # 36 % of entries wrong: never valid at once
    assert 0 < by_variant["full"]["optimal_rate"] <= 100
    assert all(r.planner == "simulated" and not r.injected and r.feedback_trace for r in rows)
    # the same seeds give every variant the same first answers
    first = {(r.trial, r.variant): r.feedback_trace.split(" > ")[0] for r in rows}
    assert all(first[(t, "full")] == first[(t, "no_validator")] == first[(t, "no_repair")] for t in range(2))
    for r in rows:  # no-repair succeeds exactly when the feedback rounds reached a valid draft
        if r.variant == "no_repair":
            assert r.final_valid == r.feedback_trace.endswith(" 0")


def test_injected_faults_with_an_exact_planner() -> None:
    rows = run_ablation(["ft06"], trials=3, faults=2, planner="heuristic", time_limit=0.5)
    by_variant = {s["variant"]: s for s in summarize_ablation(rows)}
    assert by_variant["full"]["valid_rate_percent"] == 100.0
    assert by_variant["no_validator"]["valid_rate_percent"] < 100.0
    assert by_variant["no_repair"]["valid_rate_percent"] < 100.0
    assert all(r.injected for r in rows)  # every trial really had faults
    # the same seeds give every variant the same injected fault kinds
    kinds = {(r.trial, r.variant): r.injected for r in rows}
    assert all(kinds[(t, "full")] == kinds[(t, "no_validator")] for t in range(3))


def test_cli_writes_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "ablation", "--suite", "ft06", "--trials", "2", "--variants", "full,no_validator",
                 "--planner", "heuristic", "--faults", "1", "--out", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["variant"] for s in doc["summary"]] == ["full", "no_validator"]
    with (tmp_path / "ablation.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4
    md = (tmp_path / "ablation.md").read_text()
    assert "| full | 2 | 2 | 100.0 |" in md and "SIMULATED" not in md
