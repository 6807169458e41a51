"""`alas disrupt`, `alas repair`, `alas gantt` (alas_argo/cli/repairing.py), edge by edge: every flag reaches the
library (checked against the library's own draw or the result's recorded limits), `--json` prints the result that
was written, the human lines carry the result's figures, and a bad flag or file is one line naming it, exit 2,
nothing written. Written against the survivors of a mutation run (bench/README.md, "Mutation testing")."""

from __future__ import annotations

import contextlib
import io
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

import alas_argo.cli.repairing as repairing_cli
from alas_argo.benchmarks.repair import rerun_command
from alas_argo.benchmarks.repair_report import from_csv, lcrp_ratios, merge_tables, size_ratios, summarize, to_csv
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, generate_disruption
from alas_argo.jssp.disruption_families import generate_family
from alas_argo.jssp.repair import RepairResult
from alas_argo.jssp.schedule import Schedule
from alas_argo.seeds import MAX_SEED

FT06 = get_instance("ft06")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "s.json").write_text(json.dumps(dispatch(FT06, "mwkr").to_json()))
    return tmp_path


def _plan(files: Path) -> Schedule:
    return Schedule.model_validate_json((files / "s.json").read_text())


def _written(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def _disrupt(files: Path, *flags: str) -> dict[str, Any]:
    assert main(["disrupt", "ft06", "--schedule", str(files / "s.json"), *flags, "--out", str(files / "d.json")]) == 0
    return _written(files / "d.json")


# --- alas disrupt -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 3])
def test_a_family_is_drawn_with_the_seed_given(files: Path, capsys: pytest.CaptureFixture[str], seed: int) -> None:
    # The file is the library's draw for that seed: a dropped --seed drew seed 0's disruption for every seed.
    got = _disrupt(files, "--family", "mixture", "--seed", str(seed))
    assert got == generate_family(FT06, _plan(files), "mixture", seed=seed).to_json()
    assert _disrupt(files, "--family", "mixture", "--seed", "0") != _disrupt(files, "--family", "mixture",
                                                                            "--seed", "3")
    capsys.readouterr()


@pytest.mark.parametrize(("flags", "expected"), [
    # Each flag that shapes a draw, set away from its default, gives the library's draw with that value.
    (["--seed", "5"], {"seed": 5}),
    (["--machine", "random", "--seed", "4"], {"machine": "random", "seed": 4}),
    (["--machine", "3", "--length", "0.2", "--at", "0.4"], {"machine": 3, "length": 0.2, "at": 0.4}),
    (["--kind", "shock", "--increase", "0.9", "--share", "0.5", "--seed", "2"],
     {"increase": 0.9, "share": 0.5, "seed": 2}),
    (["--kind", "shock", "--increase", "0.1", "--increase-max", "1.5", "--share", "0.5", "--seed", "2"],
     {"increase": 0.1, "increase_max": 1.5, "share": 0.5, "seed": 2}),
])
def test_every_flag_of_a_draw_reaches_the_generator(files: Path, capsys: pytest.CaptureFixture[str],
                                                    flags: list[str], expected: dict[str, Any]) -> None:
    kind = flags[flags.index("--kind") + 1] if "--kind" in flags else "breakdown"
    defaults: dict[str, Any] = {"seed": 0, "machine": None, "at": None, "length": None, "increase": 0.3,
                                "share": 0.2, "machines": 1, "increase_max": None}
    want = generate_disruption(FT06, _plan(files), kind, **{**defaults, **expected}).to_json()
    assert _disrupt(files, *flags) == want
    # And the flag made a difference here, so the comparison above could fail.
    assert want != generate_disruption(FT06, _plan(files), kind, **defaults).to_json()
    capsys.readouterr()


def test_a_random_machine_is_drawn_from_the_seed(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    machines = {Disruption.model_validate(_disrupt(files, "--machine", "random", "--seed", str(s))).breakdowns[0]
                .machine for s in range(6)}
    assert len(machines) > 1  # not one fixed machine: 'random' was honoured, not read as a number
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("value", ["x", "Random", "2.5"])
def test_a_machine_that_is_no_number_is_refused_by_name(files: Path, capsys: pytest.CaptureFixture[str],
                                                         value: str) -> None:
    assert main(["disrupt", "ft06", "--schedule", str(files / "s.json"), "--machine", value,
                 "--out", str(files / "d.json")]) == 2
    assert capsys.readouterr().err == f"alas: error: --machine must be a machine number or 'random', got {value!r}\n"
    assert not (files / "d.json").exists()


def test_kind_and_family_together_is_one_exact_line(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["disrupt", "ft06", "--schedule", str(files / "s.json"), "--kind", "shock", "--family", "mixture",
                 "--out", str(files / "d.json")]) == 2
    assert capsys.readouterr().err == ("alas: error: give one of --kind and --family, not both: a family draws the "
                                       "kind too\n")


def test_the_disrupt_line_names_each_event(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A mixed draw: the breakdown and the shock joined by "; ", the count of two in the plural.
    d = Disruption.model_validate(_disrupt(files, "--kind", "mixed", "--seed", "1"))
    assert len(d.breakdowns) == 1 and len(d.duration_changes) == 2
    b = d.breakdowns[0]
    assert capsys.readouterr().out == (f"mixed revealed at {d.time}: machine {b.machine} down [{b.start}, {b.end}); "
                                       f"2 operations take longer -> {files / 'd.json'}\n")


def test_the_disrupt_line_names_the_default_kind(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Neither --kind nor --family draws a breakdown; the line said "None revealed at ..." before the fix.
    d = Disruption.model_validate(_disrupt(files, "--machine", "2"))
    b = d.breakdowns[0]
    assert capsys.readouterr().out == (f"breakdown revealed at {d.time}: machine 2 down [{b.start}, {b.end}) -> "
                                       f"{files / 'd.json'}\n")


# --- alas repair --------------------------------------------------------------------------------------------------


def _repair(files: Path, *flags: str) -> int:
    return main(["repair", "ft06", "--schedule", str(files / "s.json"), "--disruption", str(files / "d.json"),
                 *flags, "--out", str(files / "r.json")])


def test_every_repair_flag_reaches_the_library(files: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _disrupt(files, "--kind", "shock", "--seed", "1")
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    real = repairing_cli.repair

    def spy(*args: Any, **kwargs: Any) -> RepairResult:
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(repairing_cli, "repair", spy)
    assert _repair(files, "--method", "lcrp", "--time-limit", "3", "--seed", "7", "--workers", "3", "--effort", "2",
                   "--tolerance", "0.01", "--streams", "2", "--first-edit", "tabu", "--wall-clock") == 0
    (args, kwargs), = calls
    assert args[0] is FT06 or args[0].name == "ft06"
    assert args[1] == _plan(files) and args[2] == Disruption.model_validate(_written(files / "d.json"))
    assert args[3] == "lcrp"
    assert kwargs == {"budget": 3.0, "seed": 7, "workers": 3, "effort": 2.0, "tolerance": 0.01,
                      "deterministic": False, "streams": 2, "first_edit": "tabu"}
    capsys.readouterr()


@pytest.mark.parametrize(("flags", "deterministic", "workers"), [
    ([], True, 1),  # the default: CP-SAT deterministic time on one worker
    (["--wall-clock", "--workers", "3"], False, 3),
    (["--wall-clock", "--workers", "1"], False, 1),
])
def test_the_clock_and_workers_are_the_ones_asked_for(files: Path, capsys: pytest.CaptureFixture[str],
                                                      flags: list[str], deterministic: bool, workers: int) -> None:
    _disrupt(files, "--kind", "shock", "--seed", "1")
    assert _repair(files, "--method", "aor", "--time-limit", "1", *flags) == 0
    limits = _written(files / "r.json")["limits"]
    assert limits["deterministic"] is deterministic and limits["search_workers"] == workers
    capsys.readouterr()


def test_json_prints_the_result_that_was_written(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _disrupt(files, "--kind", "mixed", "--seed", "1")
    capsys.readouterr()
    assert _repair(files, "--method", "full", "--time-limit", "1", "--json") == 0
    printed = json.loads(capsys.readouterr().out)
    written = _written(files / "r.json")
    # The metrics printed are the ones in R.json, every one of them; R.json adds only the plan itself.
    assert set(written) - set(printed) == {"instance", "operations"}
    assert printed == {k: v for k, v in written.items() if k in printed}
    assert printed["valid"] is True and printed["method"] == "full"


def _lines(files: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[list[str], dict[str, Any]]:
    assert _repair(files, *flags) == 0
    return capsys.readouterr().out.splitlines(), _written(files / "r.json")


def test_the_repair_lines_carry_the_results_figures(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _disrupt(files, "--kind", "shock", "--share", "0.15", "--seed", "3")
    capsys.readouterr()
    # A full re-solve here ends earlier than the plan in force did: the change is printed with its minus sign.
    lines, r = _lines(files, capsys, "--method", "full", "--time-limit", "1")
    assert r["makespan"] < r["baseline_makespan"] and r["global_reason"]
    assert lines == [
        f"full on ft06: makespan {r['baseline_makespan']} -> {r['makespan']} "
        f"({r['makespan'] - r['baseline_makespan']:+d}), valid",
        f"  moved {r['moved_operations']} operations, total shift {r['total_start_shift']}, "
        f"work in progress reordered {r['wip_moved']}",
        f"  edit radius {r['edit_radius']} operations on {len(r['edit_machines'])} machines, "
        f"{r['neighbourhood_growths']} growths, fallback no, {r['seconds']:.3f} s",
        f"  touched {r['moved_operations']} operations on {len(r['touched_machines'])} machines "
        f"({len(r['resequenced_machines'])} re-sequenced); global: {r['global_reason']}",
        f"  -> {files / 'r.json'}",
    ]


def test_a_local_repair_says_so_and_a_fallback_says_yes(files: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _disrupt(files, "--kind", "shock", "--seed", "1")
    capsys.readouterr()
    lines, r = _lines(files, capsys, "--method", "aor", "--time-limit", "1")
    assert r["global_reason"] is None and r["fallback"] is False
    assert ", fallback no, " in lines[2] and lines[3].endswith(" re-sequenced); stayed local")
    # A fallback is rare on a real case: the real result with the flag set, as LCRP reports one.
    real = repairing_cli.repair

    def fell_back(*args: Any, **kwargs: Any) -> RepairResult:
        return real(*args, **kwargs).model_copy(update={"fallback": True})

    monkeypatch.setattr(repairing_cli, "repair", fell_back)
    lines, r = _lines(files, capsys, "--method", "aor", "--time-limit", "1")
    assert r["fallback"] is True and ", fallback yes, " in lines[2]


# --- alas gantt ---------------------------------------------------------------------------------------------------


def test_gantt_draws_the_before_plan_the_disruption_and_the_title(files: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _disrupt(files, "--kind", "shock", "--seed", "1")
    assert _repair(files, "--method", "aor", "--time-limit", "1") == 0
    capsys.readouterr()
    seen: list[dict[str, Any]] = []
    real = repairing_cli.save_gantt

    def spy(*args: Any, **kwargs: Any) -> Path:
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(repairing_cli, "save_gantt", spy)
    out = files / "g.html"
    assert main(["gantt", "ft06", "--schedule", str(files / "r.json"), "--before", str(files / "s.json"),
                 "--disruption", str(files / "d.json"), "--title", "after the shock", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"gantt -> {out}\n"
    assert seen == [{"before": _plan(files), "disruption": Disruption.model_validate(_written(files / "d.json")),
                     "title": "after the shock"}]
    assert "after the shock" in out.read_text(encoding="utf-8")


def test_gantt_names_a_missing_before_plan_as_the_baseline(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gantt", "ft06", "--schedule", str(files / "s.json"), "--before", str(files / "nope.json"),
                 "--out", str(files / "g.png")]) == 2
    assert capsys.readouterr().err == f"alas: error: {files / 'nope.json'}: baseline file not found\n"
    assert not (files / "g.png").exists()


# --- alas bench repair --------------------------------------------------------------------------------------------

BENCH = ["bench", "repair", "--suite", "ft06", "--time-limit", "0.3", "--baseline-time-limit", "0.5"]


@dataclass
class BenchRun:
    out: Path
    totals: list[int]
    stdout: str
    rc: int


def _bench(out: Path, *flags: str) -> BenchRun:
    """One `alas bench repair` run with the progress total it announced (the real progress, only watched)."""
    totals: list[int] = []
    real = repairing_cli.run_with_progress

    def watched(run: Any, *, total: int, **kwargs: Any) -> Any:
        totals.append(total)
        return real(run, total=total, **kwargs)

    buffer = io.StringIO()
    with pytest.MonkeyPatch.context() as m, contextlib.redirect_stdout(buffer):
        m.setattr(repairing_cli, "run_with_progress", watched)
        rc = main([*BENCH, *flags, "--out", str(out)])
    return BenchRun(out, totals, buffer.getvalue(), rc)


# Function-scoped on purpose: mutmut maps a mutant to the tests that ran its code, and a module-scoped fixture's
# run would count for the first test that used it only.
@pytest.fixture
def eight_cases(tmp_path: Path) -> BenchRun:
    # Two scenarios, AOR, full and LCRP at two efforts: 2 x (3 methods + 1 more effort) = 8 repairs.
    return _bench(tmp_path / "eight", "--scenarios", "breakdown,shock", "--seeds", "1", "--methods", "aor,lcrp,full",
                  "--lcrp-effort", "1,2", "--lcrp-tolerance", "0.01", "--deterministic")


@pytest.fixture
def one_case(tmp_path: Path) -> BenchRun:
    return _bench(tmp_path / "one", "--scenarios", "breakdown", "--seeds", "1", "--first-seed", "2", "--methods",
                  "aor", "--json")


def test_the_progress_counts_every_repair_of_the_run(eight_cases: BenchRun, one_case: BenchRun) -> None:
    for run, n in ((eight_cases, 8), (one_case, 1)):
        assert run.rc == 0
        rows = from_csv((run.out / "repair.csv").read_text(encoding="utf-8"))
        assert run.totals == [n] and len(rows) == n


def test_the_report_title_names_every_setting(eight_cases: BenchRun, one_case: BenchRun) -> None:
    md = (eight_cases.out / "repair.md").read_text(encoding="utf-8").splitlines()
    assert md[0] == ("# Repair benchmark: ft06, scenarios breakdown,shock, 1 seeds from 0, 0.3 s budget "
                     "(deterministic), lcrp effort 1,2, makespan tolerance 0.01")
    rows = from_csv((eight_cases.out / "repair.csv").read_text(encoding="utf-8"))
    rerun = rerun_command(str(eight_cases.out), rows[0], time_limit=0.3, deterministic=True)
    assert md[2] == f"Rerun one row alone: `{rerun}`" and "--wall-clock" not in rerun
    # Wall time and no tolerance: neither is claimed; the rerun says --wall-clock.
    md = (one_case.out / "repair.md").read_text(encoding="utf-8").splitlines()
    assert md[0] == "# Repair benchmark: ft06, scenarios breakdown, 1 seeds from 2, 0.3 s budget, lcrp effort 1"
    row, = from_csv((one_case.out / "repair.csv").read_text(encoding="utf-8"))
    rerun = rerun_command(str(one_case.out), row, time_limit=0.3, deterministic=False)
    assert md[2] == f"Rerun one row alone: `{rerun}`"
    assert f"--schedule {one_case.out}/baselines/ft06.json" in md[2] and "--wall-clock" in md[2]


def test_json_names_the_outputs_and_the_valid_rate(one_case: BenchRun) -> None:
    doc = json.loads(one_case.stdout)
    assert doc["valid_rate"] == 1.0  # one valid row of one, not 1/2
    assert doc["outputs"] == [str(one_case.out / n) for n in ("repair.csv", "repair.md", "pareto-breakdown.png")]
    assert all(Path(p).is_file() for p in doc["outputs"])


def test_the_report_lines_from_an_earlier_csv(eight_cases: BenchRun, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # Two files merged, the second measuring one case again and finding it invalid (as a broken method would):
    # the lines are those of the merged rows, the rate below 100 % and the exit 1.
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    text = (eight_cases.out / "repair.csv").read_text(encoding="utf-8")
    a.write_text(text, encoding="utf-8")
    b.write_text(to_csv([replace(from_csv(text)[0], valid=False)]), encoding="utf-8")
    out = tmp_path / "again"
    assert main(["bench", "repair", "--from-csv", f"{a},{b}", "--out", str(out)]) == 1
    rows, _ = merge_tables([(str(a), from_csv(text)), (str(b), from_csv(b.read_text(encoding="utf-8")))])
    assert len(rows) == 8 and sum(not r.valid for r in rows) == 1
    paths = [out / n for n in ("repair.csv", "repair.md", "pareto-breakdown.png", "pareto-shock.png")]
    expected = ["8 repairs, valid 87.5%"]
    expected += [f"  {s.scenario:<9} {s.method:<11} makespan/baseline {s.mean_makespan_ratio:.4f}  "
                 f"moved {s.mean_moved:6.1f}  median {s.median_seconds:.3f} s  valid {100 * s.valid_rate:.0f}%"
                 for s in summarize(rows)]
    expected.append("lcrp against (makespan ratio, moved ratio, time ratio):")
    expected += [f"  {x.lcrp:<7} {x.scenario:<9} vs {x.against:<11} {x.makespan_ratio:.4f}  {x.moved_ratio:.3f}  "
                 f"{x.time_ratio:.3f}  not worse {x.not_worse}/{x.cases}" for x in lcrp_ratios(rows)]
    expected.append("lcrp against full by instance size (makespan ratio, moved ratio, lcrp median seconds):")
    expected += [f"  {z.lcrp:<7} {z.size:<7} {z.cases:3} cases  {z.makespan_ratio:.4f}  {z.moved_ratio:.3f}  "
                 f"{z.median_seconds:.3f} s" for z in size_ratios(rows)]
    expected.append("outputs: " + " ".join(str(p) for p in paths))
    captured = capsys.readouterr()
    assert lcrp_ratios(rows) and size_ratios(rows) and captured.out.splitlines() == expected
    assert any(line.endswith("valid 0%") for line in expected)
    assert (out / "repair.md").read_text(encoding="utf-8").splitlines()[0] == (
        "# Repair benchmark (re-rendered from a.csv, b.csv)")


def test_a_bad_csv_is_named_by_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("just,a,table\n1,2,3\n", encoding="utf-8")
    assert main(["bench", "repair", "--from-csv", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith(f"alas: error: {bad}: not a repair benchmark table")


def test_a_csv_that_is_not_utf8_is_named_by_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A UnicodeDecodeError traceback before (found by a fuzz of the commands' flags).
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"instance,\xe6\xff\n")
    assert main(["bench", "repair", "--from-csv", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"alas: error: {bad}: --from-csv: not UTF-8 text (byte 9)\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--first-seed", str(MAX_SEED), "--seeds", "2"],
     f"--first-seed {MAX_SEED} with --seeds 2 runs past the last seed, {MAX_SEED}"),
])
def test_a_bad_bench_flag_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                flags: list[str], message: str) -> None:
    assert main([*BENCH, *flags, "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"alas: error: {message}\n"
    assert not (tmp_path / "o").exists()


def test_the_last_seed_itself_may_be_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Seeds MAX_SEED..MAX_SEED pass the seed check: the run goes on to the next check (an unknown scenario here).
    assert main([*BENCH, "--first-seed", str(MAX_SEED), "--seeds", "1", "--scenarios", "nosuch",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "nosuch" in err and "last seed" not in err
