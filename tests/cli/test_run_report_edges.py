"""What `alas run` reports, row by row: the table people read, the totals over several repairs, the operations
moved since the first plan, and the files `--out DIR` receives (report.json, report.md, the chart's title, the
earlier run's files it replaces). The CLI tests run whole runs and look for a few labels; here every figure a
row shows is compared with the run's own (a real run's result, or a summary built by hand where a branch needs
figures no short run produces)."""

from __future__ import annotations

import dataclasses
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from alas_argo.cli.run_report import OWNED_FILES, cell, moved_since_first, repair_totals, summary_table, write_outputs
from alas_argo.errors import InputError
from alas_argo.jssp import gantt
from alas_argo.log import ExecutionLog
from alas_argo.pipeline import PipelineResult, run_pipeline
from tests.pipeline.pipeline_helpers import TWO_BREAKDOWNS, open_log


@pytest.fixture(scope="module")
def two_repairs(tmp_path_factory: pytest.TempPathFactory) -> tuple[PipelineResult, ExecutionLog]:
    """ft06, two breakdowns: three versions, two LCRP repairs (one run for the whole module, about 2 s)."""
    log = open_log(tmp_path_factory.mktemp("run"))
    result = run_pipeline(TWO_BREAKDOWNS, log)
    assert result.succeeded and len(result.repairs) == 2
    return result, log


def _rows(s: dict[str, Any]) -> tuple[str, dict[str, str]]:
    """The table's title and its rows (label -> value), as a wide terminal shows them."""
    out = io.StringIO()
    Console(file=out, width=400, color_system=None).print(summary_table(s))
    lines = out.getvalue().splitlines()
    rows = {}
    for line in lines:
        if "│" in line:
            _, what, value, _ = line.split("│")
            rows[what.strip()] = value.strip()
    assert len(lines) == 1 + 1 + len(rows) + 1  # title, top rule, rows, bottom rule: no header, no other line
    return lines[0].strip(), rows


def _summary(**changes: Any) -> dict[str, Any]:
    """A run summary as `alas run` hands it to the table (one repair unless ``repairs`` says otherwise)."""
    s: dict[str, Any] = {
        "run_id": "r7", "status": "succeeded", "instance": "ft06", "size": "6x6", "planner": "heuristic",
        "makespan_before": 60, "makespan_after": 65, "upper_bound": 55, "disruptions": 1, "moved_operations": 12,
        "total_start_shift": 67, "edit_radius": 13, "repair_seconds": 0.0048, "repair_method": "lcrp",
        "fallback": False, "repairs": [], "versions_committed": 2, "final_version": 2, "final_valid": True,
        "feedback_trace": [], "seconds": 2.5}
    return s | changes


def _repair(moved: int, shift: int, *, before: int, after: int, **more: Any) -> dict[str, Any]:
    return {"baseline_makespan": before, "makespan": after, "moved_operations": moved, "total_start_shift": shift,
            **more}


@pytest.mark.parametrize(("value", "shown"), [
    (None, "-"), ([], "-"), (True, "yes"), (False, "no"), (0, "0"), (0.0, "0.0"), ("", ""), ("lcrp", "lcrp"),
    ([1, None, True], "1, -, yes"), ((3, "x"), "3, x"), ([[1, 2], []], "1, 2, -"),
    ({"a": 1, "b": None, "c": False}, "a 1, b -, c no"),
])
def test_a_cell_shows_a_value_as_people_read_it(value: Any, shown: str) -> None:
    assert cell(value) == shown


