"""Disruptions revealed at a time: machine breakdowns and duration changes (docs/contracts.md).

Semantics, normative for the validator and the repair alike:

- an operation whose ``start < time`` has started: it keeps its start; if it is running on a machine when
  that machine breaks down, it is interrupted and restarts from scratch after the downtime (non-preemptive
  restart); a ``duration_change`` of a started operation extends it in place;
- every operation not started by ``time`` must start at or after ``time``;
- nothing runs on a machine during its downtime window ``[start, start + duration)``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import InputError
from alas_argo.jssp.limits import MAX_TIME, Count, TimeValue

if TYPE_CHECKING:
    from alas_argo.jssp.instance import Instance
    from alas_argo.jssp.schedule import Schedule

__all__ = [
    "Disruption",
    "DisruptionEvent",
    "DisruptionKind",
    "DurationChange",
    "MachineBreakdown",
    "carry_forward",
    "generate_disruption",
    "generate_sequence",
    "merged_downtimes",
]


class MachineBreakdown(BaseModel):
    """A machine is down over ``[start, start + duration)``."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["machine_breakdown"] = "machine_breakdown"
    machine: Count = Field(description="The machine that breaks down.")
    start: TimeValue = Field(description="Start of the downtime.")
    duration: TimeValue = Field(description="Length of the downtime.")

    @property
    def end(self) -> int:
        """End of the downtime (exclusive)."""
        return self.start + self.duration


