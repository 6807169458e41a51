"""Disruption families: seeded distributions over the generator's parameters, for held-out repair benchmarks.

The three kinds of :func:`~alas_argo.jssp.disruption.generate_disruption` draw from narrow ranges (reveal at
20-50 % of the makespan, one machine down for 5-15 %, a fixed +30 % shock on 20 % of the pending operations).
A repair tuned on those can be fragile outside them, so each family below draws the parameters themselves
from a wider range, then calls the same generator: the disruption of (family, seed, plan) is reproducible,
and ``alas disrupt --family F --seed S`` gives the same event a benchmark row was measured on.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, DisruptionKind, generate_disruption

if TYPE_CHECKING:
    from alas_argo.jssp.instance import Instance
    from alas_argo.jssp.schedule import Schedule

__all__ = ["FAMILIES", "DisruptionFamily", "FamilyDraw", "draw_family", "generate_family", "get_family",
           "is_family"]

Range = tuple[float, float]


@dataclass(frozen=True)
class DisruptionFamily:
    """Ranges the parameters of one disruption are drawn from (uniformly; machines as integers)."""

    name: str
    kind: DisruptionKind
    description: str
    at: Range = (0.1, 0.7)  #: reveal time, fraction of the makespan
    length: Range = (0.05, 0.15)  #: downtime, fraction of the makespan
    machines: tuple[int, int] = (1, 1)  #: machines down at once
    random_machines: bool = False  #: draw the machines instead of taking the busiest
    share: Range = (0.2, 0.2)  #: share of the pending operations a shock hits
    increase: Range = (0.3, 0.3)  #: per-operation growth, drawn per operation when the range is not a point


@dataclass(frozen=True)
class FamilyDraw:
    """The parameters drawn for one seed: what ``generate_disruption`` was called with."""

    family: str
    seed: int
    at: float
    length: float
    machines: int
    share: float
    increase: float
    increase_max: float

    def as_dict(self) -> dict[str, Any]:
        """The draw as plain values, for reports."""
        return dict(self.__dict__)


FAMILIES: dict[str, DisruptionFamily] = {f.name: f for f in (
    DisruptionFamily("reveal-sweep", DisruptionKind.BREAKDOWN,
                     "the busiest machine down for 5-15 %, revealed anywhere in 10-70 % of the makespan"),
    DisruptionFamily("long-breakdown", DisruptionKind.BREAKDOWN,
                     "the busiest machine down for 2-30 % of the makespan, revealed at 20-50 %",
                     at=(0.2, 0.5), length=(0.02, 0.30)),
    DisruptionFamily("multi-breakdown", DisruptionKind.BREAKDOWN,
                     "2-4 random machines down at once for 2-30 %, revealed at 10-70 %",
                     length=(0.02, 0.30), machines=(2, 4), random_machines=True),
    DisruptionFamily("shock-sweep", DisruptionKind.SHOCK,
                     "5-40 % of the pending operations each x1.1-x2.0 longer, revealed at 10-70 %",
                     share=(0.05, 0.40), increase=(0.1, 1.0)),
    DisruptionFamily("mixture", DisruptionKind.MIXED,
                     "1-3 random machines down for 2-30 % and 5-40 % of the pending operations x1.1-x2.0, "
                     "revealed at 10-70 %",
                     length=(0.02, 0.30), machines=(1, 3), random_machines=True, share=(0.05, 0.40),
                     increase=(0.1, 1.0)),
)}


def is_family(name: str) -> bool:
    """Whether ``name`` is a disruption family (rather than a plain kind)."""
    return name in FAMILIES


def get_family(name: str) -> DisruptionFamily:
    """The family called ``name``.

    Raises:
        InputError: no such family; the message lists the known ones.
    """
    try:
        return FAMILIES[name]
    except KeyError:
        raise InputError(f"unknown disruption family {name!r}; known: {', '.join(FAMILIES)}") from None


def draw_family(name: str, seed: int, num_machines: int) -> FamilyDraw:
    """The parameters family ``name`` draws for ``seed`` (its own random stream: same seed, same draw)."""
    family = get_family(name)
    rng = random.Random(f"{seed}:family:{family.name}")
    lo, hi = family.machines
    return FamilyDraw(family=family.name, seed=seed, at=rng.uniform(*family.at), length=rng.uniform(*family.length),
                      machines=min(num_machines, rng.randint(lo, hi)), share=rng.uniform(*family.share),
                      increase=family.increase[0], increase_max=family.increase[1])


def generate_family(instance: Instance, schedule: Schedule, name: str, *, seed: int = 0) -> Disruption:
    """A seeded disruption of ``schedule`` drawn from family ``name``.

    Raises:
        InputError: an unknown family.
    """
    family = get_family(name)
    d = draw_family(name, seed, instance.num_machines)
    return generate_disruption(
        instance, schedule, family.kind, seed=seed, machine="random" if family.random_machines else None, at=d.at,
        length=d.length, increase=d.increase, share=d.share, machines=d.machines,
        increase_max=None if d.increase_max == d.increase else d.increase_max, halve_mixed_share=False)
