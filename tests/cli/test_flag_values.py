"""Flag values no command can use are refused before any work, in one line naming the flag (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.cli import main
from alas_argo.cli.flag_values import counts, members
from alas_argo.controller import RepairService
from alas_argo.errors import InputError
from alas_argo.log import FsStore


def _refused_by_argparse(argv: list[str], where: Path, monkeypatch: pytest.MonkeyPatch,
                         capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``alas ARGV`` in ``where``: argparse's exit 2, nothing written; its error text."""
    monkeypatch.chdir(where)
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert list(where.iterdir()) == []  # nothing started, nothing written
    return capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["bench", "static", "--suite", "ft06", "--time-limit", "nan", "--out", "o"],
    ["solve", "ft06", "--time-limit", "inf"],
    ["run", "ft06", "--repair-budget", "NaN"],
    ["repair", "--instance", "ft06", "--schedule", "s.json", "--disruption", "d.json", "--effort", "inf",
     "--out", "r.json"],
    ["bench", "ablation", "--suite", "ft06", "--time-limit", "nan"],
    ["operator", "--interval", "inf", "--once"],
], ids=lambda a: " ".join(a[:2]))
def test_a_float_flag_must_be_a_finite_number(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``float()`` takes nan and inf, and a NaN passes every ``<= 0`` check: a NaN time limit used to run."""
    err = _refused_by_argparse(argv, tmp_path, monkeypatch, capsys)
    flag = next(a for a in argv if a.startswith("--") and argv[argv.index(a) + 1].lower() in ("nan", "inf"))
    assert f"argument {flag}: not a finite number" in err, err


@pytest.mark.parametrize("argv", [
    ["solve", "ft06", "--seed", "99999999999999999999"],
    ["run", "ft06", "--seed", "2147483648"],
    ["repair", "--instance", "ft06", "--schedule", "s.json", "--disruption", "d.json", "--seed", "-1",
     "--out", "r.json"],
    ["disrupt", "--instance", "ft06", "--schedule", "s.json", "--kind", "shock", "--seed", "1e3", "-o", "d.json"],
    ["bench", "static", "--suite", "ft06", "--seed", "4294967296", "--out", "o"],
    ["bench", "repair", "--suite", "ft06", "--first-seed", "-2", "--out", "o"],
    ["bench", "ablation", "--suite", "ft06", "--seed", "99999999999999999999"],
], ids=lambda a: " ".join(a[:2]))
def test_a_seed_flag_must_fit_the_solver(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """CP-SAT's seed is a 32-bit integer: a larger one ended in a TypeError from its bindings, mid-run."""
    err = _refused_by_argparse(argv, tmp_path, monkeypatch, capsys)
    flag = next(a for a in argv if a in ("--seed", "--first-seed"))
    value = argv[argv.index(flag) + 1]
    expected = "not an integer" if value == "1e3" else f"a seed is an integer from 0 to 2147483647, got {value}"
    assert f"argument {flag}: {expected}" in err, err


@pytest.mark.parametrize("argv", [
    ["repair", "--instance", "ft06", "--schedule", "s.json", "--disruption", "d.json", "--workers", "0",
     "--out", "r.json"],
    ["bench", "repair", "--suite", "ft06", "--workers", "-3", "--out", "o"],
], ids=lambda a: " ".join(a[:2]))
def test_a_repair_needs_a_worker(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Taken silently before (deterministic limits use one worker whatever the flag says)."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    workers = argv[argv.index("--workers") + 1]
    assert capsys.readouterr().err == f"alas: error: --workers must be at least 1, got {workers}\n"
    assert list(tmp_path.iterdir()) == []


def test_ablation_refuses_negative_feedback_rounds_before_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    """It used to start and end in pydantic's ValidationError traceback from the first trial's configuration."""
    assert main(["bench", "ablation", "--suite", "ft06", "--feedback-rounds", "-1"]) == 2
    assert capsys.readouterr().err == "alas: error: --feedback-rounds must be at least 0, got -1\n"


def test_seeds_past_the_last_one_are_refused_before_the_bench_starts(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "repair", "--suite", "ft06", "--first-seed", "2147483647", "--seeds", "2", "--out",
                 str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == ("alas: error: --first-seed 2147483647 with --seeds 2 runs past the last "
                                       "seed, 2147483647\n")
    assert not (tmp_path / "o").exists()


def test_log_bench_with_nothing_to_time_is_refused_before_the_store(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "log", "--root", str(tmp_path / "store"), "--appends", "0"]) == 2
    assert capsys.readouterr().err == "alas: error: --appends: must be at least 1, got 0\n"
    assert main(["bench", "log", "--root", str(tmp_path / "store"), "--versions", "-2"]) == 2
    assert capsys.readouterr().err == "alas: error: --versions: must be at least 1, got -2\n"
    assert not (tmp_path / "store").exists()


def test_the_operator_names_the_flag_of_a_refused_value(capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before any Kubernetes configuration is looked for (it used to print pydantic's traceback text)."""
    assert main(["operator", "--ttl-after-success", "-5", "--once"]) == 2
    assert capsys.readouterr().err == ("alas: error: --ttl-after-success: Input should be greater than or equal "
                                       "to 0\n")


def test_a_controller_with_no_repair_slot_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Zero slots would accept every disruption and never repair one (the request hangs)."""
    assert main(["controller", "--max-concurrent", "0", "--no-auth", "--root", str(tmp_path), "--port", "0"]) == 2
    assert capsys.readouterr().err == "alas: error: --max-concurrent: must be at least 1, got 0\n"
    with pytest.raises(ValueError, match="max_concurrent must be at least 1"):
        RepairService(FsStore(tmp_path), max_concurrent=0)


def test_a_setting_given_as_a_flag_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["controller", "--port", "99999", "--no-auth", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("alas: error: command line: invalid setting controller.port: Input should "
                                       "be less than or equal to 65535\n")


def test_members_and_counts_parse_what_they_name() -> None:
    assert members("alas, single_agent", LlmVariant, "--variants") == [LlmVariant.ALAS, LlmVariant.SINGLE_AGENT]
    assert counts("10, 100", "--events") == [10, 100]
    with pytest.raises(InputError, match=r"--variants: unknown value 'nope'; known: alas, alas_no_repair"):
        members("alas,nope", LlmVariant, "--variants")
    with pytest.raises(InputError, match=r"--events: must be at least 1, got -3"):
        counts("10,-3", "--events")
    for bad in ("abc", "1.5", "", "10,,20"):
        with pytest.raises(InputError, match="--events: takes whole numbers"):
            counts(bad, "--events")


@pytest.mark.parametrize(("argv", "needle"), [
    # Each was a ValueError traceback (exit 1) from an Enum or int() call on the raw entry.
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--variants", "nope"],
     "--variants: unknown value 'nope'"),
    (["bench", "llm", "--disruptions", "breakdown", "--planner", "simulated", "--suite", "ft06", "--variants",
      "alas,zz"], "--variants: unknown value 'zz'"),
    (["bench", "ablation", "--suite", "ft06", "--variants", "q"], "--variants: unknown value 'q'; known: full"),
    (["bench", "open", "--events", "10,abc"], "--events: takes whole numbers such as 10,100, got 'abc'"),
    # 0 events ran a run of 4 (the least a run holds) and reported it as asked.
    (["bench", "open", "--events", "0"], "--events: must be at least 1, got 0"),
])
def test_a_bad_list_entry_exits_2_naming_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  argv: list[str], needle: str) -> None:
    out = ["--root", str(tmp_path / "s")] if argv[1] == "open" else ["--out", str(tmp_path / "o")]
    assert main([*argv, *out]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and err.count("\n") == 1
