"""`alas bench log` at toy sizes: every figure is produced from real operations on the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.benchmarks.log import bench_appends, bench_plan_bytes, bench_replay
from alas_argo.cli import main
from alas_argo.log.fs_store import FsStore
from alas_argo.log.store import Store


def test_figures_on_each_backend(store: Store) -> None:
    appends = bench_appends(store, 20)
    assert appends["appends"] == 20 and 0 < appends["p50_ms"] <= appends["p99_ms"] <= appends["max_ms"]
    sizes = bench_plan_bytes(store, 2)
    assert sizes["operations"] == 1000 and 0 < sizes["bytes_per_version"] < sizes["json_bytes_per_version"]
    runs = store.children(prefix="runs/")
    assert len(runs) == 2  # the figures come from runs really written to the store


def test_replay_figure(tmp_path: Path) -> None:
    result = bench_replay(FsStore(tmp_path), versions=10)
    # 10 versions: 9 fresh plans and 1 repair, each validated: 11 replayed steps, all identical
    assert result["steps"] == 11 and result["parity"] is True and result["replay_seconds"] > 0


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "log", "--root", str(tmp_path), "--appends", "10", "--no-replay", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["append"]["appends"] == 10 and "replay" not in doc and doc["store"].startswith("fs:")


def test_open_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "open", "--root", str(tmp_path), "--events", "10,40", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["unit"] == "store operations" and doc["rows"][0]["events"] >= 10 and doc["rows"][1]["events"] >= 40
    first, second = ({k: r[k] for k in ("open", "job_agent", "controller")} for r in doc["rows"])
    assert first == second and all(v > 0 for v in first.values())  # counted on real runs, flat in their length
