"""Flag values no command can use are refused before any work, in one line naming the flag (exit 2)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pydantic import ValidationError

from alas_argo.benchmarks.llm_bench import LlmVariant
from alas_argo.cli import main
from alas_argo.cli.flag_values import counts, members, seconds, whole
from alas_argo.controller import RepairService
from alas_argo.errors import InputError
from alas_argo.log import FsStore
from alas_argo.operator.actions import OperatorConfig
from alas_argo.pipeline import RunConfig
from alas_argo.settings import LlmSettings


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
    ["bench", "ablation", "--suite", "ft06", "--time-limit", "0"],
    ["bench", "ablation", "--suite", "ft06", "--time-limit", "-1"],
    ["bench", "llm", "--compare", "--time-limit", "0"],
], ids=lambda a: " ".join(a[:2] + a[-1:]))
def test_a_time_limit_must_be_above_zero(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """`bench ablation --time-limit 0` ended in a pydantic traceback from RunConfig (exit 1) after starting its
    progress line; `bench llm --compare --time-limit 0` ran CP-SAT with no time."""
    err = _refused_by_argparse(argv, tmp_path, monkeypatch, capsys)
    assert f"argument --time-limit: must be above 0 and at most 31536000 seconds (a year), got {argv[-1]}" in err, err


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


_REPAIR = ["repair", "--instance", "ft06", "--schedule", "s.json", "--disruption", "d.json", "--out", "r.json"]


@pytest.mark.parametrize(("argv", "flag", "lowest", "highest"), [
    (["solve", "ft06"], "--workers", 1, 64),
    (["run", "ft06"], "--workers", 1, 64),
    (["run", "ft06"], "--feedback-rounds", 0, 50),
    (["run", "ft06"], "--faults", 0, 100),
    # A 0 used to read as the default (one disruption revealed and repaired).
    (["run", "ft06", "--disrupt", "breakdown"], "--disruptions", 1, 20),
    (["run", "ft06", "--planner", "llm"], "--llm-retries", 0, 100),
    (_REPAIR, "--workers", 1, 64),
    (_REPAIR, "--streams", 1, 16),
    (["bench", "static", "--suite", "ft06", "--out", "o"], "--workers", 1, 64),
    (["bench", "repair", "--suite", "ft06", "--out", "o"], "--workers", 1, 64),
    (["bench", "repair", "--suite", "ft06", "--out", "o"], "--seeds", 1, 10_000),
    # Each of these used to start: --trials 0 and --faults -1 ran nothing, --faults 101 ended in pydantic's
    # ValidationError traceback from the first trial, --trials 1000000000000 ran until stopped.
    (["bench", "ablation", "--suite", "ft06"], "--trials", 1, 10_000),
    (["bench", "ablation", "--suite", "ft06"], "--faults", 0, 100),
    (["bench", "ablation", "--suite", "ft06"], "--feedback-rounds", 0, 50),
    # --seeds 1000000000000 ended in a MemoryError (a list of every seed), after "started".
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06"], "--seeds", 1, 10_000),
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06"], "--rounds", 0, 50),
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--disruptions", "breakdown"], "--seeds", 1,
     10_000),
    # --repeats -1 ended in a KeyError; --nodes 1000000000000 ran silently until stopped.
    (["bench", "runtime"], "--repeats", 1, 100_000),
    (["bench", "runtime"], "--nodes", 1, 100_000),
    (["bench", "runtime"], "--tasks", 1, 100_000),
    (["bench", "validator"], "--repeat", 1, 100_000),
    (["bench", "log", "--root", "store"], "--appends", 1, 100_000),
    (["bench", "log", "--root", "store"], "--versions", 1, 100_000),
    # A semaphore of 0 slots would accept every disruption and never repair one (the request hangs).
    (["controller", "--no-auth", "--root", "store"], "--max-concurrent", 1, 64),
    # 99999 was an OverflowError traceback from bind().
    (["controller", "--no-auth", "--root", "store"], "--port", 0, 65_535),
    (["metrics", "serve"], "--port", 0, 65_535),
    (["operator", "--once"], "--metrics-port", 0, 65_535),
], ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else str(v))
@pytest.mark.parametrize("side", ["below", "above"])
def test_a_count_flag_is_refused_out_of_its_range_before_any_work(
        argv: list[str], flag: str, lowest: int, highest: int, side: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    value = str(lowest - 1 if side == "below" else highest + 1)
    err = _refused_by_argparse([*argv, flag, value], tmp_path, monkeypatch, capsys)
    assert f"argument {flag}: must be from {lowest} to {highest}, got {value}\n" in err, err


@pytest.mark.parametrize(("argv", "flag"), [
    # 0 or -5 polled the API server in a hot loop; 1e12 ended in an OverflowError after the first pass.
    (["operator", "--once"], "--interval"),
    # 0 made every liveness probe fail (and read as "the default" besides), so the kubelet restarted the pod.
    (["operator", "--once"], "--liveness-max-age"),
    # 1e300 failed the run's propose step with an OverflowError from the socket.
    (["run", "ft06", "--planner", "llm"], "--llm-timeout"),
    (["smoke"], "--timeout"),
    # 1e20 CPU seconds per node was accepted and ran until killed.
    (["bench", "runtime"], "--seconds"),
    # Search budgets: 1e12 was taken (CP-SAT then searched until it proved an optimum, however long that took),
    # and 0 was refused by each command's own check in its own words, or (bench llm) by one check for two flags.
    (["solve", "ft06"], "--time-limit"),
    (["run", "ft06"], "--time-limit"),
    (["run", "ft06"], "--repair-budget"),
    (["repair", "--instance", "ft06", "--schedule", "s.json", "--disruption", "d.json"], "--time-limit"),
    (["bench", "static", "--suite", "ft06"], "--time-limit"),
    (["bench", "repair", "--suite", "ft06"], "--time-limit"),
    (["bench", "repair", "--suite", "ft06"], "--baseline-time-limit"),
    (["bench", "llm", "--disruptions", "breakdown"], "--repair-budget"),
    (["bench", "llm", "--disruptions", "breakdown"], "--reference-budget"),
])
@pytest.mark.parametrize("value", ["0", "-5", "31536001", "1e12"])
def test_a_wait_flag_takes_seconds_above_0_and_at_most_a_year(
        argv: list[str], flag: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused_by_argparse([*argv, flag, value], tmp_path, monkeypatch, capsys)
    assert f"argument {flag}: must be above 0 and at most 31536000 seconds (a year), got {value}\n" in err, err


def test_a_wait_of_a_year_or_a_millisecond_is_taken() -> None:
    assert (seconds("31536000"), seconds("0.001")) == (31_536_000.0, 0.001)
    with pytest.raises(argparse.ArgumentTypeError, match="not a finite number"):
        seconds("inf")


@pytest.mark.parametrize("text", ["1.5", "two", ""])
def test_a_count_flag_takes_whole_numbers_only(text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused_by_argparse(["solve", "ft06", "--workers", text], tmp_path, monkeypatch, capsys)
    assert f"argument --workers: not a whole number: {text!r}\n" in err, err


def test_the_bounds_are_the_values_a_count_flag_reaches() -> None:
    """Both ends pass: the flag refuses only what its range leaves out."""
    parse = whole(1, 64)
    assert (parse("1"), parse("64"), parse(" 7 ")) == (1, 64, 7)
    assert whole(0)("123456789012") == 123456789012  # no upper bound: --limit only shortens a listing
    with pytest.raises(argparse.ArgumentTypeError, match="must be at least 0, got -1"):
        whole(0)("-1")
    with pytest.raises(argparse.ArgumentTypeError, match="must be from 1 to 64, got 1000000000000"):
        parse("1000000000000")


def test_a_run_model_refuses_what_its_flag_refuses() -> None:
    """The flag and the model share one bound (alas_argo.bounds), so neither lets through what the other
    refuses: a setting from the environment meets the same limit as the flag."""
    with pytest.raises(ValidationError, match="less than or equal to 64"):
        RunConfig(instance="ft06", workers=65)
    with pytest.raises(ValidationError, match="less than or equal to 100"):
        LlmSettings(max_retries=101)
    with pytest.raises(ValidationError, match="less than or equal to 2147483647"):
        OperatorConfig(ttl_after_success=2**31)
    with pytest.raises(ValidationError, match="less than or equal to 31536000"):
        LlmSettings(timeout=1e12)
    assert RunConfig(instance="ft06", workers=64, faults=100, feedback_rounds=50, disruptions=20).workers == 64


def test_seeds_past_the_last_one_are_refused_before_the_bench_starts(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "repair", "--suite", "ft06", "--first-seed", "2147483647", "--seeds", "2", "--out",
                 str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == ("alas: error: --first-seed 2147483647 with --seeds 2 runs past the last "
                                       "seed, 2147483647\n")
    assert not (tmp_path / "o").exists()


def test_the_operator_names_the_flag_of_a_refused_value(capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before any Kubernetes configuration is looked for (it used to print pydantic's traceback text)."""
    assert main(["operator", "--ttl-after-success", "-5", "--once"]) == 2
    assert capsys.readouterr().err == ("alas: error: --ttl-after-success: Input should be greater than or equal "
                                       "to 0\n")


