"""`alas bench llm` (static and under disruptions) and `alas bench ablation` check `--out` before any case runs,
as every other command with an `--out` does (alas_argo.cli.outputs): they wrote their tables only after the whole
run, so a directory under a file, or a name past the length limit, lost every case to a traceback (found by a
fuzz of the commands' flags)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from alas_argo.cli import ablation_commands, llm_bench_command, llm_disruption_command, main
from tests.cli.spies import Spy, without_llm_endpoint

COMMANDS = [
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1"], llm_bench_command,
     "run_llm_bench"),
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--disruptions", "breakdown"],
     llm_disruption_command, "run_llm_disruption_bench"),
    (["bench", "ablation", "--suite", "ft06", "--trials", "1", "--time-limit", "0.2"], ablation_commands,
     "run_ablation"),
]


@pytest.fixture(autouse=True)
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_llm_endpoint(monkeypatch, tmp_path)


@pytest.mark.parametrize(("argv", "module", "runner"), COMMANDS)
def test_an_out_under_a_file_is_refused_before_any_case_runs(argv: list[str], module: ModuleType, runner: str,
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "afile").write_text("")
    spy = Spy(monkeypatch, module, runner)
    assert main([*argv, "--out", "afile/tables"]) == 2
    assert capsys.readouterr().err.strip() == "alas: error: afile/tables: --out: afile is not a directory"
    assert spy.calls == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # nothing written


@pytest.mark.parametrize(("argv", "module", "runner"), COMMANDS)
def test_an_out_the_system_cannot_look_up_is_refused_before_any_case_runs(
        argv: list[str], module: ModuleType, runner: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    spy = Spy(monkeypatch, module, runner)
    name = "x" * 300
    assert main([*argv, "--out", name]) == 2
    assert capsys.readouterr().err.strip() == f"alas: error: {name}: --out: File name too long"
    assert spy.calls == []


@pytest.mark.parametrize(("argv", "module", "runner"), COMMANDS[:2])
def test_a_record_directory_under_a_file_is_refused_before_any_case_runs(
        argv: list[str], module: ModuleType, runner: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    # `--record DIR` was made with mkdir as the run started: a NotADirectoryError traceback.
    (tmp_path / "afile").write_text("")
    spy = Spy(monkeypatch, module, runner)
    assert main([*argv, "--record", "afile/exchanges", "--json"]) == 2
    assert capsys.readouterr().err.strip() == "alas: error: afile/exchanges: --record: afile is not a directory"
    assert spy.calls == []


@pytest.mark.parametrize("argv", [COMMANDS[0][0][:2] + COMMANDS[0][0][4:],
                                  COMMANDS[1][0][:2] + COMMANDS[1][0][4:]])
def test_a_replay_directory_the_system_cannot_look_up_has_no_recorded_exchanges(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # Path.exists() raised OSError for a name past the length limit: a traceback from the first case.
    name = "x" * 300
    assert main([*argv, "--replay", name, "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress lines of the run it stopped
    assert err.startswith(f"alas: error: {name}/ft06__alas__0")
    assert err.endswith(".jsonl: no recorded exchanges for this case")
