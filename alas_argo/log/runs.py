"""The runs a store holds, summarised for `alas log ls`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import IntegrityError, StoreError
from alas_argo.log.event import Event
from alas_argo.log.events import EventType
from alas_argo.log.layout import is_run_id
from alas_argo.log.store import Store

__all__ = ["RunSummary", "list_runs", "run_status"]

_TERMINAL = {EventType.RUN_SUCCEEDED: "succeeded", EventType.RUN_FAILED: "failed",
             EventType.RUN_INTERRUPTED: "interrupted"}


class RunSummary(BaseModel):
    """One run, as `alas log ls` shows it."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(description="The run id.")
    events: int = Field(description="Number of event records.")
    plans: int = Field(description="Number of stored plan objects.")
    status: str = Field(description="succeeded, failed, interrupted (stopped by SIGINT / SIGTERM; resumable), "
                        "running (no terminal event yet), empty, or broken (the last event is unreadable or "
                        "events are missing below it: `alas log verify` names them).")
    last_type: str | None = Field(None, description="Type of the last event.")
    last_timestamp: str | None = Field(None, description="Time of the last event.")

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON."""
        return self.model_dump(mode="json")


def run_status(last: Event | None) -> str:
    """Status implied by a run's last event."""
    if last is None:
        return "empty"
    return _TERMINAL.get(last.type, "running")


def list_runs(store: Store) -> list[RunSummary]:
    """Every run in ``store``, sorted by run id; reads only each run's last event."""
    out = []
    for run_id in store.children(prefix="runs/"):
        if not is_run_id(run_id):
            continue  # no run can have this name (`_x`): listed, it was a run every other command refused
        events = store.list(prefix=f"runs/{run_id}/events/")
        plans = store.list(prefix=f"runs/{run_id}/plans/")
        last: Event | None = None
        status = "empty"
        if events:
            try:
                last = Event.from_bytes(store.get(key=events[-1]), where=events[-1])
            except (IntegrityError, StoreError):
                # `alas log verify` names it; listing should not fail on one bad record, nor on one the store
                # cannot hand out (past the store's size limit, unreadable, or listed and then gone before it
                # was read, as an S3 listing that lags a delete shows it), which verify reports as unreadable.
                last = None
            # Sequence numbers start at 0 with no gaps: fewer records than the last one's seq + 1 is a hole.
            status = "broken" if last is None or last.seq + 1 != len(events) else run_status(last)
        out.append(RunSummary(run_id=run_id, events=len(events), plans=len(plans), status=status,
                              last_type=last.type.value if last else None,
                              last_timestamp=last.timestamp if last else None))
    return out