def test_repair_totals_add_up_every_repair() -> None:
    repairs = [_repair(13, 77, before=60, after=59, seconds=0.28091, fallback=False),
               _repair(12, 67, before=59, after=65, seconds=0.00481, fallback=True),
               _repair(4, 0, before=65, after=65),  # a rung that recorded no seconds, no fallback flag
               {"method": "patch"}]  # no figures about the plan: not a repair the totals count
    assert repair_totals(repairs) == {"repairs": 3, "moved_operations": 29, "total_start_shift": 144,
                                      "repair_seconds": 0.2857, "fallbacks": 1}
    assert repair_totals([{"moved_operations": "2"}]) == {"repairs": 1, "moved_operations": 2,
                                                         "total_start_shift": 0, "repair_seconds": 0.0,
                                                         "fallbacks": 0}
    assert repair_totals([]) == {"repairs": 0, "moved_operations": 0, "total_start_shift": 0,
                                 "repair_seconds": 0, "fallbacks": 0}


def test_moved_since_first_counts_the_operations_whose_start_changed(
        two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    assert result.baseline is not None and result.final is not None
    first = {(o["job"], o["step"]): o["start"] for o in log.plan(1)["operations"]}
    expected = sum(1 for o in log.plan(3)["operations"] if first[(o["job"], o["step"])] != o["start"])
    assert 0 < expected < len(result.final.operations)
    assert moved_since_first(result) == expected
    assert moved_since_first(dataclasses.replace(result, final=result.baseline)) == 0
    assert moved_since_first(dataclasses.replace(result, baseline=None)) is None
    assert moved_since_first(dataclasses.replace(result, final=None)) is None


def test_one_repair_is_reported_by_its_own_figures() -> None:
    title, rows = _rows(_summary(repairs=[_repair(12, 67, before=60, after=65, seconds=0.0048, method="lcrp")],
                                 moved_since_first=99))
    assert title == "ALAS run r7: ft06 (6x6), succeeded"
    assert rows == {
        "makespan before": "60", "makespan after": "65", "best known (upper bound)": "55", "disruptions": "1",
        "repair method": "lcrp", "moved operations": "12", "total start shift": "67",
        "edit radius (operations)": "13", "repair time (s)": "0.0048", "fallback to global re-solve": "no",
        "versions committed": "2", "final version": "2", "final plan valid (independent validator)": "yes",
        "wall time (s), outputs included": "2.5"}  # one repair: no "moved between v1 and the final plan"


def test_several_repairs_get_a_row_each_and_their_totals() -> None:
    repairs = [_repair(13, 77, before=60, after=59, edit_radius=28, seconds=0.2809, method="lcrp"),
               _repair(12, 67, before=59, after=65, seconds=0.0048, method="lcrp", fallback=True)]
    s = _summary(disruptions=2, repairs=repairs, moved_since_first=15, versions_committed=3, final_version=3)
    _, rows = _rows(s)
    assert rows["repair 1 of 2"] == "makespan 60 -> 59, moved 13, shift 77, radius 28, 0.2809 s"
    # Both by the same method: no "by"; the second's radius is not recorded, so not shown.
    assert rows["repair 2 of 2"] == "makespan 59 -> 65, moved 12, shift 67, 0.0048 s, global fallback"
    assert (rows["all repairs: moved operations"], rows["all repairs: total start shift"],
            rows["all repairs: time (s)"], rows["all repairs: global fallbacks"]) == ("25", "144", "0.2857", "1")
    assert rows["moved between v1 and the final plan"] == "15"
    assert not {"moved operations", "total start shift", "edit radius (operations)", "repair time (s)",
                "fallback to global re-solve"} & set(rows)
    # The totals the run computed are the ones shown when the summary has them.
    given = {"moved_operations": 7, "total_start_shift": 8, "repair_seconds": 9.5, "fallbacks": 0}
    _, rows = _rows(s | {"repair_totals": given})
    assert [rows[f"all repairs: {k}"] for k in ("moved operations", "total start shift", "time (s)",
                                                "global fallbacks")] == ["7", "8", "9.5", "0"]
    # Not known (no first plan or no final one): no row rather than a dash.
    _, rows = _rows(s | {"moved_since_first": None})
    assert "moved between v1 and the final plan" not in rows


def test_a_repair_by_another_method_names_every_method() -> None:
    repairs = [_repair(13, 77, before=60, after=59, method="lcrp"), _repair(2, 5, before=59, after=61,
                                                                            method="patch"),
               _repair(0, 0, before=61, after=61)]  # a rung that recorded no method
    _, rows = _rows(_summary(disruptions=3, repairs=repairs))
    assert rows["repair 1 of 3"] == "makespan 60 -> 59, moved 13, shift 77, by lcrp"
    assert rows["repair 2 of 3"] == "makespan 59 -> 61, moved 2, shift 5, by patch"
    assert rows["repair 3 of 3"] == "makespan 61 -> 61, moved 0, shift 0"
    assert "moved between v1 and the final plan" not in rows  # the summary does not say it


def test_feedback_and_llm_rows() -> None:
    _, rows = _rows(_summary(planner="simulated", feedback_trace=[4, 1, 0]))
    assert rows["validator feedback: violations per round (simulated LLM)"] == "4 -> 1 -> 0"
    _, rows = _rows(_summary(planner="llm", feedback_trace=[2, 0],
                             llm={"calls": 6, "total_tokens": 1234, "exchanges": 6}))
    assert rows["validator feedback: violations per round"] == "2 -> 0"
    assert rows["llm calls / tokens"] == "6 / 1234"
    assert "llm answers missing / unusable" not in rows  # every answer came and was used
    _, rows = _rows(_summary(planner="llm", llm={"calls": 6, "total_tokens": None, "exchanges": 6, "failures": 0,
                                                  "unusable": 2}))
    assert rows["llm calls / tokens"] == "6 / -"
    assert rows["llm answers missing / unusable"] == ("0 / 2 of 6 exchanges: the fallback planner stood in (see "
                                                      "`alas log show`)")
    _, rows = _rows(_summary(planner="llm", llm={"calls": 0, "exchanges": 6, "failures": 6}))
    assert rows["llm answers missing / unusable"].startswith("6 / 0 of 6 exchanges")
    _, rows = _rows(_summary())
    assert not any(k.startswith(("validator feedback", "llm")) for k in rows)


def test_run_out_receives_the_runs_files_and_its_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    titles: list[str] = []
    real_save = gantt.save_gantt

    def save(path: Path, instance: Any, final: Any, *, before: Any, disruptions: Any, title: str) -> None:
        # The chart shows the final plan against the first one, with every disruption the run revealed.
        assert (instance, final, before, disruptions) == (result.instance, result.final, result.baseline,
                                                          result.disruptions)
        titles.append(title)
        real_save(path, instance, final, before=before, disruptions=disruptions, title=title)

    monkeypatch.setattr(gantt, "save_gantt", save)
    out = tmp_path / "new" / "out"  # its parent does not exist yet
    summary = result.summary() | {"seconds": 1.25}
    write_outputs(out, result, log, summary=summary)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["v1.json", "v2.json", "v3.json", "final.json", "disruption_1.json", "disruption_2.json", "report.json",
         "report.md", "gantt.png", "gantt.html"])
    for v in (1, 2, 3):
        assert json.loads((out / f"v{v}.json").read_text()) == log.plan(v)
    assert result.final is not None and json.loads((out / "final.json").read_text()) == result.final.to_json()
    for k, d in enumerate(result.disruptions, start=1):
        assert json.loads((out / f"disruption_{k}.json").read_text()) == d.to_json()
    assert titles == ["ft06: v1 and the final plan v3 after 2 disruptions"] * 2
    assert json.loads((out / "report.json").read_text()) == json.loads(json.dumps(summary))  # no `started`: as given
    md = (out / "report.md").read_text().splitlines()
    assert md[:4] == ["# ALAS run r", "", "| what | value |", "|---|---|"]
    assert "| makespan_after | 65 |" in md and "| final_valid | yes |" in md and "| failed_node | - |" in md
    assert "| seconds | 1.25 |" in md
    assert len(md) == 4 + len(summary) - 3  # one row a field, but the repairs, errors and feedback rounds
    assert not any(line.startswith(("| repairs |", "| errors |", "| feedback_rounds |")) for line in md)
    assert summary["seconds"] == 1.25  # the caller's summary is not changed


