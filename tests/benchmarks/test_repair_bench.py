"""The repair benchmark on a tiny run: rows for every method, ratios, tables, plots, cached baselines."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from alas_argo.benchmarks.repair import RepairRow, is_lcrp, lcrp_label, rerun_command, run_repair_bench
from alas_argo.benchmarks.repair_report import from_csv, lcrp_ratios, summarize, to_csv, write_outputs
from alas_argo.cli import main
from alas_argo.errors import InputError
from alas_argo.jssp.repair import RepairMethod
from alas_argo.jssp.repair.tabu import KERNEL, FirstEdit, kernel

#: The first edit the bench's LCRP rows run at the defaults: the tabu search, when it is built.
RAN = FirstEdit.TABU if kernel() is not None else FirstEdit.REDISPATCH


def label(effort: float = 1.0, tolerance: float = 0.0) -> str:
    """An LCRP row's name at the default first edit (``lcrp+tabu``, ``lcrp@3+tabu``)."""
    return lcrp_label(effort, tolerance, RAN)


def test_run_summarize_and_write(tmp_path: Path) -> None:
    seen: list[RepairRow] = []
    rows = run_repair_bench(["ft06"], scenarios=["breakdown", "shock"], seeds=2, time_limit=0.3,
                            baseline_time_limit=0.5, workers=1, cache=tmp_path / "baselines", on_row=seen.append)
    assert len(rows) == len(seen) == 2 * 2 * len(RepairMethod)
    assert all(r.valid and not r.error for r in rows)
    assert (tmp_path / "baselines" / "ft06.json").exists()
    by_case: dict = {}
    for r in rows:
        by_case.setdefault((r.scenario, r.seed), {})[r.method] = r
    for methods in by_case.values():  # same disruption, same baseline for every method
        assert len({m.baseline_makespan for m in methods.values()}) == 1
        assert methods[label()].makespan <= methods["aor"].makespan <= methods["right-shift"].makespan
    summary = summarize(rows)
    assert {(s.scenario, s.method) for s in summary} == {(sc, label() if m is RepairMethod.LCRP else m.value)
                                                         for sc in ("breakdown", "shock") for m in RepairMethod}
    ratios = lcrp_ratios(rows)
    vs_aor = next(x for x in ratios if x.scenario == "all" and x.against == "aor")
    assert vs_aor.cases == 4 and vs_aor.makespan_ratio <= 1.0 and vs_aor.not_worse == 4
    assert to_csv(rows).count("\n") == len(rows) + 1
    paths = write_outputs(rows, tmp_path, title="t")
    names = {p.name for p in paths}
    assert names == {"repair.csv", "repair.md", "pareto-breakdown.png", "pareto-shock.png"}
    assert "LCRP against each method" in (tmp_path / "repair.md").read_text()


def test_unknown_scenario() -> None:
    with pytest.raises(InputError, match="unknown scenario"):
        run_repair_bench(["ft06"], scenarios=["meteor"], seeds=1)


