"""`alas bench llm --disruptions`: every variant end to end under disruptions against the simulator and a
scripted endpoint, recorded and replayed with no endpoint; the plan in force, the reference and the tables."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks.llm_bench import LlmVariant, optimal_rate
from alas_argo.benchmarks.llm_disruption import (
    REPAIRS,
    PlanInForce,
    run_disruption_case,
    run_llm_disruption_bench,
)
from alas_argo.benchmarks.llm_disruption_tables import (
    disruption_markdown,
    disruption_paired_tests,
    summarize_disruption,
)
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.instance import Instance
from tests.agents.llm_server import ScriptedLlmServer, simulated_route

# Every test here runs with no endpoint from the environment (conftest.py).
pytestmark = pytest.mark.usefixtures("no_ambient_endpoint")


def _simulated(model: ErrorModel | None = None) -> Any:
    def transports(instance: Instance, variant: LlmVariant, seed: int, scenario: str) -> tuple[Any, Any]:
        return SimulatedTransport(model, seed=seed), SimulatedTransport(model, seed=seed, stream=scenario)

    return transports


@pytest.mark.parametrize("variant", list(LlmVariant))
def test_each_variant_under_a_breakdown_against_the_simulator(variant: LlmVariant) -> None:
    static, replan = _simulated()(get_instance("ft06"), variant, 0, "breakdown")
    row = run_disruption_case(get_instance("ft06"), variant, 0, "breakdown", static, replan,
                              plan_in_force=PlanInForce.SHARED, prices={"simulated": {"prompt_per_1m": 1.0}})
    assert row.simulated and row.model == "simulated" and row.static_valid and row.plan_in_force == "alas"
    assert row.reveal_time is not None and row.events == 1 and row.reference_makespan is not None
    assert row.rate == pytest.approx(optimal_rate(row.valid, row.makespan, row.reference_makespan), abs=1e-3)
    assert row.cost_usd == pytest.approx(row.prompt_tokens / 1e6)
    if variant is LlmVariant.ALAS:  # the deterministic repair: valid, and no model was asked to repair
        assert row.valid and row.requests == 0 and row.prompt_tokens == 0 and row.repair == "lcrp (deterministic)"
        assert row.moved_operations is not None and row.gap_percent is not None
    else:
        assert row.requests > 0 and row.prompt_tokens > 0
    if variant is LlmVariant.NO_VALIDATOR:
        assert row.rounds == 0 and row.trace == str(row.first_violations)
    if variant is LlmVariant.NO_REPAIR:
        assert row.first_violations is not None and row.first_violations > 0
        assert row.valid == (row.trace.split(" > ")[-1] == "0")


def test_a_flawless_agent_repairs_every_scenario_in_every_variant() -> None:
    """With no mistakes every re-plan is valid: failures come from the planner, not from the protocol."""
    rows = run_llm_disruption_bench([get_instance("ft06"), get_instance("la01")], list(LlmVariant), [0, 1],
                                    ["breakdown", "shock", "mixed", "multi-breakdown", "mixture"],
                                    _simulated(ErrorModel(entry_error_rate=0)), reference_budget=2.0)
    assert len(rows) == 2 * 5 * 2 * 5 and all(r.static_valid and r.valid for r in rows)
    assert all(r.gap_percent is not None and r.moved_operations is not None for r in rows)


def test_own_plan_in_force_fails_a_variant_without_a_valid_static_plan() -> None:
    """At the seed's error rate no first answer for ft06 is valid: no_validator has nothing to repair."""
    instance = get_instance("ft06")
    static, replan = _simulated()(instance, LlmVariant.NO_VALIDATOR, 0, "shock")
    own = run_disruption_case(instance, LlmVariant.NO_VALIDATOR, 0, "shock", static, replan)
    assert not own.static_valid and not own.valid and own.reveal_time is None and own.requests == 0
    assert own.rate == 0.0 and "no plan in force" in own.note
    static, replan = _simulated()(instance, LlmVariant.NO_VALIDATOR, 0, "shock")
    shared = run_disruption_case(instance, LlmVariant.NO_VALIDATOR, 0, "shock", static, replan,
                                 plan_in_force="shared")
    assert shared.static_valid and shared.reveal_time is not None and shared.requests > 0


def test_shared_plan_in_force_gives_every_variant_the_same_disruption() -> None:
    rows = run_llm_disruption_bench([get_instance("la01")], list(LlmVariant), [0], ["mixed"], _simulated(),
                                    plan_in_force="shared")
    assert len({(r.static_makespan, r.reveal_time, r.events, r.reference_makespan) for r in rows}) == 1


def _summary_without_timing(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in s.items() if k not in ("seconds", "calls")} for s in summary]


