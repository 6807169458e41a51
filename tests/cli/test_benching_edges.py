"""`alas bench static` and `alas bench report` as commands: what they hand the benchmark, print and exit with.

The benchmarks themselves are tested in tests/benchmarks; here the solves and the log reads are replaced by
rows made up for the case (the command's own work is the flags, the lines it prints per row, the summary, the
exit code and where the tables go), so that every branch runs in milliseconds: a plain log when stderr is not a
terminal, a progress bar when it is, and JSON.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.progress import Progress, TaskID

from alas_argo.benchmarks import fanout
from alas_argo.benchmarks.fanout import CaseRow
from alas_argo.benchmarks.static import StaticRow
from alas_argo.bounds import MAX_WORKERS
from alas_argo.cli import benching, build_parser, main
from alas_argo.cli.benching import default_directory
from alas_argo.cli.progress import ProgressLines
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.log import ExecutionLog, FsStore

VALID = StaticRow("ft06", "6x6", 55, 55, 0.0, True, 0.25, "optimal", 55)
NO_BOUND = StaticRow("x1", "2x3", 12, None, None, True, 1.04, "feasible", 10)
INVALID = StaticRow("la01", "10x5", 700, 666, 5.1, False, 2.0, "feasible", 600)


class FakeStatic:
    """Stands in for `run_static`: records its arguments, reports one progress event per row, hands each row
    to ``on_row`` as it finishes."""

    def __init__(self, rows: list[StaticRow]) -> None:
        self.rows = rows
        self.calls: list[dict[str, Any]] = []

    def __call__(self, names: list[str], **kwargs: Any) -> list[StaticRow]:
        self.calls.append({"names": names, **kwargs})
        for row in self.rows:
            if kwargs.get("progress") is not None:
                kwargs["progress"](row.instance, ProgressEvent("cpsat", row.makespan + 1, 0, 0.1))
            if kwargs.get("on_row") is not None:
                kwargs["on_row"](row)
        return list(self.rows)


class RecordingLines(ProgressLines):
    """The plain progress lines, remembering what the heartbeat would name (it speaks only after 30 s)."""

    working: list[str] = []

    def working_on(self, label: str) -> None:
        RecordingLines.working.append(label)
        super().working_on(label)


@pytest.fixture
def fake_static(monkeypatch: pytest.MonkeyPatch) -> Callable[[list[StaticRow]], FakeStatic]:
    def install(rows: list[StaticRow]) -> FakeStatic:
        fake = FakeStatic(rows)
        monkeypatch.setattr(benching, "run_static", fake)
        return fake

    return install


def _tty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the captured stderr claim to be a terminal (the progress-bar branch)."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)


# --- alas bench static --------------------------------------------------------------------------------------


def test_every_flag_reaches_the_benchmark(tmp_path: Path, fake_static: Callable[[list[StaticRow]], FakeStatic],
                                          capsys: pytest.CaptureFixture[str]) -> None:
    fake = fake_static([VALID])
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "2.5", "--workers", "3", "--seed", "7",
                 "--method", "dispatch", "--out", str(tmp_path / "a")]) == 0
    assert main(["bench", "static", "--suite", "ft06", "--time-limit", "1", "--deterministic",
                 "--out", str(tmp_path / "b")]) == 0
    first, second = ({k: v for k, v in c.items() if k not in ("on_row", "progress")} for c in fake.calls)
    assert first == {"names": ["ft06", "la01"], "time_limit": 2.5, "workers": 3, "seed": 7, "method": "dispatch",
                     "deterministic": False}
    assert second == {"names": ["ft06"], "time_limit": 1.0, "workers": 2, "seed": 0, "method": "auto",
                      "deterministic": True}
    md = (tmp_path / "a" / "static.md").read_text().splitlines()
    assert md[0] == "# Static benchmark: ft06,la01, method dispatch, seed 7, 2.5 s per instance, 3 workers"
    # Without --deterministic, the command that reproduces the table says nothing about it.
    assert md[2] == ("Command: `alas bench static --suite ft06,la01 --time-limit 2.5 --workers 3 --seed 7 "
                     "--method dispatch`")


def test_the_plain_log_has_a_line_per_row_and_the_summary_and_exit_code_follow_validity(
        tmp_path: Path, fake_static: Callable[[list[StaticRow]], FakeStatic], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    RecordingLines.working = []
    monkeypatch.setattr(benching, "ProgressLines", RecordingLines)
    fake_static([VALID, NO_BOUND, INVALID])
    out = tmp_path / "o"
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "1", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    err = [line.split("] ", 1)[1] for line in captured.err.splitlines()]
    assert err == ["alas bench static: started (2 items)",
                   "alas bench static: 1/2 done, last: ft06 6x6 makespan 55 (+0.00%) valid 0.2 s",
                   "alas bench static: 2/2 done, last: x1 2x3 makespan 12 (?) valid 1.0 s",
                   "alas bench static: 3/2 done, last: la01 10x5 makespan 700 (+5.10%) INVALID 2.0 s",
                   "alas bench static: finished after 3/2 items"]
    # What a heartbeat during a long solve names: the instance, the phase and the incumbent.
    assert RecordingLines.working == ["ft06 (cpsat, incumbent 56)", "x1 (cpsat, incumbent 13)",
                                      "la01 (cpsat, incumbent 701)"]
    lines = captured.out.splitlines()
    # Mean gap over the rows with a bound: (0 + 5.1) / 2; one row of three invalid.
    assert lines == ["3 instances: mean gap 2.55%, valid 66.7%, 3.3 s",
                     f"tables: {out / 'static.csv'} {out / 'static.md'}"]
    # Each finished row is on disk as it comes (the partial table), then the final table replaces it.
    table = csv.DictReader((out / "static.csv").read_text().splitlines())
    assert [r["instance"] for r in table] == ["ft06", "x1", "la01"]


def test_without_any_upper_bound_the_mean_gap_is_na(tmp_path: Path,
                                                    fake_static: Callable[[list[StaticRow]], FakeStatic],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fake_static([NO_BOUND])
    assert main(["bench", "static", "--suite", "ft06", "--time-limit", "1", "--out", str(tmp_path / "o")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "1 instances: mean gap n/a, valid 100.0%, 1.0 s"


def test_json_on_a_terminal_gets_no_progress_and_still_keeps_every_row(
        tmp_path: Path, fake_static: Callable[[list[StaticRow]], FakeStatic], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _tty(monkeypatch)
    fake = fake_static([VALID, INVALID])
    out = tmp_path / "o"
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "1", "--workers", "4", "--seed", "2",
                 "--method", "dispatch", "--deterministic", "--out", str(out), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.err == ""
    call = fake.calls[0]
    assert call.get("progress") is None and call["on_row"] is not None
    assert {k: v for k, v in call.items() if k not in ("on_row", "progress")} == {
        "names": ["ft06", "la01"], "time_limit": 1.0, "workers": 4, "seed": 2, "method": "dispatch",
        "deterministic": True}
    doc = json.loads(captured.out)
    assert [r["instance"] for r in doc["rows"]] == ["ft06", "la01"] and doc["summary"]["valid_rate"] == 0.5
    assert doc["csv"] == str(out / "static.csv") and doc["markdown"] == str(out / "static.md")


def test_a_terminal_gets_a_progress_bar_and_a_line_per_row(
        tmp_path: Path, fake_static: Callable[[list[StaticRow]], FakeStatic], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _tty(monkeypatch)
    fake = fake_static([VALID, NO_BOUND, INVALID])
    assert main(["bench", "static", "--suite", "ft06", "--time-limit", "3", "--workers", "5", "--seed", "9",
                 "--method", "dispatch", "--out", str(tmp_path / "o")]) == 1
    call = fake.calls[0]
    assert call["progress"] is not None and call["on_row"] is not None
    assert {k: v for k, v in call.items() if k not in ("on_row", "progress")} == {
        "names": ["ft06"], "time_limit": 3.0, "workers": 5, "seed": 9, "method": "dispatch",
        "deterministic": False}
    captured = capsys.readouterr()
    err = captured.err
    # The bar and the rows go to stderr; stdout has the summary alone.
    assert captured.out.splitlines()[0] == "3 instances: mean gap 2.55%, valid 66.7%, 3.3 s"
    assert len(captured.out.splitlines()) == 2
    assert "ft06 6x6: 55 (+0.00%) valid 0.2 s" in err
    assert "x1 2x3: 12 (?) valid 1.0 s" in err
    assert "la01 10x5: 700 (+5.10%) INVALID 2.0 s" in err
    assert (tmp_path / "o" / "static.csv").read_text().count("\n") == 4  # the header and the three rows


def test_the_progress_bar_follows_the_rows_and_names_the_incumbent(
        tmp_path: Path, fake_static: Callable[[list[StaticRow]], FakeStatic], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _tty(monkeypatch)
    seen: list[tuple[str, Any]] = []

    real_add, real_update, real_advance = Progress.add_task, Progress.update, Progress.advance

    def add_task(self: Progress, description: str, **kwargs: Any) -> TaskID:
        seen.append(("add", (description, kwargs.get("total"))))
        return real_add(self, description, **kwargs)

    def update(self: Progress, task: TaskID, **kwargs: Any) -> None:
        if "description" in kwargs:
            seen.append(("update", kwargs["description"]))
        real_update(self, task, **kwargs)

    def advance(self: Progress, task: TaskID, advance: float = 1) -> None:
        seen.append(("advance", advance))
        real_advance(self, task, advance)

    monkeypatch.setattr(Progress, "add_task", add_task)
    monkeypatch.setattr(Progress, "update", update)
    monkeypatch.setattr(Progress, "advance", advance)
    fake_static([VALID, INVALID])
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "1", "--out", str(tmp_path / "o")]) == 1
    assert seen == [("add", ("starting", 2)), ("update", "ft06 (cpsat) incumbent 56"), ("advance", 1),
                    ("update", "la01 (cpsat) incumbent 701"), ("advance", 1)]


def test_without_out_the_tables_go_under_bench_results(tmp_path: Path,
                                                       fake_static: Callable[[list[StaticRow]], FakeStatic],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    fake_static([VALID])
    assert main(["bench", "static", "--suite", "ft06", "--time-limit", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    directory = Path(doc["csv"]).parent
    assert directory.parent == Path("bench/results") and directory.name.startswith("static-ft06-")
    assert (tmp_path / doc["csv"]).exists()


def test_the_default_directory_is_path_safe_short_and_named_after_its_kind() -> None:
    now = datetime(2026, 12, 7, 1, 2, 3, tzinfo=UTC)
    assert default_directory("a b/c..d", now) == Path("bench/results/static-a_b_c..d-20261207T010203Z")
    assert default_directory("TA,Abz_5", now).name == "static-TA_Abz_5-20261207T010203Z"
    assert default_directory("run-1", now, kind="fanout") == Path("bench/results/fanout-run-1-20261207T010203Z")
    # Sixty characters of the name at most.
    assert default_directory("x" * 61 + "y", now).name == f"static-{'x' * 60}-20261207T010203Z"
    # Without a time: now, in UTC.
    before = datetime.now(UTC).replace(microsecond=0)
    stamp = datetime.strptime(default_directory("s").name.split("-")[-1], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)


# --- alas bench report --------------------------------------------------------------------------------------


def _case(run_id: str, status: str = "succeeded", valid: bool = True, problem: str | None = None,
          gap: float | None = 1.5) -> CaseRow:
    _, name, scenario, seed = run_id.split(".")
    return CaseRow(run_id=run_id, instance=name, scenario=scenario, seed=int(seed), status=status,
                   makespan_before=60, makespan_after=62, upper_bound=55, gap_percent=gap, moved_operations=3,
                   repair_method="lcrp", repair_seconds=0.5, final_valid=valid, seconds=4.0, problem=problem)


@pytest.fixture
def fake_cases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[[list[CaseRow]], None]:
    """The fan-out's case runs and their rows, as `fanout` would read them from the log."""
    def install(rows: list[CaseRow]) -> None:
        by_id = {r.run_id: r for r in rows}
        monkeypatch.setattr(fanout, "case_run_ids", lambda store, run: list(by_id))
        monkeypatch.setattr(fanout, "case_row", lambda log: by_id[log.run_id])
        for root in (tmp_path / "s", tmp_path / "store"):  # the stores the tests name (`--root`) exist
            root.mkdir(exist_ok=True)

    return install


