"""The rules every disruption passes before any planning: one set for the CLI, the pipeline and the controller.

A disruption that breaks them is bad input (exit 2, HTTP 422) named by its place, never a failure deep in a
repair: ``{"events": []}`` from a file or a request is refused by the CLI and the controller alike, and a
breakdown whose downtime is over before the reveal time is refused everywhere (it would otherwise surface as
an infeasible repair).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, MachineBreakdown

if TYPE_CHECKING:
    from alas_argo.jssp.instance import Instance
    from alas_argo.jssp.schedule import Schedule

__all__ = ["check_disruption", "check_events"]


def _place(source: str | None, index: int | None, path: str) -> str:
    """Where a problem is: ``d.json at [1].events[0]`` for a file, ``disruption.events[0]`` otherwise."""
    inner = f"[{index}].{path}" if index is not None else path
    return f"{source} at {inner}" if source else f"disruption.{inner}"


def check_events(instance: Instance, disruption: Disruption, *, source: str | None = None,
                 index: int | None = None) -> None:
    """The rules a disruption from outside (a file, a request) must pass before any planning, one set for the
    CLI and the controller: at least one event, a reveal time that is not negative, machines and operations that exist,
    no negative start or duration, and no breakdown wholly over before the reveal time (that downtime is
    history and cannot disrupt anything).

    Args:
        instance: The instance the disruption is about.
        disruption: The disruption.
        source: The file it came from, named in errors (``d.json at events[0]``).
        index: Its position in a file holding a list of disruptions.

    Raises:
        InputError: the first rule broken, naming the event.
    """
    if not disruption.events:
        raise InputError("a disruption needs at least one event (machine_breakdown or duration_change)",
                         where=_place(source, index, "events"))
    _check_each(instance, disruption, source, index)


def _check_each(instance: Instance, disruption: Disruption, source: str | None, index: int | None) -> None:
    if disruption.time < 0:
        raise InputError(f"negative reveal time {disruption.time}", where=_place(source, index, "time"))
    for i, e in enumerate(disruption.events):
        where = _place(source, index, f"events[{i}]")
        if isinstance(e, MachineBreakdown):
            if not 0 <= e.machine < instance.num_machines:
                raise InputError(f"machine {e.machine} does not exist (instance {instance.name} has machines "
                                 f"0..{instance.num_machines - 1})", where=where)
            if e.start < 0:
                raise InputError(f"negative breakdown start {e.start}", where=where)
            if e.duration < 0:
                raise InputError(f"negative duration {e.duration}", where=where)
            if e.end <= disruption.time:
                raise InputError(f"machine {e.machine}'s downtime [{e.start}, {e.end}) is over by the reveal time "
                                 f"{disruption.time}: a breakdown must end after the reveal time", where=where)
        else:
            if not (0 <= e.job < instance.num_jobs and 0 <= e.step < len(instance.jobs[e.job])):
                raise InputError(f"operation (job {e.job}, step {e.step}) does not exist in {instance.name}",
                                 where=where)
            if e.duration < 0:
                raise InputError(f"negative duration {e.duration}", where=where)


def check_disruption(instance: Instance, schedule: Schedule, disruption: Disruption, *,
                     source: str | None = None, index: int | None = None) -> None:
    """Reject a disruption that cannot apply to this instance and plan: the rules of :func:`check_events` for
    each event and a reveal time inside ``[0, makespan]``. A disruption without events is accepted here (the
    library repairs it to the same plan); input from outside goes through :func:`check_events`, which refuses it.

    Raises:
        InputError: the first rule broken, naming the event (and ``source`` when given).
    """
    if not 0 <= disruption.time <= schedule.makespan:
        raise InputError(f"reveal time {disruption.time} is outside the schedule [0, {schedule.makespan}]",
                         where=_place(source, index, "time"))
    _check_each(instance, disruption, source, index)
