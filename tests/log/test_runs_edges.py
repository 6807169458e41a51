"""The edges of run listing (alas_argo.log.runs): what `alas log ls` shows of a run's last event and plans,
and the status each event type implies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from alas_argo.log import EventType, ExecutionLog, FsStore, list_runs
from alas_argo.log.layout import event_key
from alas_argo.log.runs import run_status

AT = datetime(2026, 12, 6, 5, 4, 3, 210, tzinfo=UTC)
TERMINAL = {EventType.RUN_SUCCEEDED: "succeeded", EventType.RUN_FAILED: "failed",
            EventType.RUN_INTERRUPTED: "interrupted"}


def test_a_summary_names_the_last_event_its_time_and_the_plans(tmp_path: Path) -> None:
    store = FsStore(tmp_path / "s")
    log = ExecutionLog(store, "r1", clock=lambda: AT)
    log.append(EventType.RUN_STARTED)
    log.commit_plan({"instance": "t", "makespan": 3, "operations": []})
    log.append(EventType.RUN_FAILED, payload={"error": "boom"})
    ExecutionLog(store, "r2", clock=lambda: AT).append(EventType.RUN_STARTED)
    (tmp_path / "s" / "runs" / "r0" / "events").mkdir(parents=True)
    summaries = {r.run_id: r.to_json() for r in list_runs(store)}
    assert list(summaries) == ["r0", "r1", "r2"]
    events = len(store.list(prefix="runs/r1/events/"))
    assert summaries["r1"] == {"run_id": "r1", "events": events, "plans": 1, "status": "failed",
                               "last_type": "run.failed", "last_timestamp": "2026-12-06T05:04:03.000210Z"}
    assert summaries["r2"] == {"run_id": "r2", "events": 1, "plans": 0, "status": "running",
                               "last_type": "run.started", "last_timestamp": "2026-12-06T05:04:03.000210Z"}
    assert summaries["r0"] == {"run_id": "r0", "events": 0, "plans": 0, "status": "empty", "last_type": None,
                               "last_timestamp": None}


def test_a_run_whose_last_event_is_unreadable_shows_no_last_event(tmp_path: Path) -> None:
    store = FsStore(tmp_path / "s")
    log = ExecutionLog(store, "r1", clock=lambda: AT)
    log.append(EventType.RUN_STARTED)
    log.append(EventType.RUN_SUCCEEDED)
    store.put(key=event_key("r1", 1), data=b"{not json")
    (summary,) = list_runs(store)
    assert (summary.status, summary.last_type, summary.last_timestamp) == ("broken", None, None)


def test_no_last_event_is_an_empty_run() -> None:
    assert run_status(None) == "empty"


@pytest.mark.parametrize("etype", list(EventType))
def test_only_the_three_terminal_events_end_a_run(tmp_path: Path, etype: EventType) -> None:
    store = FsStore(tmp_path / "s")
    last = ExecutionLog(store, "r").append(etype)
    assert run_status(last) == TERMINAL.get(etype, "running")
    assert [r.status for r in list_runs(store)] == [TERMINAL.get(etype, "running")]
