"""The ablation benchmark: full ALAS keeps every final plan valid; the ablated variants do not."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from alas_argo.benchmarks.ablation import run_ablation, summarize_ablation
from alas_argo.cli import main


def test_full_is_valid_ablations_are_not() -> None:
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
                 "--out", str(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["variant"] for s in doc["summary"]] == ["full", "no_validator"]
    with (tmp_path / "ablation.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 4
    assert "| full | 2 | 2 | 100.0 |" in (tmp_path / "ablation.md").read_text()


def test_cli_rejects_bad_counts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "ablation", "--trials", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err