def test_report_names_every_failed_case_with_its_problem(tmp_path: Path, fake_cases: Callable[[list[CaseRow]], None],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    fake_cases([_case("f.ft06.none.0"), _case("f.ft06.shock.0", status="failed", valid=True, gap=None),
                _case("f.la01.none.1", valid=False, gap=None),
                _case("f.la01.shock.1", status="unreadable", valid=False, problem="IntegrityError: seq", gap=None)])
    out = tmp_path / "r"
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(out)]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].split("  ")[0] == "scenario"
    assert [c for c in lines[0].split("  ") if c] == ["scenario", "cases", "succeeded", "valid", "mean gap %",
                                                      "median moved", "median repair s", "median s"]
    assert lines[1].split() == ["none", "2", "2", "1", "1.5", "3.0", "0.5", "4.0"]
    # A summary with no gap shows "-", never "None".
    assert lines[2].split() == ["shock", "2", "0", "1", "-", "3.0", "0.5", "4.0"]
    assert "None" not in captured.out
    assert lines[4:7] == ["f.ft06.shock.0: failed, valid plan", "f.la01.none.1: succeeded, no valid plan",
                          "f.la01.shock.1: unreadable, no valid plan (IntegrityError: seq)"]
    assert lines[7] == f"tables: {out / 'cases.csv'} {out / 'cases.md'}; chart: {out / 'cases.png'}"
    assert (out / "cases.md").read_text().startswith("# Benchmark fan-out f: 4 cases")
    assert len(lines) == 8
    err = [line.split("] ", 1)[1] for line in captured.err.splitlines()]
    assert err[0] == "alas bench report: started (4 items)"
    assert "alas bench report: 4/4 done, last: f.la01.shock.1 unreadable (no valid plan)" in err
    assert err[-1] == "alas bench report: finished after 4/4 items"