def test_every_variant_under_disruption_over_http_recorded_and_replayed(
        tmp_path: Path, llm_server: ScriptedLlmServer, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.route = simulated_route(seed=0)
    record = tmp_path / "rec"
    args = ["bench", "llm", "--suite", "ft06", "--seeds", "1", "--rounds", "3", "--disruptions", "breakdown",
            "--plan-in-force", "shared", "--reference-budget", "2", "--json"]
    assert main([*args, "--llm-base-url", llm_server.url, "--llm-retries", "0", "--record", str(record),
                 "--out", str(tmp_path / "live")]) == 0
    live = json.loads(capsys.readouterr().out)
    asked = len(llm_server.requests)
    assert not live["simulated"] and {r["variant"] for r in live["rows"]} == {v.value for v in LlmVariant}
    assert {r["model"] for r in live["rows"]} == {"scripted-simulator"}
    # Every request reached the endpoint: the static plans' (alas's, once per case) and the re-plans'.
    assert sum(r["calls"] for r in live["rows"]) < asked and all(r["static_valid"] for r in live["rows"])
    files = sorted(p.name for p in record.glob("*.jsonl"))
    assert files == sorted(f"ft06__{v.value}__0__breakdown.jsonl" for v in LlmVariant)
    assert sum(len(p.read_text().splitlines()) for p in record.glob("*.jsonl")) == asked
    assert main([*args, "--replay", str(record), "--out", str(tmp_path / "replayed")]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert len(llm_server.requests) == asked  # no endpoint was contacted
    assert _summary_without_timing(replayed["summary"]) == _summary_without_timing(live["summary"])
    skip = {"seconds", "calls"}
    assert [{k: v for k, v in r.items() if k not in skip} for r in replayed["rows"]] == \
        [{k: v for k, v in r.items() if k not in skip} for r in live["rows"]]
    assert all(r["calls"] == 0 for r in replayed["rows"])
    with (tmp_path / "live" / "llm_disruption.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(LlmVariant)


def test_a_simulated_session_replays_to_the_same_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Markdown of a replay equals the recorded run's but for the caption and the wall-clock column."""
    args = ["bench", "llm", "--suite", "ft06,la01", "--seeds", "1", "--disruptions", "shock,mixture",
            "--reference-budget", "2"]
    assert main([*args, "--planner", "simulated", "--record", str(tmp_path / "rec"), "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--replay", str(tmp_path / "rec"), "--out", str(tmp_path / "b")]) == 0
    capsys.readouterr()

    def table(path: Path) -> list[list[str]]:
        lines = (path / "llm_disruption.md").read_text().splitlines()[1:]  # line 0: the caption (source)
        header = next(line for line in lines if line.startswith("| scenario | scope |")).split("|")
        drop = {header.index(" seconds "), header.index(" HTTP calls ")}
        return [[c for i, c in enumerate(line.split("|")) if i not in drop] if line.startswith("| ") else [line]
                for line in lines]

    assert table(tmp_path / "a") == table(tmp_path / "b")
    assert "SIMULATED planner: no model was asked" in (tmp_path / "a" / "llm_disruption.md").read_text()


@pytest.mark.timeout(120)  # 13 s measured at load 5 (LCRP and the references on abz5)
def test_tables_say_what_each_variant_does_and_test_pairs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--planner", "simulated", "--suite", "ft06,la01,abz5", "--seeds", "2",
                 "--disruptions", "breakdown,shock-sweep", "--plan-in-force", "shared", "--reference-budget", "2",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "SIMULATED planner: no model was asked" in out and "36% of entries wrong" in out
    md = (tmp_path / "llm_disruption.md").read_text()
    assert all(text in md for text in REPAIRS.values())
    assert "| breakdown | overall | alas | lcrp (deterministic) | 6 | 100.0 | 100.0 |" in md
    assert "| shock-sweep | abz | alas |" in md
    assert "Wilcoxon" in md and "| all | alas_no_validator | 3 |" in md


def test_summaries_and_paired_tests() -> None:
    rows = run_llm_disruption_bench([get_instance(n) for n in ("ft06", "la01", "la02", "abz5")],
                                    [LlmVariant.ALAS, LlmVariant.NO_VALIDATOR], [0], ["breakdown"], _simulated(),
                                    plan_in_force="shared", reference_budget=2.0)
    overall = {s["variant"]: s for s in summarize_disruption(rows) if s["scope"] == "overall"}
    assert overall["alas"]["success_percent"] == 100.0 and overall["alas"]["requests"] == 0.0
    assert overall["alas_no_validator"]["success_percent"] < 100.0 and overall["alas_no_validator"]["requests"] > 0
    (test,) = disruption_paired_tests(rows)
    assert test["scenario"] == "breakdown" and test["instances"] == 4 and test["mean_difference"] > 0
    assert 0 < test["p_value"] <= 1
    assert "| breakdown | la | alas |" in disruption_markdown(rows, "t")


def test_unknown_scenario_is_refused_and_no_endpoint_skips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--planner", "simulated", "--disruptions", "earthquake"]) == 2
    assert "unknown disruption scenario(s) earthquake" in capsys.readouterr().err
    assert main(["bench", "llm", "--disruptions", "breakdown", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] is True



@pytest.mark.parametrize("disruptions", [[], ["--disruptions", "shock"]])
def test_a_damaged_recording_stops_the_replay_naming_its_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], disruptions: list[str]) -> None:
    args = ["bench", "llm", "--suite", "ft06", "--seeds", "1", "--variants", "alas", "--reference-budget", "1",
            *disruptions]
    assert main([*args, "--planner", "simulated", "--record", str(tmp_path / "rec"), "--out", str(tmp_path / "a")]) == 0
    [recording] = tmp_path.glob("rec/*.jsonl")
    lines = recording.read_text().splitlines()
    recording.write_text("\n".join([lines[0], lines[1][:40], *lines[2:]]) + "\n")  # a write cut short
    capsys.readouterr()
    assert main([*args, "--replay", str(tmp_path / "rec"), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (f"alas: error: {recording} line 2: not an exchange record: Invalid JSON: EOF while parsing a "
                   "string at line 1 column 40")
