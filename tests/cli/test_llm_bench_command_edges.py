"""`alas bench llm` (the static experiment) as a command: where answers come from, what the benchmark is handed,
the price table, the recorded files, and what is printed and written.

Every run here is the simulator on ft06 (a few hundredths of a second a case) or a replay of one; the benchmark
is wrapped, not replaced, so each test checks both the arguments the command hands on and the real figures that
come back. tests/benchmarks/test_llm_bench.py runs the experiment itself, over HTTP too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from alas_argo.agents.context_scope import ContextScope
from alas_argo.agents.simulated import ErrorModel, SimulatedTransport
from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.cli import llm_bench_command, main
from alas_argo.cli.llm_bench_command import load_prices
from alas_argo.errors import InputError
from tests.agents.llm_server import ScriptedLlmServer, running_server, simulated_route
from tests.cli.spies import Spy, without_llm_endpoint

SIMULATED = ["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1"]
NO_ENDPOINT = ("no LLM endpoint configured (pass --llm-base-url or set OPENAI_BASE_URL, use --replay DIR, or "
               "--planner simulated): the LLM experiment is skipped")


@pytest.fixture(autouse=True)
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_llm_endpoint(monkeypatch, tmp_path)


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> Spy:
    return Spy(monkeypatch, llm_bench_command, "run_llm_bench")


@pytest.fixture
def progress(monkeypatch: pytest.MonkeyPatch) -> Spy:
    return Spy(monkeypatch, llm_bench_command, "run_with_progress")


# -- the price table -----------------------------------------------------------------------------------------


def test_no_price_table_is_no_prices_and_the_default_one_is_read_when_present(tmp_path: Path) -> None:
    assert load_prices(None) == {}
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "llm_prices.json").write_text('{"m": {"prompt_per_1m": 2}}')
    assert load_prices(None) == {"m": {"prompt_per_1m": 2.0}}


def test_a_price_table_keeps_the_numbers_as_floats(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"m": {"prompt_per_1m": 1, "completion_per_1m": 2.5, "note": "cheap"}, "7": {}}')
    prices = load_prices(path)
    assert prices == {"m": {"prompt_per_1m": 1.0, "completion_per_1m": 2.5}, "7": {}}
    assert type(prices["m"]["prompt_per_1m"]) is float


def test_an_unreadable_price_table_is_named_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "nope.json"
    with pytest.raises(InputError) as missing:
        load_prices(path)
    assert str(missing.value.args[0]) == "cannot read the price table: No such file or directory"
    assert missing.value.where == str(path)
    with pytest.raises(InputError) as directory:
        load_prices(tmp_path)
    assert directory.value.args[0] == "cannot read the price table: Is a directory"


@pytest.mark.parametrize("text", ['[{"prompt_per_1m": 1}]', '{"m": 3}', '{"m": {"a": 1}, "n": [1]}'])
def test_a_price_table_of_another_shape_is_refused(text: str, tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        load_prices(path)
    assert refused.value.args[0] == "a price table maps model names to {prompt_per_1m, completion_per_1m}"
    assert refused.value.where == str(path)


def test_the_price_table_reaches_the_benchmark_and_a_bad_one_is_exit_2(
        tmp_path: Path, bench: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.json").write_text('{"simulated": {"prompt_per_1m": 1000000}}')
    assert main([*SIMULATED, "--variants", "alas", "--prices", "p.json", "--json"]) == 0
    assert bench.calls[0][1]["prices"] == {"simulated": {"prompt_per_1m": 1000000.0}}
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["cost_usd"] == pytest.approx(row["prompt_tokens"])
    assert main([*SIMULATED, "--variants", "alas", "--prices", "missing.json"]) == 2
    assert "cannot read the price table" in capsys.readouterr().err


# -- without an endpoint ---------------------------------------------------------------------------------------


def test_without_an_endpoint_the_experiment_is_skipped_in_both_forms(bench: Spy,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--suite", "ft06"]) == 0
    assert capsys.readouterr().out == f"alas bench llm: skipped: {NO_ENDPOINT}\n"
    assert main(["bench", "llm", "--suite", "ft06", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"skipped": True, "reason": NO_ENDPOINT, "rows": []}
    assert bench.calls == [] and list(Path().iterdir()) == []


# -- the simulator ---------------------------------------------------------------------------------------------


def test_every_flag_reaches_the_benchmark(bench: Spy, progress: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "llm", "--planner", "simulated", "--suite", "ft06,la01", "--seeds", "2", "--rounds", "2",
                 "--variants", "alas,single_agent", "--context-scopes", "minimal,full", "--message-gate",
                 "--json"]) == 0
    (instances, variants, seeds, transport_for), kwargs = bench.calls[0]
    assert [i.name for i in instances] == ["ft06", "la01"]
    assert variants == [LlmVariant.ALAS, LlmVariant.SINGLE_AGENT] and seeds == [0, 1]
    assert kwargs["rounds"] == 2 and kwargs["gate"] is True and kwargs["recorder_for"] is None
    assert kwargs["scopes"] == [ContextScope.MINIMAL, ContextScope.FULL] and kwargs["prices"] == {}
    assert kwargs["settings"].base_url is None and kwargs["on_row"] is not None
    # Each case its own simulator, seeded by the case's seed, with the default error model.
    transport = transport_for(instances[0], LlmVariant.ALAS, 1)
    assert isinstance(transport, SimulatedTransport) and transport.model == ErrorModel()
    assert transport is not transport_for(instances[0], LlmVariant.ALAS, 1)
    # Cases: 2 instances x 2 seeds x (2 variants + 1 agent variant x 1 more scope).
    _, shown = progress.calls[0]
    assert shown["total"] == 12 and shown["what"] == "alas bench llm" and shown["first"] == "llm"
    assert shown["quiet"] is True
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["rows"]) == 12
    assert shown["label"](SimpleNamespace(instance="la01", variant="alas", seed=1)) == "la01 alas 1"


def test_each_case_gets_a_simulator_of_its_own_seeded_by_the_case(bench: Spy) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--error-rate", "0.1", "--json"]) == 0
    (instances, _, _, transport_for), _ = bench.calls[0]
    one, other = (transport_for(instances[0], LlmVariant.ALAS, 3), transport_for(instances[0], LlmVariant.ALAS, 4))
    assert isinstance(one, SimulatedTransport) and isinstance(other, SimulatedTransport)
    assert (one.seed, other.seed, one.stream) == (3, 4, "")
    assert one.model == ErrorModel(entry_error_rate=0.1) and one.model is other.model


def test_the_error_model_comes_from_its_flags_and_is_the_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--error-rate", "0.1", "--correction-rate", "0.2",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == ErrorModel(entry_error_rate=0.1, correction_rate=0.2).describe()
    assert doc["source"].startswith("simulated LLM: 10% of entries wrong") and "20% of mistakes" in doc["source"]
    assert doc["skipped"] is False and doc["simulated"] is True and doc["files"] == []
    assert main([*SIMULATED, "--variants", "alas", "--error-rate", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == ErrorModel(entry_error_rate=0).describe() and "50% of mistakes" in doc["source"]
    assert doc["rows"][0]["valid"] and doc["rows"][0]["first_violations"] == 0
    assert main([*SIMULATED, "--variants", "alas", "--correction-rate", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == ErrorModel(correction_rate=1).describe()


def test_text_prints_the_tables_and_writes_them_under_bench_results(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--rounds", "2", "--message-gate"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (out,) = (tmp_path / "bench" / "results").iterdir()
    assert out.name.startswith("llm-") and len(out.name) == len("llm-20261207T010203Z")
    md = (out / "llm_bench.md").read_text()
    caption = f"alas bench llm on ft06, 1 seed(s), K=2, message gate on: {ErrorModel().describe()}"
    assert caption in md and caption in "\n".join(lines)
    assert lines[-1] == f"tables: {Path('bench/results') / out.name / 'llm_bench.csv'}, " \
                        f"{Path('bench/results') / out.name / 'llm_bench.md'}"


def test_out_takes_the_tables_and_json_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--out", "o", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["files"] == [str(Path("o") / "llm_bench.csv"), str(Path("o") / "llm_bench.md")]
    md = (tmp_path / "o" / "llm_bench.md").read_text()
    assert "alas bench llm on ft06, 1 seed(s), K=5: simulated LLM" in md and "message gate" not in md
    assert not (tmp_path / "bench").exists()  # --json without --out writes nothing


def test_json_without_out_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["files"] == [] and list(tmp_path.iterdir()) == []


# -- recorded and replayed -------------------------------------------------------------------------------------


def test_record_writes_one_file_per_case_and_replay_gives_the_same_rows(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "a" / "b"
    stale = record / "ft06__alas__0.jsonl"
    record.mkdir(parents=True)
    stale.write_text("not an exchange\n")
    assert main([*SIMULATED, "--variants", "alas,single_agent", "--record", "a/b", "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in record.iterdir()) == ["ft06__alas__0.jsonl", "ft06__single_agent__0.jsonl"]
    lines = stale.read_text().splitlines()
    # The file starts empty (the stale line is gone), then one exchange per line.
    assert len(lines) == live["rows"][0]["calls"] and all(json.loads(line)["role"] for line in lines)
    assert main([*SIMULATED, "--variants", "alas,single_agent", "--replay", "a/b", "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["source"] == "replay of a/b"
    keep = ("variant", "valid", "makespan", "trace", "prompt_tokens")
    assert [{k: r[k] for k in keep} for r in replayed["rows"]] == [{k: r[k] for k in keep} for r in live["rows"]]


def test_a_case_without_its_recording_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rec").mkdir()
    assert main([*SIMULATED, "--variants", "alas", "--replay", "rec", "--json"]) == 2
    err = capsys.readouterr().err
    assert "no recorded exchanges for this case" in err and str(Path("rec") / "ft06__alas__0.jsonl") in err


# -- a live endpoint -------------------------------------------------------------------------------------------


def test_a_live_endpoint_is_the_source_and_one_client_serves_every_case(
        llm_server: ScriptedLlmServer, bench: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.route = simulated_route(seed=0)
    assert main(["bench", "llm", "--suite", "ft06", "--seeds", "1", "--variants", "alas", "--rounds", "1",
                 "--llm-base-url", llm_server.url, "--llm-model", "m-3", "--llm-temperature", "0.25",
                 "--llm-retries", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == f"m-3 at {llm_server.url.rstrip('/')}/chat/completions, temperature 0.25"
    assert doc["simulated"] is False
    (instances, _, _, transport_for), kwargs = bench.calls[0]
    assert transport_for(instances[0], LlmVariant.ALAS, 0) is transport_for(instances[0], LlmVariant.SINGLE_AGENT, 1)
    assert kwargs["settings"].model == "m-3" and kwargs["settings"].temperature == 0.25


# -- what the first run of these tests left alive ----------------------------------------------------------


def test_a_bad_json_price_table_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text("{not json")
    with pytest.raises(InputError) as refused:
        load_prices(path)
    assert refused.value.where == f"{path} line 1 column 2" and refused.value.args[0].startswith("invalid JSON")


def test_record_makes_its_directory_with_every_parent(tmp_path: Path) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--record", "new/deeper/rec", "--json"]) == 0
    assert [p.name for p in (tmp_path / "new" / "deeper" / "rec").iterdir()] == ["ft06__alas__0.jsonl"]


def test_a_missing_recording_is_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rec").mkdir()
    assert main([*SIMULATED, "--variants", "alas", "--replay", "rec"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas: error: {Path('rec') / 'ft06__alas__0.jsonl'}: no recorded exchanges for this case")


def test_an_unknown_variant_is_refused_naming_the_flag(bench: Spy, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--variants", "alas,nope"]) == 2
    assert capsys.readouterr().err.startswith("alas: error: --variants: unknown value 'nope'; known: alas, ")
    assert bench.calls == []


def test_extra_context_scopes_add_cases_only_for_the_job_agent_variants(progress: Spy,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # The three alas variants plan with job agents (a case per scope); single_agent does not.
    assert main([*SIMULATED, "--variants", "alas,alas_no_repair,alas_no_validator,single_agent", "--rounds", "1",
                 "--context-scopes", "minimal,normal", "--json"]) == 0
    assert progress.calls[0][1]["total"] == 7
    assert len(json.loads(capsys.readouterr().out)["rows"]) == 7


def test_json_carries_the_summary_of_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*SIMULATED, "--variants", "alas", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    overall = [s for s in doc["summary"] if s["scope"] == "overall"]
    assert [(s["variant"], s["cases"]) for s in overall] == [("alas", 1)]
    assert overall[0]["success_percent"] == (100.0 if doc["rows"][0]["valid"] else 0.0)