def test_report_without_failures_exits_0_and_lists_none(tmp_path: Path, fake_cases: Callable[[list[CaseRow]], None],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    fake_cases([_case("f.ft06.none.0"), _case("f.ft06.shock.0")])
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(tmp_path / "r")]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 5  # header, three summaries, the tables
    assert "2/2 done, last: f.ft06.shock.0 succeeded\n" in captured.err


def test_report_lists_twenty_failures_and_counts_the_rest(tmp_path: Path,
                                                          fake_cases: Callable[[list[CaseRow]], None],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    fake_cases([_case(f"f.ft06.none.{k}", status="failed") for k in range(23)])
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(tmp_path / "r")]) == 1
    lines = capsys.readouterr().out.splitlines()
    listed = [line for line in lines if line.startswith("f.ft06.none.")]
    assert len(listed) == 20 and listed[-1] == "f.ft06.none.19: failed, valid plan"
    assert "... and 3 more (cases.csv lists them all)" in lines


def test_report_with_twenty_one_failures_counts_the_one_it_leaves_out(
        tmp_path: Path, fake_cases: Callable[[list[CaseRow]], None], capsys: pytest.CaptureFixture[str]) -> None:
    fake_cases([_case(f"f.ft06.none.{k}", status="failed") for k in range(21)])
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(tmp_path / "r")]) == 1
    out = capsys.readouterr().out
    assert out.count(": failed, valid plan") == 20 and "... and 1 more (cases.csv lists them all)" in out


