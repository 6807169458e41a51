"""`alas llm ping` and `alas bench llm` at their edges: every figure ping prints, the --compare table and usage
line, which experiment each flag combination runs, and the flags' refusals (exit 2, naming the flag)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import alas_argo.cli.llm_commands as llm_commands
from alas_argo.agents.llm_benchmark import BenchRow
from alas_argo.agents.llm_client import ChatResult, ExchangeKey
from alas_argo.bounds import MAX_FEEDBACK_ROUNDS
from alas_argo.cli import build_parser, main
from alas_argo.cli.flag_values import MAX_SEEDS
from tests.agents.llm_server import ScriptedLlmServer, running_server


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


@pytest.fixture(autouse=True)
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ALAS_LLM__BASE_URL", "ALAS_LLM__API_KEY", "ALAS_LLM__MODEL"):
        monkeypatch.delenv(var, raising=False)


# -- the flags' refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--repair-budget", "--reference-budget"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_budget_must_be_a_finite_number(flag: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`type=float` took nan and inf, and a NaN passes the experiment's `<= 0` check: `--repair-budget nan` ran
    the whole experiment and printed "LCRP budget nan s". Now argparse refuses it before any work (exit 2)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "llm", "--planner", "simulated", "--disruptions", "breakdown", "--suite", "ft06",
              "--seeds", "1", "--variants", "alas", flag, value, "--out", "o"])
    assert stopped.value.code == 2
    assert f"argument {flag}: not a finite number: '{value}'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def _parsed(*argv: str) -> dict[str, object]:
    """What `alas ARGV` parses to (its handler left out), without running it."""
    args = vars(build_parser(list(argv)).parse_args(list(argv)))
    return {k: v for k, v in args.items() if k not in ("handler", "command_parser")}


def test_bench_llm_defaults() -> None:
    """The defaults the help and bench/README promise: the llm planner on the smoke suite, seeds 0..2, K = 5
    rounds, the normal context scope, each variant's own plan in force, LCRP 5 s, reference 10 s, CP-SAT 2 s
    for --compare; nothing else switched on; stoppable (SIGINT/SIGTERM stop the search cleanly)."""
    assert _parsed("bench", "llm") == {
        "command": "bench", "bench_command": "llm", "stoppable": True, "interrupted_exit": None,
        "llm_base_url": None, "llm_model": None, "llm_timeout": None, "llm_retries": None, "llm_temperature": None,
        "planner": "llm", "suite": "smoke", "variants": None, "seeds": 3, "rounds": 5, "error_rate": None,
        "correction_rate": None, "context_scopes": "normal", "message_gate": False, "prices": None,
        "record": None, "replay": None, "out": None, "disruptions": None, "plan_in_force": "own",
        "repair_budget": 5.0, "reference_budget": 10.0, "compare": False, "time_limit": 2.0, "json": False}


def test_bench_llm_flags_parse_to_their_types() -> None:
    parsed = _parsed("bench", "llm", "--planner", "simulated", "--variants", "alas", "--seeds", "10000",
                     "--rounds", "0", "--error-rate", "0.25", "--correction-rate", "1", "--message-gate",
                     "--prices", "p.json", "--record", "rec", "--replay", "rep", "-o", "out", "--disruptions",
                     "shock", "--plan-in-force", "shared", "--repair-budget", "2.5", "--reference-budget", "7",
                     "--compare", "--time-limit", "0.5", "--json")
    assert {k: parsed[k] for k in ("planner", "variants", "seeds", "rounds", "error_rate", "correction_rate",
                                   "message_gate", "prices", "record", "replay", "out", "disruptions",
                                   "plan_in_force", "repair_budget", "reference_budget", "compare", "time_limit",
                                   "json")} == {
        "planner": "simulated", "variants": "alas", "seeds": 10_000, "rounds": 0, "error_rate": 0.25,
        "correction_rate": 1.0, "message_gate": True, "prices": Path("p.json"), "record": Path("rec"),
        "replay": Path("rep"), "out": Path("out"), "disruptions": "shock", "plan_in_force": "shared",
        "repair_budget": 2.5, "reference_budget": 7.0, "compare": True, "time_limit": 0.5, "json": True}


@pytest.mark.parametrize(("argv", "message"), [
    (["--seeds", "0"], "argument --seeds: "),
    (["--seeds", str(MAX_SEEDS + 1)], "argument --seeds: "),
    (["--rounds", "-1"], "argument --rounds: "),
    (["--rounds", str(MAX_FEEDBACK_ROUNDS + 1)], "argument --rounds: "),
    (["--error-rate", "nan"], "argument --error-rate: not a finite number: 'nan'"),
    (["--correction-rate", "inf"], "argument --correction-rate: not a finite number: 'inf'"),
    (["--time-limit", "nan"], "argument --time-limit: not a finite number: 'nan'"),
    # Each ended in a pydantic traceback from the simulator's settings (exit 1), after the progress line.
    (["--error-rate", "-1"], "argument --error-rate: must be from 0 to 1, got -1"),
    (["--error-rate", "1.5"], "argument --error-rate: must be from 0 to 1, got 1.5"),
    (["--correction-rate", "1e300"], "argument --correction-rate: must be from 0 to 1, got 1e300"),
    (["--planner", "gpt"], "argument --planner: invalid choice: 'gpt'"),
    (["--plan-in-force", "mine"], "argument --plan-in-force: invalid choice: 'mine'"),
])
def test_bench_llm_refuses_flags_out_of_range(argv: list[str], message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "llm", *argv])
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err


def test_ping_parses_the_endpoint_flags_and_json() -> None:
    assert _parsed("llm", "ping", "--llm-base-url", "http://h/v1", "--llm-model", "m", "--json") == {
        "command": "llm", "llm_command": "ping", "stoppable": False, "interrupted_exit": None,
        "llm_base_url": "http://h/v1", "llm_model": "m", "llm_timeout": None, "llm_retries": None,
        "llm_temperature": None, "json": True}
    assert _parsed("llm", "ping")["json"] is False


# -- alas llm ping -------------------------------------------------------------------------------------------


class FakeClient:
    """Stands in for the endpoint client: a fixed answer with known latency and tokens (the real client's
    figures are wall-clock measured; tests/agents/test_llm_client.py covers them)."""

    endpoint = "http://fake/v1/chat/completions"

    def __init__(self, result: ChatResult) -> None:
        self.result = result
        self.asked: list[tuple[Any, ExchangeKey | None]] = []

    def complete(self, messages: Any, *, key: ExchangeKey | None = None) -> ChatResult:
        self.asked.append((messages, key))
        return self.result


def _fake_ping(monkeypatch: pytest.MonkeyPatch, result: ChatResult) -> tuple[FakeClient, list[Any]]:
    client, settings = FakeClient(result), []

    def client_from_settings(llm: Any) -> FakeClient:
        settings.append(llm)
        return client

    monkeypatch.setattr(llm_commands, "client_from_settings", client_from_settings)
    return client, settings


def test_ping_reports_every_figure(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """JSON: the endpoint, the model that answered, the answer stripped, latency to 3 places, calls, both token
    counts and whether they were estimated; the text line says the same. One health-check question, keyed
    `ping`, to the endpoint the flags name."""
    result = ChatResult(text="  pong\n", model="m-7", prompt_tokens=21, completion_tokens=2, estimated=True,
                        latency_s=0.123456, calls=2)
    client, settings = _fake_ping(monkeypatch, result)
    assert main(["llm", "ping", "--llm-base-url", "http://fake/v1", "--llm-model", "m-7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "endpoint": "http://fake/v1/chat/completions", "model": "m-7", "answer": "pong", "latency_s": 0.123,
        "calls": 2, "prompt_tokens": 21, "completion_tokens": 2, "tokens_estimated": True}
    assert (settings[0].base_url, settings[0].model) == ("http://fake/v1", "m-7")
    assert client.asked == [(llm_commands.PING_MESSAGES, ExchangeKey(role="ping"))]
    assert main(["llm", "ping"]) == 0
    assert capsys.readouterr().out == ("http://fake/v1/chat/completions: m-7 answered 'pong' in 0.123 s, 23 tokens "
                                       "(estimated), 2 call(s)\n")


def test_ping_text_without_estimate_and_a_long_answer_cut_to_200(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _fake_ping(monkeypatch, ChatResult(text=" " + "p" * 250, model="m", prompt_tokens=5, completion_tokens=250))
    assert main(["llm", "ping"]) == 0
    assert capsys.readouterr().out == f"http://fake/v1/chat/completions: m answered {'p' * 200!r} in 0.0 s, " \
                                      "255 tokens, 1 call(s)\n"


def test_ping_asks_a_health_check_for_one_word() -> None:
    assert llm_commands.PING_MESSAGES == [
        {"role": "system", "content": "You are a health check."},
        {"role": "user", "content": "Reply with the single word: pong"}]


# -- alas bench llm: which experiment runs -------------------------------------------------------------------


def test_bench_llm_runs_the_experiment_its_flags_name(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """--disruptions runs the disruption experiment, no flag the static one, --compare the old comparison even
    with --disruptions (skipped here: no endpoint, said in its own words)."""
    import alas_argo.cli.llm_bench_command as static
    import alas_argo.cli.llm_disruption_command as disrupted

    monkeypatch.setattr(disrupted, "run_llm_disruption_experiment", lambda args: 41 if args.disruptions else 0)
    monkeypatch.setattr(static, "run_llm_experiment", lambda args: 42)
    assert main(["bench", "llm", "--disruptions", "shock"]) == 41
    assert main(["bench", "llm", "--disruptions", ""]) == 0  # an empty list is still the disruption experiment
    assert main(["bench", "llm"]) == 42
    capsys.readouterr()
    assert main(["bench", "llm", "--compare", "--disruptions", "shock"]) == 0
    assert capsys.readouterr().out == ("alas bench llm: skipped: no LLM endpoint configured (pass --llm-base-url "
                                       "or set OPENAI_BASE_URL): the llm planner comparison is skipped\n")


# -- alas bench llm --compare --------------------------------------------------------------------------------


ROWS = [BenchRow("ft06", "llm", 61, True, 1.234, raw_valid=False, violations=3, fallbacks=1, calls=6, tokens=700),
        BenchRow("ft06", "heuristic", 60, True, 0.004, raw_valid=True, lower_bound=55),
        BenchRow("ft06", "cpsat", 55, False, 0.5)]
USAGE = {"calls": 6, "exchanges": 7, "total_tokens": 700, "prompt_tokens": 600, "completion_tokens": 100,
         "latency_s": 2.345, "failures": 1, "unusable": 2}


def _fake_compare(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The comparison with a stand-in backend and planners (tests/cli/test_llm_commands.py runs the real one)."""
    seen: list[dict[str, Any]] = []

    def compare_planners(instances: list[Any], backend: Any, *, time_limit: float, seed: int,
                         progress: Any) -> list[BenchRow]:
        seen.append({"instances": [i.name for i in instances], "backend": backend, "time_limit": time_limit,
                     "seed": seed, "progress": progress is not None})
        for r in ROWS:
            if progress is not None:
                progress(r)
        return ROWS

    def make_llm_backend(settings: Any) -> Any:
        seen.append({"model": settings.llm.model})
        return SimpleNamespace(usage=USAGE)

    monkeypatch.setattr(llm_commands, "compare_planners", compare_planners)
    monkeypatch.setattr(llm_commands, "make_llm_backend", make_llm_backend)
    return seen


