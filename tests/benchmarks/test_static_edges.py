"""`alas bench static` at its edges: every figure of a row is the measured one (the validated schedule's
makespan, its gap to the best known rounded as documented, the planner's own seconds, status and bound),
the planner gets exactly the arguments the benchmark was given, and the tables say exactly what was run.

The planner is replaced by a stub returning a real (dispatched) schedule, so the figures are known without
depending on how fast the machine is; the validator stays the real one.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alas_argo.benchmarks import static as static_bench
from alas_argo.benchmarks.static import (
    COLUMNS,
    StaticRow,
    run_static,
    summarize,
    to_csv,
    to_markdown,
    write_tables,
)
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveResult, SolveStatus
from alas_argo.jssp.dispatching import best_dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import SolveMethod

Planner = Callable[..., SolveResult]


def _stub_planner(calls: list[dict[str, Any]], *, objective_delta: int = 0, seconds: float = 1.23456,
                  status: SolveStatus = SolveStatus.FEASIBLE, bound: int = 47) -> Planner:
    """A planner returning ft06-style dispatch schedules with known figures; records its keyword arguments."""
    def fake_plan(instance: Instance, **kwargs: Any) -> SolveResult:
        calls.append({"instance": instance.name, **kwargs})
        progress = kwargs.get("progress")
        _, schedule = best_dispatch(instance, seed=0)
        if progress is not None:
            progress(ProgressEvent(phase="dispatch:test", makespan=schedule.makespan, bound=bound, seconds=0.0))
        return SolveResult(schedule=schedule, status=status, objective=schedule.makespan + objective_delta,
                           bound=bound, seconds=seconds, total_shift=None, improved=True)
    return fake_plan


def test_the_planner_gets_the_benchmarks_arguments_and_its_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(static_bench, "plan", _stub_planner(calls))
    run_static(["ft06"], time_limit=0.5)
    # The defaults are documented: 2 workers, seed 0, AUTO, and wall-time limits (what this benchmark measured).
    assert calls == [{"instance": "ft06", "time_limit": 0.5, "workers": 2, "seed": 0, "method": SolveMethod.AUTO,
                      "progress": None, "deterministic": False}]
    calls.clear()
    run_static(["ft06", "la01"], time_limit=3, workers=4, seed=7, method="cpsat", deterministic=True)
    assert [c.pop("instance") for c in calls] == ["ft06", "la01"]
    assert calls == 2 * [{"time_limit": 3, "workers": 4, "seed": 7, "method": "cpsat", "progress": None,
                          "deterministic": True}]


def test_progress_is_reported_with_the_instance_it_belongs_to(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_bench, "plan", _stub_planner([]))
    seen: list[tuple[str, str, int]] = []
    run_static(["ft06", "la01"], time_limit=1, progress=lambda name, e: seen.append((name, e.phase, e.bound)))
    assert seen == [("ft06", "dispatch:test", 47), ("la01", "dispatch:test", 47)]


def test_a_rows_figures_are_the_measured_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_bench, "plan", _stub_planner([], seconds=1.23456, status=SolveStatus.FEASIBLE,
                                                            bound=47))
    ft06 = get_instance("ft06")
    assert best_dispatch(ft06, seed=0)[1].makespan == 60 and ft06.upper_bound == 55  # what the figures below are
    [row] = run_static(["ft06"], time_limit=1)
    # gap = 100 * (60 - 55) / 55 = 9.0909..., rounded to 2 decimals; seconds are the planner's, to 2 decimals.
    assert row == StaticRow(instance="ft06", size="6x6", makespan=60, upper_bound=55, gap_percent=9.09, valid=True,
                            seconds=1.23, status="feasible", bound=47)


def test_the_makespan_is_the_validated_schedules_not_the_planners_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    # A planner whose objective is 3 shorter than the schedule it returns: the schedule is valid (its own
    # makespan is right), so the row must report that schedule's makespan, not the good-looking claim.
    monkeypatch.setattr(static_bench, "plan", _stub_planner([], objective_delta=-3))
    [row] = run_static(["ft06"], time_limit=1)
    assert row.valid and (row.makespan, row.gap_percent) == (60, 9.09)


def test_an_instance_without_a_best_known_has_no_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_bench, "plan", _stub_planner([]))
    unknown = get_instance("ft06").model_copy(update={"upper_bound": None})
    monkeypatch.setattr(static_bench, "get_instance", lambda name: unknown)
    [row] = run_static(["ft06"], time_limit=1)
    assert (row.upper_bound, row.gap_percent, row.makespan) == (None, None, 60)
    assert summarize([row]).mean_gap_percent is None


def _row(name: str, gap: float | None, valid: bool, seconds: float) -> StaticRow:
    ub = None if gap is None else 100
    return StaticRow(name, "2x2", 100, ub, gap, valid, seconds, "feasible", 90)


def test_summary_figures() -> None:
    # Mean gap over rows with a best known (7/3 = 2.333... -> 2.33); total seconds to 1 decimal (2.26 -> 2.3).
    rows = [_row("a", 1.0, True, 1.26), _row("b", 2.0, False, 0.5), _row("c", 4.0, True, 0.5),
            _row("d", None, True, 0.0)]
    s = summarize(rows)
    assert (s.instances, s.mean_gap_percent, s.valid_rate, s.total_seconds) == (4, 2.33, 0.75, 2.3)
    empty = summarize([])
    assert (empty.instances, empty.mean_gap_percent, empty.valid_rate, empty.total_seconds) == (0, None, 0.0, 0)


def test_the_markdown_table_exactly() -> None:
    rows = [StaticRow("a", "2x2", 110, 100, 10.0, True, 1.25, "optimal", 110),
            StaticRow("b", "3x2", 100, None, None, False, 2.0, "feasible", 90)]
    assert to_markdown(rows, title="T x") == (
        "# T x\n"
        "\n"
        "| instance | size | makespan | upper_bound | gap_percent | valid | seconds | status | bound |\n"
        "|---|---|---|---|---|---|---|---|---|\n"
        "| a | 2x2 | 110 | 100 | 10.0 | yes | 1.25 | optimal | 110 |\n"
        "| b | 3x2 | 100 |  |  | NO | 2.0 | feasible | 90 |\n"
        "\n"
        "Instances: 2. Mean gap to the upper bound: 10.00%. Valid: 50.0%. Total time: 3.2 s.\n")
    assert to_markdown([], title="E").endswith(
        "Instances: 0. Mean gap to the upper bound: n/a. Valid: 0.0%. Total time: 0 s.\n")


def test_tables_are_written_whole_into_a_new_nested_directory(tmp_path: Path) -> None:
    rows = [StaticRow("a", "2x2", 110, 100, 10.0, True, 1.25, "optimal", 110)]
    directory = tmp_path / "new" / "deeper"
    title = "Static benchmark: a — 1 s"  # not ASCII: the files are UTF-8
    paths = write_tables(rows, directory, title=title)
    assert paths == (directory / "static.csv", directory / "static.md")
    assert sorted(p.name for p in directory.iterdir()) == ["static.csv", "static.md"]  # no temporary left
    assert paths[0].read_bytes() == to_csv(rows).encode("utf-8")
    assert paths[1].read_bytes() == to_markdown(rows, title=title).encode("utf-8")
    assert [r["instance"] for r in csv.DictReader(paths[0].read_text(encoding="utf-8").splitlines())] == ["a"]
    # Writing again replaces both tables in place.
    write_tables([], directory, title="again")
    assert paths[0].read_text(encoding="utf-8") == ",".join(COLUMNS) + "\n"
    assert paths[1].read_text(encoding="utf-8").startswith("# again\n")