def test_the_report_times_everything_from_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    monkeypatch.setattr(gantt, "save_gantt", lambda path, *a, **k: None)
    monkeypatch.setattr(time, "perf_counter", lambda: 1000.1234567)  # the clock when the report is written
    write_outputs(tmp_path, result, log, started=900.0)
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["seconds"] == 100.123 and report["run_id"] == "r"  # rounded to the millisecond
    assert f"| seconds | {report['seconds']} |" in (tmp_path / "report.md").read_text().splitlines()
    assert {k: v for k, v in report.items() if k != "seconds"} == {
        k: v for k, v in json.loads(json.dumps(result.summary())).items() if k != "seconds"}


def test_one_disruption_titles_the_chart_without_a_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    titles: list[str] = []
    monkeypatch.setattr(gantt, "save_gantt", lambda path, *a, title, **k: titles.append(title))
    write_outputs(tmp_path, dataclasses.replace(result, disruptions=result.disruptions[:1]), log)
    assert titles == ["ft06: v1 and the final plan v3"] * 2


def test_an_earlier_runs_files_are_replaced_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    monkeypatch.setattr(gantt, "save_gantt", lambda path, *a, **k: Path(path).write_text("chart"))
    stale = ["v4.json", "v12.json", "disruption_3.json"]
    kept = ["notes.txt", "v.json", "v1.json.bak", "final.json~", "gantt.svg", "report.txt", "disruption_x.json"]
    for name in stale + kept:
        (tmp_path / name).write_text("earlier\n")
    (tmp_path / "v9.json").mkdir()  # a directory by an owned name is not a file of a run: left alone
    assert all(OWNED_FILES.match(n) for n in [*stale, "v9.json"]) and not any(OWNED_FILES.match(n) for n in kept)
    write_outputs(tmp_path, result, log)
    names = {p.name for p in tmp_path.iterdir()}
    assert not set(stale) & names
    assert set(kept) | {"v9.json", "v1.json", "v3.json", "final.json", "gantt.png"} <= names
    assert (tmp_path / "v1.json").read_text() != "earlier\n"