def test_cli_bench_repair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    rc = main(["bench", "repair", "--suite", "ft06", "--scenarios", "mixed", "--seeds", "1", "--methods",
               "aor,lcrp", "--time-limit", "0.3", "--baseline-time-limit", "0.5", "--out", str(out), "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid_rate"] == 1.0
    assert [x["against"] for x in doc["lcrp_ratios"]] == ["aor", "aor"]
    assert (out / "repair.csv").exists() and (out / "pareto-mixed.png").exists()


@pytest.mark.parametrize(("argv", "needle"), [
    (["--scenarios", "flood"], "unknown scenario 'flood'"),
    (["--methods", "aor,teleport"], "unknown repair method 'teleport'"),
    (["--lcrp-effort", "0"], "effort must be in (0, 100], got 0"),
    (["--lcrp-tolerance", "0.5"], "tolerance must be in [0, 0.1]"),
    # Each repeat ran its rows twice and counted them twice in every mean.
    (["--scenarios", "shock,breakdown,shock"], "scenario shock given more than once"),
    (["--methods", "lcrp,aor,lcrp"], "method lcrp given more than once"),
    (["--lcrp-effort", "2,1,2.0"], "LCRP effort 2 given more than once"),
    (["--suite", "ft06,la01,ft06"], "ft06 listed more than once"),
])
def test_a_refused_bench_argument_comes_before_any_progress_or_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str) -> None:
    # An unknown scenario or a zero effort printed "stopped after 0/15 items" and left an empty repair.csv.
    out = tmp_path / "bench"
    assert main(["bench", "repair", "--suite", "ft06", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "stopped after" not in err and "items" not in err
    assert not out.exists()


def test_several_lcrp_efforts_share_the_baselines(tmp_path: Path) -> None:
    rows = run_repair_bench(["ft06"], scenarios=["breakdown"], seeds=1, methods=["aor", "lcrp"], time_limit=0.3,
                            baseline_time_limit=0.5, workers=1, cache=tmp_path, lcrp_efforts=(1.0, 3.0))
    assert [r.method for r in rows] == ["aor", label(), label(3.0)]
    assert len({r.baseline_makespan for r in rows}) == 1
    ratios = lcrp_ratios(rows)
    # Each variant against the non-LCRP methods, never against another variant.
    assert {(x.lcrp, x.against) for x in ratios} == {(label(), "aor"), (label(3.0), "aor")}
    with pytest.raises(InputError, match="effort"):
        run_repair_bench(["ft06"], scenarios=["breakdown"], seeds=1, lcrp_efforts=(0.0,))


def test_cli_lcrp_effort_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "repair", "--suite", "ft06", "--scenarios", "shock", "--seeds", "1", "--methods", "lcrp",
                 "--lcrp-effort", "1,2", "--time-limit", "0.3", "--baseline-time-limit", "0.5", "--out", str(out),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {s["method"] for s in doc["summary"]} == {label(), label(2.0)}
    assert "lcrp effort 1,2" in (out / "repair.md").read_text()
    assert main(["bench", "repair", "--suite", "ft06", "--lcrp-effort", "fast", "--out", str(out)]) == 2
    assert "--lcrp-effort" in capsys.readouterr().err


def test_families_keep_every_case_for_a_rerun(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    assert main(["bench", "repair", "--suite", "ft06", "--scenarios", "multi-breakdown,shock-sweep", "--seeds", "1",
                 "--first-seed", "4", "--methods", "aor,lcrp", "--time-limit", "0.3", "--baseline-time-limit", "0.5",
                 "--deterministic", "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    rows = from_csv((out / "repair.csv").read_text())
    assert {(r.scenario, r.seed) for r in rows} == {("multi-breakdown", 4), ("shock-sweep", 4)}
    case = out / "cases" / "ft06" / "multi-breakdown-4.json"
    assert json.loads(case.read_text())["events"]
    assert "alas repair --instance ft06" in (out / "repair.md").read_text()
    # The kept case is the row's input: repairing it alone gives the row again.
    lcrp = next(r for r in rows if r.method == label() and r.scenario == "multi-breakdown")
    rc = main(["repair", "--instance", "ft06", "--schedule", str(out / "baselines" / "ft06.json"), "--disruption",
               str(case), "--method", "lcrp", "--time-limit", "0.3", "--seed", "4", "--out", str(tmp_path / "r.json"),
               "--json"])
    assert rc == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["makespan"], again["moved_operations"]) == (lcrp.makespan, lcrp.moved_operations)
    # Two runs' CSVs merge into one report.
    assert main(["bench", "repair", "--from-csv", f"{out / 'repair.csv'},{out / 'repair.csv'}", "--out",
                 str(tmp_path / "merged"), "--json"]) == 0


def test_a_makespan_tolerance_names_the_lcrp_rows_and_their_rerun(tmp_path: Path) -> None:
    assert lcrp_label(4.0, 0.005, "redispatch") == "lcrp@4+tol0.005" and lcrp_label(1.0, 0.005) == "lcrp+tol0.005+tabu"
    assert is_lcrp("lcrp@4+tol0.005") and is_lcrp("lcrp+tol0.005") and not is_lcrp("aor")
    rows = run_repair_bench(["ft06"], scenarios=["shock"], seeds=1, methods=["aor", "lcrp"], time_limit=0.3,
                            baseline_time_limit=0.5, workers=1, cache=tmp_path, lcrp_efforts=(1.0, 2.0),
                            lcrp_tolerance=0.01, deterministic=True)
    assert [r.method for r in rows] == ["aor", label(1.0, 0.01), label(2.0, 0.01)]
    command = rerun_command("out", rows[2], time_limit=0.3, deterministic=True)
    assert "--method lcrp " in command and "--effort 2 --tolerance 0.01 " in command
    with pytest.raises(InputError, match="tolerance"):
        run_repair_bench(["ft06"], scenarios=["shock"], seeds=1, lcrp_tolerance=0.5)


@pytest.mark.parametrize(("text", "fragment"), [
    ('{"broken', "line 1 column 2: invalid JSON"),
    ('{"makespan": 3}', "not a schedule: Field required at instance"),
    (None, "not a valid plan of ft06 (79 violation(s), first unknown_operation"),
])
def test_a_cached_baseline_that_is_not_a_plan_of_the_instance_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, fragment: str) -> None:
    cached = tmp_path / "baselines" / "ft06.json"
    cached.parent.mkdir()
    if text is None:  # another instance's plan, copied into this cache
        assert main(["solve", "la01", "--time-limit", "0.2", "-o", str(cached)]) == 0
        capsys.readouterr()
    else:
        cached.write_text(text, encoding="utf-8")
    before = cached.read_bytes()
    (tmp_path / "repair.csv").write_text("an earlier run's table\n", encoding="utf-8")
    assert main(["bench", "repair", "--suite", "ft06", "--seeds", "1", "--methods", "aor", "--scenarios",
                 "breakdown", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"alas: error: {cached}") and fragment in err
    assert err.endswith("delete it to plan the baseline again")
    # Nothing measured, nothing replaced: the cache as it was, and an earlier run's table too.
    assert cached.read_bytes() == before
    assert (tmp_path / "repair.csv").read_text(encoding="utf-8") == "an earlier run's table\n"


@pytest.mark.skipif(kernel() is None, reason=f"the compiled tabu search ({KERNEL}) is not built: `pip install -e .` "
                    "with a C compiler")
def test_bench_repair_with_the_tabu_first_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`alas bench repair --lcrp-first-edit tabu`: its LCRP rows are named for it, valid, and their rerun command
    repeats them."""
    out = tmp_path / "b"
    assert main(["bench", "repair", "--suite", "ft10", "--scenarios", "shock", "--seeds", "1", "--methods",
                 "aor,lcrp", "--lcrp-effort", "0.5", "--lcrp-first-edit", "tabu", "--time-limit", "2",
                 "--baseline-time-limit", "0.5", "--workers", "1", "--deterministic", "--out", str(out),
                 "--json"]) == 0
    rows = from_csv((out / "repair.csv").read_text())
    assert [r.method for r in rows] == ["aor", "lcrp@0.5+tabu"] and all(r.valid for r in rows)
    assert rows[1].makespan <= rows[0].makespan
    capsys.readouterr()
    command = rerun_command(str(out), rows[1], time_limit=2, deterministic=True)
    assert command.endswith("--effort 0.5 --first-edit tabu --out r.json")
    # An LCRP row's command names its first edit even at the default: it repeats the row after a default changes.
    assert rerun_command(str(out), dataclasses.replace(rows[1], method="lcrp"), time_limit=2,
                         deterministic=True).endswith("--first-edit redispatch --out r.json")
    argv = [*command.split()[1:-2], "--out", str(tmp_path / "r.json"), "--json"]
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["makespan"], again["moved_operations"]) == (rows[1].makespan, rows[1].moved_operations)