def test_a_repair_service_with_no_repair_slot_is_refused(tmp_path: Path) -> None:
    """Zero slots would accept every disruption and never repair one (the request hangs)."""
    with pytest.raises(ValueError, match="max_concurrent must be at least 1"):
        RepairService(FsStore(tmp_path), max_concurrent=0)


def test_a_setting_given_as_a_flag_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "ft06", "--planner", "llm", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-temperature",
                 "3", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("alas: error: command line: invalid setting llm.temperature: Input should "
                                       "be less than or equal to 2\n")


def test_members_and_counts_parse_what_they_name() -> None:
    assert members("alas, single_agent", LlmVariant, "--variants") == [LlmVariant.ALAS, LlmVariant.SINGLE_AGENT]
    assert counts("10, 100", "--events") == [10, 100]
    with pytest.raises(InputError, match=r"--variants: unknown value 'nope'; known: alas, alas_no_repair"):
        members("alas,nope", LlmVariant, "--variants")
    with pytest.raises(InputError, match=r"--events: must be from 1 to 100000, got -3"):
        counts("10,-3", "--events")
    with pytest.raises(InputError, match=r"--events: must be from 1 to 100000, got 100001"):
        counts("100001", "--events")
    for bad in ("abc", "1.5", "", "10,,20"):
        with pytest.raises(InputError, match="--events: takes whole numbers"):
            counts(bad, "--events")
    # A repeat ran its rows twice and counted them twice in the tables.
    with pytest.raises(InputError, match=r"^--variants: alas given more than once$"):
        members("alas,single_agent, alas", LlmVariant, "--variants")
    with pytest.raises(InputError, match=r"^--events: 10 given more than once$"):
        counts("10,100,010", "--events")