def test_report_with_exactly_twenty_failures_lists_them_all(tmp_path: Path,
                                                            fake_cases: Callable[[list[CaseRow]], None],
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    fake_cases([_case(f"f.ft06.none.{k}", status="failed") for k in range(20)])
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(tmp_path / "r")]) == 1
    out = capsys.readouterr().out
    assert "more (cases.csv" not in out and out.count(": failed, valid plan") == 20


def test_report_json_exits_1_for_a_case_without_a_valid_plan(tmp_path: Path,
                                                             fake_cases: Callable[[list[CaseRow]], None],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    fake_cases([_case("f.ft06.none.0"), _case("f.ft06.none.1", valid=False)])
    out = tmp_path / "r"
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(out), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"] == "f" and [s["scenario"] for s in doc["summary"]] == ["none", "all"]
    assert doc["summary"][0]["valid"] == 1 and [r["final_valid"] for r in doc["rows"]] == [True, False]
    assert (doc["csv"], doc["markdown"], doc["chart"]) == (str(out / "cases.csv"), str(out / "cases.md"),
                                                          str(out / "cases.png"))
    fake_cases([_case("f.ft06.none.0")])
    assert main(["bench", "report", "f", "--root", str(tmp_path / "s"), "--out", str(out), "--json"]) == 0


def test_report_without_out_goes_under_bench_results_named_fanout(tmp_path: Path,
                                                                  fake_cases: Callable[[list[CaseRow]], None],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    fake_cases([_case("fan-2.ft06.none.0")])
    assert main(["bench", "report", "fan-2", "--root", "store", "--json"]) == 0
    csv_path = Path(json.loads(capsys.readouterr().out)["csv"])
    assert csv_path.parent.parent == Path("bench/results") and csv_path.parent.name.startswith("fanout-fan-2-")
    assert csv_path.exists()


def test_each_case_is_read_from_its_own_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    logs: list[ExecutionLog] = []

    def row(log: ExecutionLog) -> CaseRow:
        logs.append(log)
        return _case(log.run_id)

    monkeypatch.setattr(fanout, "case_run_ids", lambda store, run: [f"{run}.ft06.none.0", f"{run}.la01.none.0"])
    monkeypatch.setattr(fanout, "case_row", row)
    (tmp_path / "s").mkdir()
    assert main(["bench", "report", "g", "--root", str(tmp_path / "s"), "--out", str(tmp_path / "r"), "--json"]) == 0
    assert sorted(log.run_id for log in logs) == ["g.ft06.none.0", "g.la01.none.0"]
    assert all(isinstance(log.store, FsStore) and log.store.root == tmp_path / "s" for log in logs)


def test_bench_static_is_stoppable() -> None:
    """`main` turns SIGINT and SIGTERM into a clean stop (exit 130, the finished rows kept) for stoppable commands
    only: a plan of a whole suite is one."""
    argv = ["bench", "static", "--suite", "ft06"]
    assert build_parser(argv).parse_args(argv).stoppable is True


def test_bench_static_defaults_are_the_documented_ones() -> None:
    argv = ["bench", "static"]
    parsed = build_parser(argv).parse_args(argv)
    assert (parsed.suite, parsed.time_limit, parsed.workers, parsed.seed, parsed.method, parsed.deterministic,
            parsed.out, parsed.json) == ("alas45", 60.0, 2, 0, "auto", False, None, False)


@pytest.mark.parametrize(("flag", "value"), [("--workers", "0"), ("--workers", str(MAX_WORKERS + 1)),
                                             ("--method", "fastest")])
def test_bench_static_refuses_workers_out_of_range_and_unknown_methods(
        flag: str, value: str, fake_static: Callable[[list[StaticRow]], FakeStatic],
        capsys: pytest.CaptureFixture[str]) -> None:
    fake = fake_static([VALID])
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "static", "--suite", "ft06", flag, value, "--out", "o"])
    assert stopped.value.code == 2 and f"argument {flag}:" in capsys.readouterr().err and fake.calls == []


def test_bench_static_takes_workers_at_both_ends(tmp_path: Path,
                                                 fake_static: Callable[[list[StaticRow]], FakeStatic]) -> None:
    fake = fake_static([VALID])
    for workers in (1, MAX_WORKERS):
        assert main(["bench", "static", "--suite", "ft06", "--workers", str(workers), "--time-limit", "1",
                     "--out", str(tmp_path / str(workers)), "--json"]) == 0
    assert [c["workers"] for c in fake.calls] == [1, MAX_WORKERS]
