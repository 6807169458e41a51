"""The instance a run's log says it planned, for whatever works on a run it did not start: the controller's
repairs and the cluster's repair steps, on runs planned by `alas run` or by the `alas-plan` workflow alike."""

from __future__ import annotations

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.instance import Instance
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog

__all__ = ["INSTANCE_EVENTS", "named_instance"]

#: Event types whose payload may carry the run's instance (docs/execution-log.md, replay's payload contract).
INSTANCE_EVENTS = (EventType.RUN_STARTED, EventType.VALIDATION_PASSED, EventType.VALIDATION_FAILED,
                   EventType.REPAIR_FINISHED)


def named_instance(log: ExecutionLog, fallback: str | None = None, *,
                   missing: str = "the run records no instance (no event names one)") -> Instance:
    """A full instance document recorded by the first event of a type that carries one (found by the log's
    index, one read each), else the bundled instance those events name (a custom instance is recorded in full
    once; later events name it), else the bundled instance ``fallback`` names.

    Raises:
        InputError: No event names an instance and there is no fallback (``missing`` says so), or the name is
            no bundled instance.
    """
    names: list[str] = []
    for etype in INSTANCE_EVENTS:
        event = log.first(etype)
        ref = event.payload.get("instance") if event is not None else None
        if isinstance(ref, dict) and "jobs" in ref:
            return Instance.model_validate(ref)
        if isinstance(ref, dict) and ref.get("name"):
            names.append(str(ref["name"]))
    if not names and fallback is None:
        raise InputError(missing, where=f"run {log.run_id}")
    return get_instance(names[0] if names else str(fallback))