@pytest.mark.parametrize(("argv", "needle"), [
    # Each was a ValueError traceback (exit 1) from an Enum or int() call on the raw entry.
    (["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--variants", "nope"],
     "--variants: unknown value 'nope'"),
    (["bench", "llm", "--disruptions", "breakdown", "--planner", "simulated", "--suite", "ft06", "--variants",
      "alas,zz"], "--variants: unknown value 'zz'"),
    (["bench", "ablation", "--suite", "ft06", "--variants", "q"], "--variants: unknown value 'q'; known: full"),
    (["bench", "open", "--events", "10,abc"], "--events: takes whole numbers such as 10,100, got 'abc'"),
    # 0 events ran a run of 4 (the least a run holds) and reported it as asked.
    (["bench", "open", "--events", "0"], "--events: must be from 1 to 100000, got 0"),
])
def test_a_bad_list_entry_exits_2_naming_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  argv: list[str], needle: str) -> None:
    out = ["--root", str(tmp_path / "s")] if argv[1] == "open" else ["--out", str(tmp_path / "o")]
    assert main([*argv, *out]) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize("command", [["run", "ft06"], ["smoke"]])  # not `step`: its templates say {{workflow.name}}
@pytest.mark.parametrize("value", ["", "../x", "a b"])
def test_a_run_id_is_checked_when_parsed(command: list[str], value: str, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # An empty --run-id (an unset shell variable) started a new run under a fresh id instead of resuming one.
    err = _refused_by_argparse([*command, "--run-id", value], tmp_path, monkeypatch, capsys)
    assert f"argument --run-id: invalid run id {value!r} (letters, digits" in err