class DurationChange(BaseModel):
    """Operation (job, step) now takes ``duration`` instead of its nominal duration."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["duration_change"] = "duration_change"
    job: Count = Field(description="Job of the operation.")
    step: Count = Field(description="Step of the operation within its job.")
    duration: TimeValue = Field(description="The new duration.")


DisruptionEvent = Annotated[MachineBreakdown | DurationChange, Field(discriminator="kind")]


class Disruption(BaseModel):
    """Events revealed at ``time``; everything that started before it is history."""

    model_config = ConfigDict(frozen=True)

    time: TimeValue = Field(description="Reveal time.")
    events: list[DisruptionEvent] = Field(default_factory=list, description="What happened.")

    @property
    def breakdowns(self) -> list[MachineBreakdown]:
        """The machine breakdowns."""
        return [e for e in self.events if isinstance(e, MachineBreakdown)]

    @property
    def duration_changes(self) -> dict[tuple[int, int], int]:
        """New duration per (job, step); a later event for the same operation wins."""
        return {(e.job, e.step): e.duration for e in self.events if isinstance(e, DurationChange)}

    def to_json(self) -> dict[str, Any]:
        """The disruption as the JSON document of docs/contracts.md."""
        return self.model_dump(mode="json")



def merged_downtimes(windows: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """``(machine, start, end)`` downtime windows, empty ones dropped and those of a machine that overlap or touch
    merged into one, sorted: when the machine is down, once each.

    Two breakdowns of one machine may overlap (two reports of one outage, a second failure before the first is
    mended); the machine is down over their union either way. Used as given, overlapping windows would be
    counted twice in a machine's load (a lower bound above every plan) and, as fixed intervals of a CP-SAT
    model that may not overlap, make every model infeasible.
    """
    out: list[tuple[int, int, int]] = []
    for m, lo, hi in sorted(w for w in windows if w[2] > w[1]):
        if out and out[-1][0] == m and lo <= out[-1][2]:
            out[-1] = (m, out[-1][1], max(out[-1][2], hi))
        else:
            out.append((m, lo, hi))
    return out


class DisruptionKind(StrEnum):
    """The disruption scenarios the generators produce."""

    BREAKDOWN = "breakdown"
    SHOCK = "shock"
    MIXED = "mixed"


def _work_left(schedule: Schedule, time: int) -> dict[int, int]:
    """Per machine, the processing time still ahead of it at ``time`` (the unfinished part of each op)."""
    left: dict[int, int] = {}
    for o in schedule.operations:
        left[o.machine] = left.get(o.machine, 0) + max(0, o.end - max(o.start, time))
    return left


def _breakdown(schedule: Schedule, time: int, length: float, machine: int | Literal["random"] | None,
               num_machines: int, rng: random.Random) -> MachineBreakdown:
    if machine == "random":
        chosen = rng.randrange(num_machines)
    elif machine is None:
        # The machine with the most work left hurts most when it stops: the interesting case to repair.
        left = _work_left(schedule, time)
        chosen = max(range(num_machines), key=lambda m: (left.get(m, 0), -m))
    else:
        chosen = machine
    return MachineBreakdown(machine=chosen, start=time, duration=max(1, round(length * schedule.makespan)))


def _breakdowns(schedule: Schedule, time: int, length: float, machine: int | Literal["random"] | None,
                count: int, num_machines: int, rng: random.Random) -> list[MachineBreakdown]:
    """``count`` distinct machines down at once; one machine draws exactly as before (same seed, same event)."""
    if count == 1:
        return [_breakdown(schedule, time, length, machine, num_machines, rng)]
    if machine == "random":
        chosen = sorted(rng.sample(range(num_machines), count))
    else:
        # The given machine (or the busiest one) first, then the next busiest: the hardest case to absorb.
        left = _work_left(schedule, time)
        ranked = sorted(range(num_machines), key=lambda m: (-left.get(m, 0), m))
        first = ranked[0] if machine is None else machine
        chosen = sorted([first, *[m for m in ranked if m != first][:count - 1]])
    duration = max(1, round(length * schedule.makespan))
    return [MachineBreakdown(machine=m, start=time, duration=duration) for m in chosen]


def _shock(instance: Instance, schedule: Schedule, time: int, increase: float, share: float,
           rng: random.Random, increase_max: float | None = None) -> list[DurationChange]:
    pending = sorted(o.key for o in schedule.operations if o.start >= time)
    if not pending:
        return []
    chosen = sorted(rng.sample(pending, max(1, round(share * len(pending)))))
    # Without a range every operation grows by the same fraction (and the draws stay as they always were).
    grow = [increase if increase_max is None else rng.uniform(increase, increase_max) for _ in chosen]
    return [DurationChange(job=j, step=s, duration=max(instance.duration(j, s) + 1,
                                                       math.ceil(instance.duration(j, s) * (1 + g))))
            for (j, s), g in zip(chosen, grow, strict=True)]


def generate_disruption(
    instance: Instance,
    schedule: Schedule,
    kind: DisruptionKind | str,
    *,
    seed: int = 0,
    machine: int | Literal["random"] | None = None,
    at: float | None = None,
    length: float | None = None,
    increase: float = 0.3,
    share: float = 0.2,
    machines: int = 1,
    increase_max: float | None = None,
    halve_mixed_share: bool = True,
) -> Disruption:
    """A seeded, reproducible disruption of ``schedule``.

    Args:
        instance: The instance the schedule plans.
        schedule: The plan in force.
        kind: ``breakdown``, ``shock`` (durations grow) or ``mixed`` (both).
        seed: Same seed, same disruption.
        machine: The machine that breaks down; ``"random"`` draws one; None takes the machine with the most
            work left at the reveal time.
        at: Reveal time as a fraction of the makespan; None draws it from [0.2, 0.5].
        length: Downtime as a fraction of the makespan; None draws it from [0.05, 0.15].
        increase: A shock lengthens an operation by this fraction (at least one time unit).
        share: A shock hits this fraction of the operations not yet started (at least one).
        machines: How many distinct machines break down at once, over the same window: ``machine`` (or the
            busiest) and the next busiest, or distinct random ones with ``machine="random"``.
        increase_max: Each shocked operation grows by its own fraction drawn from ``[increase,
            increase_max]``; None grows them all by ``increase``.
        halve_mixed_share: ``mixed`` shocks half of ``share`` (so that neither part drowns the other); False
            takes ``share`` as it is (the disruption families of :mod:`.disruption_families`).

    Raises:
        InputError: an unknown kind, a fraction outside [0, 1], a machine that does not exist, or a count of
            machines outside [1, machines of the instance].
    """
    try:
        kind = DisruptionKind(kind)
    except ValueError:
        raise InputError(f"unknown disruption kind {kind!r}; known: "
                         f"{', '.join(k.value for k in DisruptionKind)}") from None
    rng = random.Random(f"{seed}:{kind.value}")
    at = rng.uniform(0.2, 0.5) if at is None else at
    length = rng.uniform(0.05, 0.15) if length is None else length
    for name, value in (("at", at), ("length", length), ("share", share)):
        if not 0 <= value <= 1:
            raise InputError(f"{name} must be a fraction in [0, 1], got {value}")
    if increase < 0:
        raise InputError(f"increase must not be negative, got {increase}")
    if isinstance(machine, int) and not 0 <= machine < instance.num_machines:
        raise InputError(f"machine {machine} does not exist (machines 0..{instance.num_machines - 1})")
    if not 1 <= machines <= instance.num_machines:
        raise InputError(f"machines must be in [1, {instance.num_machines}], got {machines}")
    if increase_max is not None and increase_max < increase:
        raise InputError(f"increase_max ({increase_max}) must not be below increase ({increase})")
    if kind is not DisruptionKind.BREAKDOWN:
        # A grown duration is a time of the contract: beyond MAX_TIME it would fail the model's check (or, far
        # beyond, overflow the float it is computed in) after the draw, with no word of which argument did it.
        name, top = ("increase", increase) if increase_max is None else ("increase_max", increase_max)
        longest = max(d for ops in instance.jobs for _, d in ops)
        if longest * (1 + top) > MAX_TIME:
            raise InputError(f"{name} {top:g} would make an operation of {longest} take longer than {MAX_TIME} "
                             "time units")
    time = min(round(at * schedule.makespan), max(0, schedule.makespan - 1))
    events: list[MachineBreakdown | DurationChange] = []
    if kind in (DisruptionKind.BREAKDOWN, DisruptionKind.MIXED):
        events.extend(_breakdowns(schedule, time, length, machine, machines, instance.num_machines, rng))
    if kind in (DisruptionKind.SHOCK, DisruptionKind.MIXED):
        halve = kind is DisruptionKind.MIXED and halve_mixed_share
        events.extend(_shock(instance, schedule, time, increase, share / 2 if halve else share, rng,
                             increase_max))
    return Disruption(time=time, events=events)


def carry_forward(previous: Disruption | None, current: Disruption) -> Disruption:
    """The disruption in force at ``current.time``: earlier downtime that has not ended yet, every earlier
    duration change, then the new events. One rule for generated sequences, the pipeline and the controller.

    Raises:
        InputError: ``current`` is revealed before ``previous``.
    """
    if previous is None:
        return current
    if current.time < previous.time:
        raise InputError(f"reveal time {current.time} is earlier than the previous disruption's "
                         f"{previous.time}", where="time")
    keep = [e for e in previous.events if isinstance(e, DurationChange) or e.end > current.time]
    return Disruption(time=current.time, events=[*keep, *current.events])


def generate_sequence(
    instance: Instance,
    schedule: Schedule,
    kind: DisruptionKind | str,
    *,
    count: int = 3,
    seed: int = 0,
    commit: Callable[[Schedule, Disruption], Schedule] | None = None,
) -> list[Disruption]:
    """Several disruptions revealed one after another, each drawn against the plan then in force.

    Each disruption after the first carries forward the earlier events that still matter: downtime that
    has not ended by its reveal time and every earlier duration change, so that repairing it from the
    previously committed plan keeps honouring them.

    Args:
        instance: The instance.
        schedule: The initial plan.
        kind: The scenario of every disruption in the sequence.
        count: How many disruptions.
        seed: Same seed, same sequence (given the same ``commit``).
        commit: Turns (plan, disruption) into the next plan in force, typically a repair; None keeps the
            initial plan (the reveal times still increase).
    """
    if count < 1:
        raise InputError(f"count must be at least 1, got {count}")
    rng = random.Random(f"{seed}:sequence")
    fractions = sorted(rng.uniform(0.15, 0.7) for _ in range(count))
    plan, out = schedule, list[Disruption]()
    last_time = -1
    for i, frac in enumerate(fractions):
        new = generate_disruption(instance, plan, kind, seed=seed * 1000 + i,
                                  at=min(1.0, frac * schedule.makespan / max(1, plan.makespan)))
        time = max(new.time, last_time + 1)
        if time > plan.makespan:
            break
        fresh = [e.model_copy(update={"start": time}) if isinstance(e, MachineBreakdown) else e
                 for e in new.events]
        disruption = carry_forward(out[-1] if out else None, Disruption(time=time, events=fresh))
        out.append(disruption)
        last_time = time
        if commit is not None:
            plan = commit(plan, disruption)
    return out
