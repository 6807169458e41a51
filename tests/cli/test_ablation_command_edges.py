"""`alas bench ablation`'s own code (alas_argo/cli/ablation_commands.py), edge by edge: every flag reaches the
benchmark (and the defaults the help states), the progress lines count instance x variant x trial rows and name
each, the tables land in `--out` or in bench/results/ablation-<UTC time>, and what is printed: the JSON summary
with the two files, or the table (its title says whether the faults came from the simulated planner) and the
files' line.

Mutation testing (bench/README.md, fifteenth session) found these read by no test: the command's one test runs
the real benchmark and reads the variants of the JSON summary. Here the benchmark is a stand-in that records
what it was given and returns fixed rows; the summary and the files are the real ones.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

import alas_argo.cli.ablation_commands as ablation_commands
from alas_argo.benchmarks.ablation import AblationRow, summarize_ablation
from alas_argo.cli import main
from alas_argo.jssp.catalog import suite
from alas_argo.pipeline import Variant


def _row(instance: str, variant: str, trial: int, makespan: int) -> AblationRow:
    return AblationRow(instance=instance, variant=variant, trial=trial, faults=0, injected="", status="succeeded",
                       final_valid=True, makespan=makespan, upper_bound=55, seconds=0.5, planner="heuristic",
                       optimal_rate=round(100 * 55 / makespan, 3), at_best=makespan <= 55)


ROWS = [_row("ft06", "full", 0, 55), _row("ft06", "no_validator", 0, 60)]


class _Ablation:
    """Stands in for `run_ablation`: records its arguments, hands each row to `on_row`, returns the rows."""

    def __init__(self, rows: list[AblationRow]) -> None:
        self.rows = rows
        self.calls: list[tuple[Sequence[str], dict[str, Any]]] = []

    def __call__(self, names: Sequence[str], *, on_row: Callable[[AblationRow], None] | None = None,
                 **kwargs: Any) -> list[AblationRow]:
        self.calls.append((names, kwargs))
        for row in self.rows:
            if on_row is not None:
                on_row(row)
        return self.rows


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> _Ablation:
    monkeypatch.chdir(tmp_path)  # the default output directory is relative
    fake = _Ablation(ROWS)
    monkeypatch.setattr(ablation_commands, "run_ablation", fake)
    return fake


def test_every_flag_reaches_the_benchmark(bench: _Ablation, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "ablation", "--suite", "ft06,la01", "--trials", "3", "--faults", "2",
                 "--variants", "no_validator,full", "--planner", "cpsat", "--optimizer", "heuristic",
                 "--feedback-rounds", "4", "--time-limit", "2.5", "--seed", "7", "-o", str(tmp_path / "o"),
                 "--json"]) == 0
    capsys.readouterr()
    ((names, kwargs),) = bench.calls
    assert list(names) == ["ft06", "la01"]
    assert kwargs == {"variants": [Variant.NO_VALIDATOR, Variant.FULL], "trials": 3, "faults": 2,
                      "planner": "cpsat", "optimizer": "heuristic", "feedback_rounds": 4, "time_limit": 2.5,
                      "seed": 7}


def test_the_defaults_are_those_the_help_states(bench: _Ablation, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "ablation", "--json"]) == 0
    capsys.readouterr()
    ((names, kwargs),) = bench.calls
    assert list(names) == suite("smoke")
    assert kwargs == {"variants": list(Variant), "trials": 20, "faults": 0, "planner": "simulated",
                      "optimizer": "auto", "feedback_rounds": 5, "time_limit": 1.0, "seed": 0}


def test_the_progress_lines_count_every_row_and_name_each(bench: _Ablation, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # 1 instance x 2 variants x 1 trial: the stand-in's two rows are all of them.
    assert main(["bench", "ablation", "--suite", "ft06", "--trials", "1", "--variants", "full,no_validator",
                 "-o", str(tmp_path / "o"), "--json"]) == 0
    err = capsys.readouterr().err  # not a terminal here: progress lines, not a bar
    assert "alas bench ablation: started (2 items)" in err
    assert "alas bench ablation: 2/2 done, last: ft06 no_validator" in err


def test_json_gives_the_summary_and_the_two_files(bench: _Ablation, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert main(["bench", "ablation", "--suite", "ft06", "-o", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "summary": summarize_ablation(ROWS), "csv": str(out / "ablation.csv"), "markdown": str(out / "ablation.md")}
    assert (out / "ablation.csv").is_file() and (out / "ablation.md").is_file()


def test_without_out_the_tables_go_to_a_stamped_directory_under_bench_results(
        bench: _Ablation, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "ablation", "--suite", "ft06", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (made,) = (tmp_path / "bench" / "results").iterdir()
    assert re.fullmatch(r"ablation-\d{8}T\d{6}Z", made.name), made.name
    assert doc["csv"] == str(Path("bench/results") / made.name / "ablation.csv")


def _cells(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.split(line[0])[1:-1]] for line in out.splitlines() if line[:1] in "┃│" and line]


def test_the_table_has_its_title_columns_and_a_row_per_variant_then_the_files(
        bench: _Ablation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    out = tmp_path / "o"
    assert main(["bench", "ablation", "--suite", "ft06", "--trials", "1", "--faults", "2", "--planner", "heuristic",
                 "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].strip() == "Ablation on ft06: 1 trials, planner heuristic, 2 injected fault(s)"
    assert _cells("\n".join(lines)) == [
        ["variant", "trials", "valid final plans", "valid %", "optimal rate", "at best %", "mean makespan (valid)",
         "gap % (valid)"],
        ["full", "1", "1", "100.0", "100.0", "100.0", "55.0", "0.0"],
        ["no_validator", "1", "1", "100.0", "91.67", "0.0", "60.0", "9.09"]]
    assert lines[-1] == f"tables: {out / 'ablation.csv'}, {out / 'ablation.md'}"


def test_the_title_says_when_the_faults_come_from_the_simulated_planner(
        bench: _Ablation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["bench", "ablation", "--suite", "ft06", "-o", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out.splitlines()[0].strip() == (
        "Ablation on ft06: 20 trials, faults from the SIMULATED planner (no model asked), 0 injected fault(s)")


def test_an_unknown_variant_is_refused_naming_the_flag(bench: _Ablation, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "ablation", "--suite", "ft06", "--variants", "full,q", "-o", str(tmp_path / "o")]) == 2
    assert "--variants: unknown value 'q'; known: full" in capsys.readouterr().err
    assert bench.calls == []


def test_a_stop_request_ends_the_benchmark_after_the_row_in_hand(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # The command is stoppable: SIGINT is a stop request checked after each row, not a KeyboardInterrupt.
    def interrupted(names: Sequence[str], *, on_row: Callable[[AblationRow], None] | None = None,
                    **kwargs: Any) -> list[AblationRow]:
        signal.raise_signal(signal.SIGINT)
        assert on_row is not None
        on_row(ROWS[0])
        raise AssertionError("the row's check did not stop the work")

    monkeypatch.setattr(ablation_commands, "run_ablation", interrupted)
    out = tmp_path / "o"
    assert main(["bench", "ablation", "--suite", "ft06", "-o", str(out), "--json"]) == 130
    err = capsys.readouterr().err
    assert "alas: interrupted by SIGINT during alas bench ablation" in err
    assert not out.exists()
