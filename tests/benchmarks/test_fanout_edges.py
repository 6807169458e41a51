"""`alas bench report` at its edges: cases whose runs cannot be read say why, seconds from the events' own
timestamps, and the per-scenario summaries, tables and chart computed from known rows."""

from __future__ import annotations

import csv
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from alas_argo.benchmarks.fanout import (
    COLUMNS,
    CaseRow,
    ScenarioSummary,
    case_row,
    case_run_ids,
    plot,
    summarize,
    to_markdown,
    write_tables,
)
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline.config import RunConfig
from alas_argo.pipeline.inputs import run_inputs

#: Each event of a crafted run is this much later than the one before it.
STEP = timedelta(seconds=1.2344)


def ticking() -> Callable[[], datetime]:
    """A clock that moves by :data:`STEP` at each reading: a crafted run's seconds are known exactly."""
    now = [datetime(2026, 1, 1, tzinfo=UTC)]

    def clock() -> datetime:
        now[0] += STEP
        return now[0]

    return clock


@pytest.fixture
def store(tmp_path: Path) -> FsStore:
    return FsStore(tmp_path / ".alas")


def inputs(**config: Any) -> dict[str, Any]:
    """A run's recorded inputs, as :func:`run_pipeline` records them, for a heuristic ft06 run."""
    return run_inputs(RunConfig(instance="ft06", planner="heuristic", **config), get_instance("ft06"), [])


def crafted(store: FsStore, run_id: str, recorded: dict[str, Any] | None, *ends: EventType) -> ExecutionLog:
    """A run that started, recorded ``recorded`` (unless None) and then had ``ends`` appended; no plan."""
    log = ExecutionLog(store, run_id, clock=ticking())
    log.append(EventType.RUN_STARTED, payload={})
    if recorded is not None:
        log.append(EventType.RUN_INPUTS, payload=recorded)
    for end in ends:
        log.append(end, payload={})
    return log


def test_only_runs_named_instance_scenario_and_a_numeric_seed_are_cases(store: FsStore) -> None:
    for run in ("b.ft06.none.0", "b.ft06.none.x", "b.ft06.none", "b.ft06.none.1.2", "b.la01.shock.12"):
        crafted(store, run, None)
    assert case_run_ids(store, "b") == ["b.ft06.none.0", "b.la01.shock.12"]
    with pytest.raises(InputError) as raised:
        case_run_ids(store, "c")
    assert raised.value.where == store.location
    assert "a fan-out names them c.<instance>.<scenario>.<seed>; `alas log ls` lists the runs" in str(raised.value)


def test_a_run_without_recorded_inputs_says_so_with_its_status(store: FsStore) -> None:
    row = case_row(ExecutionLog(store, "e.ft06.none.0"))  # no event at all
    assert (row.status, row.problem, row.seconds, row.final_valid) == ("empty", "no recorded inputs", None, False)
    row = case_row(crafted(store, "e.la01.shock.4", None, EventType.RUN_FAILED))
    assert (row.instance, row.scenario, row.seed) == ("la01", "shock", 4)  # from the run id: nothing else says
    assert (row.status, row.problem, row.seconds) == ("failed", "no recorded inputs", round(STEP.total_seconds(), 3))


def test_disruptions_from_a_file_are_not_read_again(store: FsStore) -> None:
    recorded = inputs()
    recorded["inputs"]["disrupt"] = {"file": []}
    row = case_row(crafted(store, "d.ft06.file.0", recorded, EventType.RUN_SUCCEEDED))
    assert row.status == "succeeded" and row.problem == "disruptions from a file (alas log show reads such a run)"
    assert row.makespan_after is None and row.upper_bound is None and not row.final_valid


def test_an_instance_that_is_not_the_recorded_one_is_named(store: FsStore) -> None:
    unknown = inputs()
    unknown["inputs"]["instance"] = {"name": "no-such-instance", "digest": "sha256:0"}
    row = case_row(crafted(store, "i.x.none.0", unknown, EventType.RUN_SUCCEEDED))
    assert row.problem is not None and row.problem.startswith("instance 'no-such-instance': ")
    assert row.upper_bound is None
    other = inputs()
    other["inputs"]["instance"]["digest"] = "sha256:" + "0" * 64  # ft06 changed since the run recorded it
    row = case_row(crafted(store, "i.ft06.none.0", other, EventType.RUN_SUCCEEDED))
    assert row.problem == "instance ft06 differs from the one the run recorded" and row.upper_bound is None