def test_compare_json_has_the_rows_model_and_usage(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """--json: no progress lines; the model, every row and the backend's usage; the suite's instances, the
    time limit and the solver seed (ALAS_SOLVER__SEED) handed to the comparison."""
    seen = _fake_compare(monkeypatch)
    monkeypatch.setenv("ALAS_SOLVER__SEED", "7")
    assert main(["bench", "llm", "--compare", "--llm-base-url", "http://fake/v1", "--llm-model", "m-9",
                 "--suite", "ft06,la01", "--time-limit", "0.5", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"skipped": False, "model": "m-9", "rows": [r.to_json() for r in ROWS],
                                        "usage": USAGE}
    assert captured.err == ""
    assert seen[0] == {"model": "m-9"}
    assert {k: v for k, v in seen[1].items() if k != "backend"} == {
        "instances": ["ft06", "la01"], "time_limit": 0.5, "seed": 7, "progress": False}
    assert seen[1]["backend"].usage is USAGE


def test_compare_text_prints_progress_the_table_and_the_usage(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Each row as it finishes on stderr; the table (raw valid yes / no / -, a missing bound as ?, an invalid plan
    as NO, seconds to 2 places) and one usage line with every figure on stdout. The default time limit is 2 s."""
    seen = _fake_compare(monkeypatch)
    assert main(["bench", "llm", "--compare", "--llm-base-url", "http://fake/v1", "--suite", "ft06"]) == 0
    captured = capsys.readouterr()
    assert seen[1]["time_limit"] == 2.0 and seen[1]["seed"] == 0 and seen[1]["progress"] is True
    assert captured.err.splitlines() == ["  ft06     llm       makespan     61  1.23 s",
                                         "  ft06     heuristic makespan     60  0.00 s",
                                         "  ft06     cpsat     makespan     55  0.50 s"]
    lines = captured.out.splitlines()
    assert lines[0].strip() == "llm vs heuristic vs cpsat (raw = the agents' own union, before the decode)"
    # rich draws the header's rules heavy (┃) and the body's light (│)
    cells = [[c.strip() for c in re.split("[│┃]", line)[1:-1]] for line in lines if len(re.findall("[│┃]", line)) == 12]
    assert cells == [
        ["instance", "planner", "makespan", "lb", "valid", "raw valid", "raw violations", "fallbacks", "calls",
         "tokens", "seconds"],
        ["ft06", "llm", "61", "?", "yes", "no", "3", "1", "6", "700", "1.23"],
        ["ft06", "heuristic", "60", "55", "yes", "yes", "0", "0", "0", "0", "0.00"],
        ["ft06", "cpsat", "55", "?", "NO", "-", "0", "0", "0", "0", "0.50"]]
    # instance and planner left-aligned, every figure right-aligned (rich pads each cell with one space a side)
    llm_row = next(re.split("│", line)[1:-1] for line in lines if "│ ft06" in line and " llm " in line)
    assert all(c == f" {c.strip()}".ljust(len(c)) for c in llm_row[:2])
    assert all(c == f"{c.strip()} ".rjust(len(c)) for c in llm_row[2:])
    assert len(llm_row[0].strip()) < len(llm_row[0]) - 2 and len(llm_row[4].strip()) < len(llm_row[4]) - 2
    assert lines[-1] == ("llm usage: 6 call(s), 7 exchange(s), 700 tokens (600 prompt + 100 completion), 2.35 s, "
                         "1 failed, 2 unusable")
