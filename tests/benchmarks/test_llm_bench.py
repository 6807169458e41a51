"""`alas bench llm`: every variant end to end against the simulator and a scripted endpoint, recorded and
replayed with no endpoint; the figures and their definitions."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks.llm_bench import LlmVariant, optimal_rate, run_case, run_llm_bench
from alas_argo.benchmarks.llm_tables import llm_markdown, paired_tests, prompt_sizes, summarize_llm
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from tests.agents.llm_server import ScriptedLlmServer, simulated_route

# Every test here runs with no endpoint from the environment (conftest.py).
pytestmark = pytest.mark.usefixtures("no_ambient_endpoint")


def test_optimal_rate_definition() -> None:
    assert optimal_rate(True, 110, 55) == 50.0 and optimal_rate(True, 55, 55) == 100.0
    assert optimal_rate(False, 55, 55) == 0.0 and optimal_rate(True, None, 55) == 0.0


@pytest.mark.parametrize("variant", list(LlmVariant))
def test_each_variant_against_the_simulator(variant: LlmVariant) -> None:
    instance = get_instance("ft06")
    row = run_case(instance, variant, 0, SimulatedTransport(seed=0), prices={"simulated": {"prompt_per_1m": 1.0}})
    assert row.simulated and row.model == "simulated" and row.calls > 0 and row.prompt_tokens > 0
    assert row.cost_usd == pytest.approx(row.prompt_tokens / 1e6)
    assert row.optimal_rate == pytest.approx(optimal_rate(row.valid, row.makespan, 55), abs=1e-3)
    if variant is LlmVariant.ALAS:
        assert row.valid and row.first_violations and row.first_violations > 0
    if variant is LlmVariant.NO_VALIDATOR:
        assert row.rounds == 0 and not row.valid and row.trace == str(row.first_violations)
    if variant in (LlmVariant.SINGLE_AGENT, LlmVariant.PLANNER_CRITIC):
        assert row.agent_prompt_tokens is None and row.first_violations is None


def test_a_flawless_agent_makes_every_ablation_succeed() -> None:
    """No-repair and no-validator succeed when the planner made no mistake (not 0 % by construction)."""
    rows = run_llm_bench([get_instance("la01")], [LlmVariant.NO_REPAIR, LlmVariant.NO_VALIDATOR], [0],
                         lambda i, v, s: SimulatedTransport(ErrorModel(entry_error_rate=0), seed=s))
    assert all(r.valid and r.trace == "0" for r in rows)


def test_every_variant_over_http_recorded_and_replayed(tmp_path: Path, llm_server: ScriptedLlmServer,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.route = simulated_route(seed=0)
    record = tmp_path / "rec"
    args = ["bench", "llm", "--suite", "ft06", "--seeds", "1", "--rounds", "3", "--json"]
    assert main([*args, "--llm-base-url", llm_server.url, "--llm-retries", "0", "--record", str(record),
                 "--out", str(tmp_path / "live")]) == 0
    live = json.loads(capsys.readouterr().out)
    asked = len(llm_server.requests)
    assert not live["simulated"] and {r["variant"] for r in live["rows"]} == {v.value for v in LlmVariant}
    assert {r["model"] for r in live["rows"]} == {"scripted-simulator"}
    assert sum(r["calls"] for r in live["rows"]) == asked
    assert len(list(record.glob("*.jsonl"))) == len(LlmVariant)
    assert main([*args, "--replay", str(record), "--out", str(tmp_path / "replayed")]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert len(llm_server.requests) == asked  # no endpoint was contacted
    keep = ("variant", "valid", "makespan", "trace", "rounds", "prompt_tokens", "completion_tokens")
    assert [{k: r[k] for k in keep} for r in replayed["rows"]] == [{k: r[k] for k in keep} for r in live["rows"]]
    with (tmp_path / "live" / "llm_bench.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(LlmVariant)


def test_tables_say_simulated_and_test_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--planner", "simulated", "--suite", "ft06,la01,abz5", "--seeds", "2",
                 "--variants", "alas,single_agent", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "SIMULATED planner: no model was asked" in out and "36% of entries wrong" in out
    md = (tmp_path / "llm_bench.md").read_text()
    assert "| overall | alas | 6 | 100.0 |" in md and "patched %" in md and "Wilcoxon" in md and "Prompt size" in md


def test_summaries_paired_test_and_prompt_sizes() -> None:
    instances = [get_instance(n) for n in ("ft06", "la01", "la02", "abz5")]
    rows = run_llm_bench(instances, [LlmVariant.ALAS, LlmVariant.NO_VALIDATOR], [0, 1],
                         lambda i, v, s: SimulatedTransport(seed=s))
    overall = {s["variant"]: s for s in summarize_llm(rows) if s["scope"] == "overall"}
    assert overall["alas"]["cases"] == 8 and overall["alas"]["success_percent"] == 100.0
    assert overall["alas_no_validator"]["success_percent"] < 100.0
    (test,) = paired_tests(rows)
    assert test["instances"] == 4 and test["mean_difference"] > 0 and 0 < test["p_value"] <= 1
    sizes = {s["instance"]: s for s in prompt_sizes(rows)}
    assert set(sizes) == {"ft06", "la01", "la02", "abz5"}
    assert all(s["agent_prompt_tokens"] > 0 and s["single_prompt_tokens"] > 0 for s in sizes.values())
    assert "| la | alas |" in llm_markdown(rows, "t")


def test_without_endpoint_the_llm_planner_is_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] is True


def test_context_scopes_are_measured() -> None:
    rows = run_llm_bench([get_instance("abz5")], [LlmVariant.ALAS, LlmVariant.SINGLE_AGENT], [0],
                         lambda i, v, s: SimulatedTransport(seed=s), scopes=["minimal", "normal", "full"])
    assert [(r.variant, r.context_scope) for r in rows] == [
        ("alas", "minimal"), ("alas", "normal"), ("alas", "full"), ("single_agent", "minimal")]
    sizes = {s["scope"]: s["agent_prompt_tokens"] for s in prompt_sizes(rows)}
    assert sizes["minimal"] < sizes["normal"] <= sizes["full"]
    assert all(r.context_cache_misses > 0 for r in rows[:3])
    assert {s["variant"] for s in summarize_llm(rows)} == {"alas[minimal]", "alas", "alas[full]", "single_agent"}