@pytest.mark.parametrize("recorded", [
    {"inputs": {"seed": 0}},  # no instance
    {"inputs": {"instance": "ft06"}},  # a name, not the {"name", "digest"} alas run records
    {"inputs": {"instance": {"name": 6, "digest": "sha256:0"}}},
    {"inputs": {"instance": {"digest": "sha256:0"}}},
    {"inputs": ["ft06", 0]},
    {"inputs": None},
    {},
])
def test_inputs_recorded_by_something_else_are_one_cases_problem(store: FsStore, recorded: dict[str, Any]) -> None:
    # A run under the fan-out's prefix written by another tool: the report names the case, it does not fail.
    row = case_row(crafted(store, "i.ft06.none.1", recorded, EventType.RUN_SUCCEEDED))
    assert (row.status, row.instance, row.scenario, row.seed) == ("succeeded", "ft06", "none", 1)
    assert row.problem == "the recorded inputs name no instance (not inputs of alas run)"
    assert row.upper_bound is None and not row.final_valid


def test_recorded_inputs_a_config_refuses_make_an_unreadable_row_not_a_failed_report(store: FsStore) -> None:
    recorded = inputs()
    recorded["inputs"]["seed"] = "not a seed"
    row = case_row(crafted(store, "v.ft06.breakdown.7", recorded, EventType.RUN_SUCCEEDED))
    assert (row.instance, row.scenario, row.seed, row.status) == ("ft06", "breakdown", 7, "unreadable")
    assert row.problem == "ValidationError: 1 validation error for RunConfig" and not row.final_valid


def test_a_readable_row_takes_its_instance_scenario_and_seed_from_the_recorded_inputs(store: FsStore) -> None:
    # No plan committed: the row says what the run recorded and that no plan is valid, without a problem.
    row = case_row(crafted(store, "r.ft06.none.0", inputs(seed=3, disrupt="breakdown"), EventType.RUN_SUCCEEDED))
    assert (row.instance, row.scenario, row.seed, row.status, row.problem) == ("ft06", "breakdown", 3, "succeeded",
                                                                               None)
    assert (row.upper_bound, row.makespan_after, row.gap_percent, row.final_valid) == (55, None, None, False)
    assert row.seconds == round(2 * STEP.total_seconds(), 3) == 2.469


def test_seconds_are_from_the_last_start_to_the_last_end_and_none_while_running(store: FsStore) -> None:
    resumed = crafted(store, "s.ft06.none.0", None, EventType.RUN_FAILED, EventType.RUN_STARTED,
                      EventType.RUN_FAILED, EventType.RUN_SUCCEEDED)
    assert case_row(resumed).seconds == round(2 * STEP.total_seconds(), 3)
    again = crafted(store, "s.ft06.none.1", None, EventType.RUN_SUCCEEDED, EventType.RUN_STARTED)
    assert case_row(again).seconds is None and case_row(again).status == "running"
    never = ExecutionLog(store, "s.ft06.none.2", clock=ticking())
    never.append(EventType.RUN_SUCCEEDED, payload={})
    assert case_row(never).seconds is None


def row(scenario: str, *, status: str = "succeeded", valid: bool = True, gap: float | None = None,
        moved: int | None = None, repair: float | None = None, seconds: float | None = None) -> CaseRow:
    return CaseRow(f"f.ft06.{scenario}.0", "ft06", scenario, 0, status, gap_percent=gap, moved_operations=moved,
                   repair_seconds=repair, final_valid=valid, seconds=seconds)


ROWS = [row("shock", gap=1.0, moved=1, repair=0.1, seconds=1.0),
        row("none", gap=2.0, seconds=2.0),
        row("shock", gap=2.0, moved=4, repair=0.2, seconds=4.0),
        row("shock", gap=50.0, moved=100, repair=0.3, valid=False, status="failed"),  # no valid plan: no gap
        row("shock", gap=None, moved=None, repair=None, valid=True, status="running", seconds=None),
        row("none", gap=1.0 / 3, seconds=2.0005)]


def test_summaries_count_average_valid_gaps_only_and_take_medians_of_known_values() -> None:
    summaries = {s.scenario: s for s in summarize(ROWS)}
    assert list(summaries) == ["shock", "none", "all"]
    assert summaries["shock"] == ScenarioSummary(
        scenario="shock", cases=4, succeeded=2, valid=3, mean_gap_percent=1.5, median_moved_operations=4.0,
        median_repair_seconds=0.2, median_seconds=2.5)
    assert summaries["none"] == ScenarioSummary(
        scenario="none", cases=2, succeeded=2, valid=2, mean_gap_percent=1.17, median_moved_operations=None,
        median_repair_seconds=None, median_seconds=2.0)  # (2.0 + 2.0005) / 2, to 3 places
    assert summaries["all"] == ScenarioSummary(
        scenario="all", cases=6, succeeded=4, valid=5, mean_gap_percent=round((1 + 2 + 2 + 1 / 3) / 4, 2),
        median_moved_operations=4.0, median_repair_seconds=0.2, median_seconds=2.0)
    assert summarize([row("none", valid=False, gap=3.0)])[0].mean_gap_percent is None
    assert summarize([]) == [ScenarioSummary("all", 0, 0, 0, None, None, None, None)]


