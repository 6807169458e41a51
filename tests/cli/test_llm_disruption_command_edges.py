"""`alas bench llm --disruptions` (the experiment under disruptions) as a command: the scenarios, budgets and
context scope it accepts, where answers come from (the static plan's and the re-plan's), what the benchmark is
handed, and what is printed and written.

Runs here are the simulator on ft06 with small budgets (a few tenths of a second a case), or a replay of one;
the benchmark is wrapped, not replaced, so each test checks the arguments the command hands on and the real
rows that come back. tests/benchmarks/test_llm_disruption.py runs the experiment itself, over HTTP too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from alas_argo.agents.context_scope import ContextScope
from alas_argo.agents.llm_recording import ReplayTransport
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.benchmarks.llm_disruption import PlanInForce
from alas_argo.cli import llm_disruption_command, main
from alas_argo.cli.llm_disruption_command import parse_scenarios
from alas_argo.errors import InputError
from tests.agents.llm_server import ScriptedLlmServer, running_server, simulated_route
from tests.cli.spies import Spy, without_llm_endpoint

KNOWN = "breakdown, shock, mixed, reveal-sweep, long-breakdown, multi-breakdown, shock-sweep, mixture"
SIMULATED = ["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--variants", "alas",
             "--reference-budget", "1", "--repair-budget", "1", "--rounds", "1"]
NO_ENDPOINT = ("no LLM endpoint configured (pass --llm-base-url or set OPENAI_BASE_URL, use --replay DIR, or "
               "--planner simulated): the LLM experiment under disruptions is skipped")


@pytest.fixture(autouse=True)
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_llm_endpoint(monkeypatch, tmp_path)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Spy:
    return Spy(monkeypatch, llm_disruption_command, "run_llm_disruption_bench")


@pytest.fixture
def progress(monkeypatch: pytest.MonkeyPatch) -> Spy:
    return Spy(monkeypatch, llm_disruption_command, "run_with_progress")


# -- the scenarios -------------------------------------------------------------------------------------------


def test_scenarios_are_kinds_and_families_trimmed_once_each_in_order() -> None:
    assert parse_scenarios(" shock , breakdown,,mixture ,shock") == ["shock", "breakdown", "mixture"]
    assert parse_scenarios("mixed") == ["mixed"]


@pytest.mark.parametrize(("text", "named"), [("earthquake", "earthquake"), ("shock,quake,flood", "quake, flood"),
                                             ("", "(none given)"), (" , ", "(none given)")])
def test_unknown_or_no_scenarios_are_refused_listing_the_known(text: str, named: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_scenarios(text)
    assert refused.value.args[0] == f"unknown disruption scenario(s) {named}; known: {KNOWN}"
    assert refused.value.where == "--disruptions"


# -- the other flags' refusals, before any work ----------------------------------------------------------------


def test_the_smallest_budgets_are_taken(bench: Spy) -> None:
    assert main([*SIMULATED, "--disruptions", "breakdown", "--reference-budget", "0.01", "--repair-budget",
                 "0.01", "--json"]) == 0
    assert (bench.calls[0][1]["reference_budget"], bench.calls[0][1]["repair_budget"]) == (0.01, 0.01)


def test_an_unknown_context_scope_is_refused_naming_it(bench: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--disruptions", "breakdown", "--context-scopes", "wide"]) == 2
    assert "wide: --context-scopes takes minimal, normal and full" in capsys.readouterr().err
    assert main([*SIMULATED, "--disruptions", "breakdown", "--context-scopes", "full,minimal"]) == 2
    assert "--context-scopes: --disruptions runs one context scope at a time" in capsys.readouterr().err
    assert bench.calls == []


def test_a_bad_suite_is_refused_even_without_an_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--disruptions", "breakdown", "--suite", "nosuch"]) == 2
    assert "unknown suite or instance 'nosuch'" in capsys.readouterr().err


# -- without an endpoint ---------------------------------------------------------------------------------------


def test_without_an_endpoint_the_experiment_is_skipped_in_both_forms(bench: Spy, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--disruptions", "breakdown", "--suite", "ft06"]) == 0
    assert capsys.readouterr().out == f"alas bench llm: skipped: {NO_ENDPOINT}\n"
    assert main(["bench", "llm", "--disruptions", "breakdown", "--suite", "ft06", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"skipped": True, "reason": NO_ENDPOINT, "rows": []}
    assert bench.calls == [] and list(tmp_path.iterdir()) == []


# -- the simulator ---------------------------------------------------------------------------------------------


def test_every_flag_reaches_the_benchmark(bench: Spy, progress: Spy, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.json").write_text('{"simulated": {"prompt_per_1m": 2}}')
    assert main(["bench", "llm", "--planner", "simulated", "--suite", "ft06,la01", "--seeds", "2", "--rounds", "2",
                 "--variants", "alas,single_agent", "--disruptions", "shock,breakdown", "--context-scopes",
                 " minimal", "--message-gate", "--plan-in-force", "shared", "--repair-budget", "0.5",
                 "--reference-budget", "0.75", "--prices", "p.json", "--json"]) == 0
    (instances, variants, seeds, scenarios, _), kwargs = bench.calls[0]
    assert [i.name for i in instances] == ["ft06", "la01"] and seeds == [0, 1] and scenarios == ["shock", "breakdown"]
    assert variants == [LlmVariant.ALAS, LlmVariant.SINGLE_AGENT]
    assert {k: v for k, v in kwargs.items() if k not in ("settings", "on_row")} == {
        "rounds": 2, "recorder_for": None, "prices": {"simulated": {"prompt_per_1m": 2.0}},
        "scope": ContextScope.MINIMAL, "gate": True, "plan_in_force": PlanInForce.SHARED, "repair_budget": 0.5,
        "reference_budget": 0.75}
    assert kwargs["settings"].base_url is None and kwargs["on_row"] is not None
    # Cases: 2 instances x 2 scenarios x 2 seeds x 2 variants.
    _, shown = progress.calls[0]
    assert (shown["total"], shown["what"], shown["first"], shown["quiet"]) == (
        16, "alas bench llm --disruptions", "llm under disruptions", True)
    assert shown["label"](SimpleNamespace(instance="la01", scenario="shock", seed=1, variant="alas")) == \
        "la01 shock 1 alas"
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["rows"]) == 16 and doc["skipped"] is False and doc["simulated"] is True


def test_the_defaults_reach_the_benchmark(bench: Spy) -> None:
    assert main(["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--rounds", "0",
                 "--disruptions", "breakdown", "--reference-budget", "1", "--repair-budget", "1", "--json"]) == 0
    (_, variants, _, _, _), kwargs = bench.calls[0]
    assert variants == list(LlmVariant)
    assert (kwargs["scope"], kwargs["gate"], kwargs["plan_in_force"]) == (ContextScope.NORMAL, False,
                                                                          PlanInForce.OWN)


def test_each_case_gets_a_simulator_for_the_plan_and_another_for_the_replan(bench: Spy) -> None:
    assert main([*SIMULATED, "--disruptions", "breakdown", "--error-rate", "0.2", "--correction-rate", "0.3",
                 "--json"]) == 0
    (instances, _, _, _, transports), _ = bench.calls[0]
    static, replan = transports(instances[0], LlmVariant.ALAS, 4, "shock")
    assert isinstance(static, SimulatedTransport) and isinstance(replan, SimulatedTransport)
    model = ErrorModel(entry_error_rate=0.2, correction_rate=0.3)
    assert (static.model, static.seed, static.stream) == (model, 4, "")
    assert (replan.model, replan.seed, replan.stream) == (model, 4, "replan:shock")


def test_the_error_model_is_the_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--disruptions", "breakdown", "--error-rate", "0.1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == ErrorModel(entry_error_rate=0.1).describe()
    assert main([*SIMULATED, "--disruptions", "breakdown", "--correction-rate", "0.9", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == ErrorModel(correction_rate=0.9).describe()


def test_text_prints_the_tables_and_writes_them_under_bench_results(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--disruptions", "shock,breakdown", "--message-gate", "--plan-in-force", "shared",
                 "--repair-budget", "1.5", "--reference-budget", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (out,) = (tmp_path / "bench" / "results").iterdir()
    assert out.name.startswith("llm-disruption-") and len(out.name) == len("llm-disruption-20261207T010203Z")
    caption = ("alas bench llm --disruptions shock,breakdown on ft06, 1 seed(s), K=1, plan in force: shared, "
               "LCRP budget 1.5 s, reference: full re-solve in 2 s (deterministic time), message gate on: "
               f"{ErrorModel().describe()}")
    assert caption in (out / "llm_disruption.md").read_text() and caption in "\n".join(lines)
    relative = Path("bench/results") / out.name
    assert lines[-1] == f"tables: {relative / 'llm_disruption.csv'}, {relative / 'llm_disruption.md'}"


def test_out_takes_the_tables_and_json_without_out_writes_nothing(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--disruptions", "breakdown", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"] == [] and list(tmp_path.iterdir()) == []
    assert main([*SIMULATED, "--disruptions", "breakdown", "--out", "o", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["files"] == [str(Path("o") / "llm_disruption.csv"), str(Path("o") / "llm_disruption.md")]
    md = (tmp_path / "o" / "llm_disruption.md").read_text()
    assert "plan in force: own, LCRP budget 1 s, reference: full re-solve in 1 s" in md and "message gate" not in md


# -- recorded and replayed -------------------------------------------------------------------------------------


def test_record_writes_one_file_per_case_and_replay_serves_both_phases_from_it(
        tmp_path: Path, bench: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "a" / "b"
    record.mkdir(parents=True)
    stale = record / "ft06__alas__0__breakdown.jsonl"
    stale.write_text("not an exchange\n")
    assert main([*SIMULATED, "--disruptions", "breakdown,shock", "--record", "a/b", "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in record.iterdir()) == ["ft06__alas__0__breakdown.jsonl",
                                                        "ft06__alas__0__shock.jsonl"]
    assert "not an exchange" not in stale.read_text() and all(json.loads(line)["role"]
                                                                for line in stale.read_text().splitlines())
    assert main([*SIMULATED, "--disruptions", "breakdown,shock", "--replay", "a/b", "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["source"] == "replay of a/b"
    skip = {"seconds", "calls"}
    assert [{k: v for k, v in r.items() if k not in skip} for r in replayed["rows"]] == \
        [{k: v for k, v in r.items() if k not in skip} for r in live["rows"]]
    (instances, _, _, _, transports), _ = bench.calls[1]
    static, replan = transports(instances[0], LlmVariant.ALAS, 0, "shock")
    assert isinstance(static, ReplayTransport) and static is replan


def test_a_case_without_its_recording_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rec").mkdir()
    assert main([*SIMULATED, "--disruptions", "shock", "--replay", "rec", "--json"]) == 2
    err = capsys.readouterr().err
    assert "no recorded exchanges for this case" in err and str(Path("rec") / "ft06__alas__0__shock.jsonl") in err


# -- a live endpoint -------------------------------------------------------------------------------------------


def test_a_live_endpoint_is_the_source_and_one_client_serves_both_phases(
        llm_server: ScriptedLlmServer, bench: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.route = simulated_route(seed=0)
    assert main(["bench", "llm", "--suite", "ft06", "--seeds", "1", "--variants", "alas", "--rounds", "1",
                 "--disruptions", "breakdown", "--reference-budget", "1", "--repair-budget", "1",
                 "--llm-base-url", llm_server.url, "--llm-model", "m-4", "--llm-temperature", "0.5",
                 "--llm-retries", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == f"m-4 at {llm_server.url.rstrip('/')}/chat/completions, temperature 0.5"
    assert doc["simulated"] is False
    (instances, _, _, _, transports), kwargs = bench.calls[0]
    static, replan = transports(instances[0], LlmVariant.ALAS, 0, "breakdown")
    assert static is replan and static is transports(instances[0], LlmVariant.SINGLE_AGENT, 1, "shock")[0]
    assert kwargs["settings"].model == "m-4" and kwargs["settings"].temperature == 0.5


# -- what the first run of these tests left alive ----------------------------------------------------------


def test_record_makes_its_directory_with_every_parent(tmp_path: Path) -> None:
    assert main([*SIMULATED, "--disruptions", "shock", "--record", "new/deeper/rec", "--json"]) == 0
    assert [p.name for p in (tmp_path / "new" / "deeper" / "rec").iterdir()] == ["ft06__alas__0__shock.jsonl"]


def test_refusals_are_one_line_each_with_the_exact_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rec").mkdir()
    assert main([*SIMULATED, "--disruptions", "shock", "--replay", "rec"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas: error: {Path('rec') / 'ft06__alas__0__shock.jsonl'}: no recorded exchanges for this case")
    assert main([*SIMULATED[:-6], "--disruptions", "shock", "--variants", "alas,nope"]) == 2
    assert capsys.readouterr().err.startswith("alas: error: --variants: unknown value 'nope'; known: alas, ")


def test_the_caption_without_the_gate_ends_with_the_source(tmp_path: Path) -> None:
    assert main([*SIMULATED, "--disruptions", "shock", "--out", "o", "--json"]) == 0
    assert ("reference: full re-solve in 1 s (deterministic time): simulated LLM: "
            in (tmp_path / "o" / "llm_disruption.md").read_text())