def test_no_chart_without_a_first_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    """The chart is drawn only with both plans: a result with a final plan but no first one (no `commit_v1`
    read back from the log) gets its plans written and no chart, rather than a chart missing its "before"."""
    result, log = two_repairs
    drawn: list[Path] = []
    monkeypatch.setattr(gantt, "save_gantt", lambda path, *a, **k: drawn.append(path))
    write_outputs(tmp_path, dataclasses.replace(result, baseline=None), log)
    assert drawn == [] and "final.json" in {p.name for p in tmp_path.iterdir()}


def test_a_run_without_plans_writes_only_its_report(tmp_path: Path,
                                                    two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    empty = dataclasses.replace(result, versions=[], final=None, disruptions=[], baseline=None)
    (tmp_path / "gantt.png").write_text("an earlier run's chart")
    write_outputs(tmp_path, empty, log, summary={"run_id": "r", "seconds": 0.5})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md"]
    assert (tmp_path / "report.md").read_text() == ("# ALAS run r\n\n| what | value |\n|---|---|\n"
                                                          "| run_id | r |\n| seconds | 0.5 |\n")


def test_a_place_that_cannot_be_written_is_one_input_error(tmp_path: Path,
                                                            two_repairs: tuple[PipelineResult, ExecutionLog]) -> None:
    result, log = two_repairs
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    with pytest.raises(InputError) as err:
        write_outputs(blocker, result, log)
    assert str(err.value) == f"{blocker}: cannot write the run's outputs: File exists"
    assert err.value.where == str(blocker)