def test_the_markdown_is_a_title_the_summaries_then_every_case() -> None:
    rows = ROWS[:2]
    text = to_markdown("fan-7", rows, summarize(rows))
    lines = text.split("\n")
    assert lines[:2] == ["# Benchmark fan-out fan-7: 2 cases, read from the execution log", ""]
    assert lines[2] == ("| scenario | cases | succeeded | valid | mean_gap_percent | median_moved_operations | "
                        "median_repair_seconds | median_seconds |")
    assert lines[4:7] == ["| shock | 1 | 1 | 1 | 1.0 | 1.0 | 0.1 | 1.0 |", "| none | 1 | 1 | 1 | 2.0 | - | - | 2.0 |",
                          "| all | 2 | 2 | 2 | 1.5 | 1.0 | 0.1 | 1.5 |"]
    assert lines[7] == "" and lines[8] == "| " + " | ".join(COLUMNS) + " |"
    assert lines[10:] == ["| f.ft06.shock.0 | ft06 | shock | 0 | succeeded | - | - | - | 1.0 | 1 | - | 0.1 | yes | 1.0"
                          " | - |", "| f.ft06.none.0 | ft06 | none | 0 | succeeded | - | - | - | 2.0 | - | - | - | yes"
                          " | 2.0 | - |", ""]


@pytest.mark.parametrize("rows", [ROWS, [row("none", valid=False, gap=3.0)]], ids=["valid-cases", "none-valid"])
def test_the_tables_and_the_chart_are_written_in_a_new_directory(rows: list[CaseRow], tmp_path: Path) -> None:
    directory = tmp_path / "a" / "b"
    paths = write_tables("fan-8", rows, summarize(rows), directory)
    assert paths == (directory / "cases.csv", directory / "cases.md", directory / "cases.png")
    table = list(csv.DictReader(paths[0].read_text(encoding="utf-8").splitlines()))
    assert [r["run_id"] for r in table] == [r.run_id for r in rows]
    assert paths[1].read_text(encoding="utf-8") == to_markdown("fan-8", rows, summarize(rows))
    png = paths[2].read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(png[16:20]), int.from_bytes(png[20:24])) == (900, 400)  # IHDR: width, height


def test_a_report_written_again_into_its_directory_replaces_its_files(tmp_path: Path) -> None:
    write_tables("fan-8", ROWS, summarize(ROWS), tmp_path)
    csv_path, md_path, _ = write_tables("fan-8", ROWS[:1], summarize(ROWS[:1]), tmp_path)
    assert len(csv_path.read_text(encoding="utf-8").splitlines()) == 2
    assert md_path.read_text(encoding="utf-8").startswith("# Benchmark fan-out fan-8: 1 cases")


def dots(ax: Axes) -> list[Any]:
    """The (x, y) of every scatter dot on ``ax``, one list per scatter call (a scenario)."""
    return [np.asarray(c.get_offsets()).tolist() for c in ax.collections]


def test_the_chart_puts_each_valid_value_over_its_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved: list[Figure] = []
    savefig = Figure.savefig

    def keep(self: Figure, *args: Any, **kwargs: Any) -> None:
        saved.append(self)
        savefig(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    plot("fan-8", ROWS, tmp_path / "a.png")
    plot("fan-8", [row("none", valid=False, gap=3.0)], tmp_path / "b.png")
    (gap_ax, moved_ax), (empty_ax, _) = saved[0].axes, saved[1].axes
    # Valid cases only: shock's invalid 50 % and its case without a value are not drawn; none moved nothing.
    assert [t.get_text() for t in gap_ax.get_xticklabels()] == ["shock", "none"]
    assert dots(gap_ax) == [[[1.0, 1.0], [1.0, 2.0]], [[2.0, 2.0], [2.0, 1 / 3]]]
    assert [t.get_text() for t in moved_ax.get_xticklabels()] == ["shock"]
    assert dots(moved_ax) == [[[1.0, 1.0], [1.0, 4.0]]]
    assert saved[0].get_suptitle().startswith("fan-8: 6 cases, 5 with a valid plan")
    [note] = empty_ax.texts
    assert note.get_text() == "no valid case with a value" and note.get_transform() == empty_ax.transAxes
    assert note.get_position() == (0.5, 0.5)  # in the middle of its own panel, whatever the axes' limits
