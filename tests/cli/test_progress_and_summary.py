"""Long work shows progress when stderr is not a terminal; the run summary counts everything and labels its
figures; --planner llm without an endpoint fails unless a fallback is asked for; no `None` for people."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import main
from alas_argo.cli.progress import ProgressLines
from alas_argo.jssp import gantt


def _lines(err: str, what: str) -> list[str]:
    return [line for line in err.splitlines() if re.match(rf"^\[\s*[\d.]+ s\] {re.escape(what)}: ", line)]


def test_bench_static_prints_a_line_per_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "static", "--suite", "ft06,la01", "--time-limit", "1", "--out", str(tmp_path),
                 "--json"]) == 0
    lines = _lines(capsys.readouterr().err, "alas bench static")
    assert lines[0].endswith("started (2 items)") and lines[-1].endswith("finished after 2/2 items")
    assert any("1/2 done, last: ft06 6x6 makespan 55" in line for line in lines)
    assert any("2/2 done, last: la01" in line for line in lines)


def test_bench_repair_prints_progress(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "repair", "--suite", "ft06", "--seeds", "1", "--scenarios", "breakdown", "--methods",
                 "right-shift,aor", "--time-limit", "1", "--baseline-time-limit", "1", "--out", str(tmp_path)]) == 0
    lines = _lines(capsys.readouterr().err, "alas bench repair")
    assert lines[0].endswith("started (2 items)") and "2/2 done, last: ft06 breakdown#0 aor" in lines[-2]
    assert lines[-1].endswith("finished after 2/2 items")


def test_heartbeat_names_the_work_in_progress() -> None:
    now = [0.0]
    out: list[str] = []

    class Sink:
        def write(self, text: str) -> None:
            out.append(text)

        def flush(self) -> None:
            pass

    with ProgressLines("alas x", total=3, every=10, heartbeat=0.2, stream=Sink(),  # type: ignore[arg-type]
                       clock=lambda: now[0]) as lines:
        lines.working_on("ta01 (cpsat, incumbent 1300)")
        now[0] = 1.0  # a second of silence on the injected clock: the heartbeat speaks
        deadline = time.monotonic() + 30
        while not any("working on" in o for o in out) and time.monotonic() < deadline:
            time.sleep(0.01)
    assert any("0/3 done, working on ta01 (cpsat, incumbent 1300)" in o for o in out)


def test_run_prints_progress_lines_and_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "ft06", "--planner", "heuristic", "--faults", "2", "--variant", "no_repair",
                 "--root", str(tmp_path), "--run-id", "p1"]) == 1
    lines = _lines(capsys.readouterr().err, "alas run p1")
    assert lines[0].endswith("started") and re.search(r"stopped|finished after \d+ items", lines[-1])
    assert any(" failed " in line for line in lines), lines


@pytest.mark.timeout(60)  # 5.5 s measured in the whole suite at load 5; loaded runs go past 3x
def test_several_disruptions_are_labelled_and_the_wall_time_includes_the_chart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    offset = [0.0]
    real_clock, real_save = time.perf_counter, gantt.save_gantt

    def slow_save(*args: Any, **kwargs: Any) -> Any:
        offset[0] += 100.0  # the chart "takes" 100 s on the clock every timer reads
        return real_save(*args, **kwargs)

    monkeypatch.setattr(time, "perf_counter", lambda: real_clock() + offset[0])
    monkeypatch.setattr(gantt, "save_gantt", slow_save)
    out = tmp_path / "out"
    argv = ["run", "ft06", "--planner", "heuristic", "--disrupt", "mixed", "--disruptions", "3", "--time-limit", "1",
            "--repair-budget", "1", "--root", str(tmp_path / "st"), "--out", str(out)]
    assert main([*argv, "--run-id", "m1", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["seconds"] >= summary["pipeline_seconds"] + 100
    assert json.loads((out / "report.json").read_text())["seconds"] >= 100
    repairs = summary["repairs"]
    assert len(repairs) == 3 and summary["repair_totals"]["moved_operations"] == sum(
        r["moved_operations"] for r in repairs)
    assert main([*argv, "--run-id", "m2"]) == 0
    text = capsys.readouterr().out
    for k in (1, 2, 3):
        assert f"repair {k} of 3" in text
    assert "all repairs: moved operations" in text and "moved between v1 and the final plan" in text
    assert "None" not in text and "None" not in (out / "report.md").read_text()


def test_llm_planner_without_an_endpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "ALAS_LLM__BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    base = ["run", "ft06", "--planner", "llm", "--time-limit", "1", "--root", str(tmp_path)]
    assert main(base) == 2
    assert "--planner llm needs an endpoint" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before anything was logged
    assert main([*base, "--llm-fallback"]) == 0
    assert "'llm' unavailable" in capsys.readouterr().err


def test_a_dead_endpoint_is_said_in_the_summary_not_only_in_the_log(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Every job agent gets no answer and the fallback plans it: the run succeeds. Before, its table said
    # only "llm calls / tokens 0 / 0", which reads like a run that never needed the model.
    monkeypatch.setenv("COLUMNS", "200")  # one table row a line
    assert main(["run", "ft06", "--planner", "llm", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-retries", "0",
                 "--time-limit", "1", "--root", str(tmp_path)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "llm answers missing / unusable" in line)
    assert "6 / 0 of 6 exchanges: the fallback planner stood in" in row


def test_log_show_has_no_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "ft06", "--planner", "heuristic", "--root", str(tmp_path), "--run-id", "s1",
                 "--quiet"]) == 0
    assert main(["log", "show", "s1", "--root", str(tmp_path), "--version", "1"]) == 0
    text = capsys.readouterr().out
    assert "None" not in text and "no parent" in text


def test_a_repair_patched_by_recovery_is_summarized_with_what_it_recorded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Three disruptions; every repair after the first fails, so recovery patches them (their commits record the
    method only: no edit radius, no seconds). The summary says so instead of failing on the missing fields."""
    from alas_argo.agents.roles import RepairerRole
    from alas_argo.errors import InfeasibleError

    calls = [0]
    real = RepairerRole.repair_disruption

    def first_only(self: RepairerRole, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] > 1:
            raise InfeasibleError("no plan for this one (injected by the test)")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(RepairerRole, "repair_disruption", first_only)
    monkeypatch.setenv("COLUMNS", "200")  # one table row a line
    assert main(["run", "ft06", "--planner", "heuristic", "--disrupt", "breakdown", "--disruptions", "3",
                 "--time-limit", "1", "--repair-budget", "1", "--root", str(tmp_path / "st")]) == 0
    text = capsys.readouterr().out
    lines = {k: next(line for line in text.splitlines() if f"repair {k} of 3" in line) for k in (1, 2, 3)}
    assert "by lcrp" in lines[1] and "radius" in lines[1]
    assert "by patch" in lines[2] and "by patch" in lines[3] and "radius" not in lines[3]
    assert "None" not in text
