"""Output locations are checked before the work starts; benchmarks keep finished rows; `run --out` owns its files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from alas_argo.benchmarks import repair as repair_bench
from alas_argo.benchmarks import static as static_bench
from alas_argo.cli import main
from alas_argo.cli.outputs import check_output_dir, check_output_file
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.planning import plan


@pytest.fixture
def blocker(tmp_path: Path) -> Path:
    """A regular file: any path under it is a bad place for output."""
    path = tmp_path / "a-file"
    path.write_text("not a directory\n")
    return path


@pytest.fixture
def ft06_files(tmp_path: Path) -> dict[str, Path]:
    """A schedule of ft06 and a disruption of it, as files."""
    schedule = plan(get_instance("ft06"), time_limit=1, method="dispatch").schedule
    s = tmp_path / "s.json"
    s.write_text(json.dumps(schedule.to_json()))
    d = tmp_path / "d.json"
    d.write_text(json.dumps({"time": 10, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 10,
                                                      "duration": 5}]}))
    return {"schedule": s, "disruption": d}


def _one_line(err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("alas: error:") and "Traceback" not in err, err


def _commands(bad: Path, tmp_path: Path, files: dict[str, Path]) -> list[list[str]]:
    store = ["--root", str(tmp_path / "store")]
    return [
        ["solve", "ft06", "--time-limit", "1", "--out", str(bad / "s.json")],
        ["run", "ft06", "--planner", "heuristic", "--disrupt", "breakdown", "--time-limit", "1", *store,
         "--out", str(bad / "run")],
        ["gantt", "--instance", "ft06", "--schedule", str(files["schedule"]), "--out", str(bad / "g.png")],
        ["render", "--out", str(bad / "wf"), "--no-chart"],
        ["bench", "static", "--suite", "ft06", "--time-limit", "1", "--out", str(bad / "bench")],
        ["bench", "repair", "--suite", "ft06", "--seeds", "1", "--out", str(bad / "bench")],
        ["disrupt", "--instance", "ft06", "--schedule", str(files["schedule"]), "--kind", "breakdown",
         "--out", str(bad / "d.json")],
        ["repair", "--instance", "ft06", "--schedule", str(files["schedule"]), "--disruption",
         str(files["disruption"]), "--out", str(bad / "r.json")],
    ]


@pytest.mark.parametrize("index", range(8))
def test_an_output_under_a_file_is_refused_before_any_work(tmp_path: Path, blocker: Path,
                                                            ft06_files: dict[str, Path], index: int,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _commands(blocker, tmp_path, ft06_files)[index]
    # Any planning would reach the solver: make it fail loudly so "before the work" is what is tested.
    # (The modules are imported above, so each keeps its own reference to the real planner to restore.)
    for module in ("alas_argo.jssp.planning", "alas_argo.benchmarks.static", "alas_argo.benchmarks.repair"):
        monkeypatch.setattr(f"{module}.plan", _no_planning)
    assert main(argv) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert str(blocker) in err
    assert not (tmp_path / "store").exists()  # the run never started


def _no_planning(*args: object, **kwargs: object) -> None:
    raise AssertionError("planning started before the output place was checked")


def test_a_directory_where_a_file_goes_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "ft06", "--time-limit", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert "is a directory" in err
    assert main(["solve", "ft06", "--time-limit", "1", "--out", "."]) == 2
    _one_line(capsys.readouterr().err)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")
def test_a_place_that_refuses_new_files_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "ft06", "--time-limit", "1", "--out", "/proc/alas-schedule.json"]) == 2
    err = capsys.readouterr().err
    _one_line(err)
    assert "/proc" in err


def test_checks_leave_nothing_behind(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper"
    assert check_output_dir(target) == target
    assert check_output_file(target / "x.json") == target / "x.json"
    assert not (tmp_path / "new").exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match=r"must end in \.png"):
        check_output_file(tmp_path / "g.jpg", suffixes=(".png",))


def test_a_killed_static_benchmark_keeps_its_finished_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    real_plan = static_bench.plan
    calls: list[str] = []

    def plan_then_interrupt(instance, **kwargs):
        calls.append(instance.name)
        if len(calls) == 2:
            raise KeyboardInterrupt  # what a Ctrl-C in the second instance's solve looks like
        return real_plan(instance, **kwargs)

    monkeypatch.setattr(static_bench, "plan", plan_then_interrupt)
    out = tmp_path / "bench"
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "1", "--out", str(out)]) == 130
    lines = (out / "static.csv").read_text().splitlines()
    assert lines[0].startswith("instance,size,makespan") and len(lines) == 2
    assert lines[1].startswith("ft06,6x6,55,")


def test_a_killed_repair_benchmark_keeps_its_finished_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = repair_bench.repair
    calls: list[object] = []

    def repair_then_interrupt(*args, **kwargs):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(repair_bench, "repair", repair_then_interrupt)
    out = tmp_path / "bench"
    assert main(["bench", "repair", "--suite", "ft06", "--seeds", "1", "--scenarios", "breakdown",
                 "--methods", "right-shift,aor,lcrp", "--time-limit", "1", "--baseline-time-limit", "1",
                 "--out", str(out)]) == 130
    lines = (out / "repair.csv").read_text().splitlines()
    assert len(lines) == 3 and [line.split(",")[4] for line in lines[1:]] == ["right-shift", "aor"]


def test_run_out_replaces_an_earlier_runs_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, root = tmp_path / "out", str(tmp_path / "store")
    base = ["run", "ft06", "--planner", "heuristic", "--time-limit", "1", "--repair-budget", "1", "--root", root,
            "--out", str(out), "--json"]
    assert main([*base, "--disrupt", "mixed", "--disruptions", "2", "--run-id", "first"]) == 0
    first = {p.name for p in out.iterdir()}
    assert {"v1.json", "v2.json", "v3.json", "disruption_2.json"} <= first
    (out / "notes.txt").write_text("mine\n")  # not a run output: left alone
    # Nor a name that only looks like one up to a final newline (a regex `$` matches before it: it was deleted).
    (out / "v2.json\n").write_text("mine too\n")
    assert main([*base, "--run-id", "second"]) == 0
    capsys.readouterr()
    names = {p.name for p in out.iterdir()}
    assert names == {"v1.json", "final.json", "report.json", "report.md", "gantt.png", "gantt.html", "notes.txt",
                     "v2.json\n"}
    assert json.loads((out / "report.json").read_text())["run_id"] == "second"
