"""`alas bench report`: a fan-out's cases read back from their runs in the log, as the case pods left them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from alas_argo.benchmarks.fanout import COLUMNS, case_row, case_run_ids, summarize
from alas_argo.cli import main
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline import run_pipeline
from alas_argo.pipeline.config import RunConfig

# Three small pipeline runs per test module: a few seconds each on a busy machine.
pytestmark = pytest.mark.timeout(120)

CASES = [("ft06", "none", 0), ("ft06", "breakdown", 0), ("la01", "shock", 1)]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> FsStore:
    """The runs a bench-case pod leaves: one per case, named <run id>.<instance>.<scenario>.<seed>; and
    runs that are not its cases (other fan-outs whose ids extend this one's, a plain run)."""
    store = FsStore(tmp_path_factory.mktemp("store") / ".alas")
    for name, scenario, seed in CASES:
        config = RunConfig(instance=name, planner="heuristic", time_limit=1, repair_budget=1, seed=seed,
                           disrupt=None if scenario == "none" else scenario)
        run_pipeline(config, ExecutionLog(store, f"fan-1.{name}.{scenario}.{seed}"))
    for other in ("fan-10.ft06.none.0", "fan-1", "fan-1.x.ft06.none.0"):
        run_pipeline(RunConfig(instance="ft06", planner="heuristic", time_limit=1), ExecutionLog(store, other))
    return store


def test_the_cases_are_the_runs_named_after_the_fanout_and_nothing_else(store: FsStore) -> None:
    assert case_run_ids(store, "fan-1") == sorted(f"fan-1.{n}.{s}.{k}" for n, s, k in CASES)
    with pytest.raises(InputError, match="no benchmark case runs of 'fan-2'"):
        case_run_ids(store, "fan-2")


def test_each_row_is_what_the_log_holds(store: FsStore) -> None:
    for name, scenario, seed in CASES:
        log = ExecutionLog(store, f"fan-1.{name}.{scenario}.{seed}")
        row = case_row(log)
        instance = get_instance(name)
        version = log.current_version()
        assert version is not None
        first, current = Schedule.model_validate(log.plan(1)), Schedule.model_validate(log.plan(version))
        assert (row.instance, row.scenario, row.seed, row.status) == (name, scenario, seed, "succeeded")
        assert (row.makespan_before, row.makespan_after) == (first.makespan, current.makespan)
        # The independent validator's verdict, a repair judged against the disruption the run observed.
        observed = [Disruption.model_validate(e.payload["disruption"]) for e in log.events()
                    if e.type is EventType.DISRUPTION_OBSERVED]
        assert len(observed) == (0 if scenario == "none" else 1)
        disruption = observed[0] if observed else None
        verdict = validate(instance, current, disruption=disruption, baseline=first if disruption else None)
        assert row.final_valid is verdict.valid is True
        assert row.upper_bound == instance.upper_bound
        bound = instance.upper_bound
        assert bound is not None and row.gap_percent == round(100 * (current.makespan - bound) / bound, 2)
        if scenario == "none":
            assert version == 1 and row.moved_operations is None and row.repair_method is None
        else:  # the repair's moves are the difference between the two committed versions
            assert row.moved_operations == len(log.diff(1, version).moved_operations)
            assert row.repair_method == "lcrp" and row.repair_seconds is not None
        assert row.seconds is not None and row.seconds > 0 and row.problem is None


def test_summaries_per_scenario_then_all(store: FsStore) -> None:
    rows = [case_row(ExecutionLog(store, r)) for r in case_run_ids(store, "fan-1")]
    summaries = {s.scenario: s for s in summarize(rows)}
    assert list(summaries) == ["breakdown", "none", "shock", "all"]
    assert [(s.cases, s.succeeded, s.valid) for s in summaries.values()] == [(1, 1, 1)] * 3 + [(3, 3, 3)]
    gaps = [r.gap_percent for r in rows if r.gap_percent is not None]
    assert summaries["all"].mean_gap_percent == round(sum(gaps) / len(gaps), 2)
    assert summaries["none"].median_moved_operations is None


def test_the_command_writes_the_tables_and_exits_0_when_every_case_is_valid(store: FsStore, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert main(["bench", "report", "fan-1", "--root", str(store.root), "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["rows"]] == case_run_ids(store, "fan-1")
    table = list(csv.DictReader((out / "cases.csv").read_text().splitlines()))
    assert list(table[0]) == list(COLUMNS) and [r["run_id"] for r in table] == [r["run_id"] for r in doc["rows"]]
    assert [r["makespan_after"] for r in table] == [str(r["makespan_after"]) for r in doc["rows"]]
    assert "| all | 3 | 3 | 3 |" in (out / "cases.md").read_text()
    assert doc["chart"] == str(out / "cases.png") and (out / "cases.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["bench", "report", "fan-1", "--root", str(store.root), "--out", str(tmp_path / "plain")]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0].split()[:4] == ["scenario", "cases", "succeeded", "valid"]
    assert "tables: " in text


def test_a_case_that_did_not_finish_fails_the_report_and_is_named(store: FsStore, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = "fan-3.ft06.breakdown.0"
    run_pipeline(RunConfig(instance="ft06", planner="heuristic", time_limit=1, disrupt="breakdown"),
                 ExecutionLog(store, run))
    ExecutionLog(store, run).append(EventType.RUN_STARTED, payload={})  # started again, never finished
    assert main(["bench", "report", "fan-3", "--root", str(store.root), "--out", str(tmp_path / "r")]) == 1
    assert f"{run}: running" in capsys.readouterr().out


def test_no_such_fanout_exits_2_and_writes_nothing(store: FsStore, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "never"
    assert main(["bench", "report", "fan-9", "--root", str(store.root), "--out", str(out)]) == 2
    assert "no benchmark case runs of 'fan-9'" in capsys.readouterr().err
    assert not out.exists()
    assert main(["bench", "report", "fan-1", "--root", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert not out.exists()


def test_a_damaged_case_is_one_row_with_its_problem_not_a_failed_report(store: FsStore, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = "fan-4.ft06.none.0"
    for case in (run, "fan-4.ft06.none.1"):
        run_pipeline(RunConfig(instance="ft06", planner="heuristic", time_limit=1), ExecutionLog(store, case))
    key = sorted(store.list(prefix=f"runs/{run}/events/"))[3]
    store.put(key=key, data=store.get(key=key).replace(b'"seq"', b'"sequence"'))
    assert main(["bench", "report", "fan-4", "--root", str(store.root), "--out", str(tmp_path / "r"), "--json"]) == 1
    rows = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows[run]["status"] == "unreadable" and rows[run]["problem"].startswith("IntegrityError")
    assert (tmp_path / "r" / "cases.png").stat().st_size > 0
    assert rows["fan-4.ft06.none.1"]["status"] == "succeeded" and rows["fan-4.ft06.none.1"]["final_valid"]
