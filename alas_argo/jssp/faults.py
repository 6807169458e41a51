"""Seeded fault injection: break a valid schedule in labelled, detectable ways.

Used to prove the validator (each label must come back as a violation with the same code and job/step)
and to exercise repair. Every fault is placed so that it *must* produce its code whatever else was
injected: each fault records the operations its detection depends on, and later faults neither touch
nor depend on those. Extra violations may appear as side effects (moving an operation earlier can also
overlap a neighbour); the labelled one is guaranteed when the input schedule is valid.

This module deliberately does not call the validator: it reasons about the schedule directly. The labels
are defined in :mod:`alas_argo.jssp.fault_labels` (re-exported here), the injectors one per kind in
:mod:`alas_argo.jssp.fault_injectors`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.fault_injectors import INJECTORS, Workbench
from alas_argo.jssp.fault_labels import FaultInjection, FaultKind, InjectedFault
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

__all__ = ["FaultInjection", "FaultKind", "InjectedFault", "applicable_kinds", "inject_faults"]


def applicable_kinds(disruption: Disruption | None = None, baseline: Schedule | None = None) -> list[FaultKind]:
    """The fault kinds that the given context makes possible, in enum order."""
    kinds: list[FaultKind] = [k for k in FaultKind if k not in (FaultKind.STARTED_IN_PAST, FaultKind.DOWNTIME_OVERLAP,
                                                FaultKind.FROZEN_MOVED)]
    if disruption is not None:
        if baseline is not None and disruption.time >= 1:
            kinds.append(FaultKind.STARTED_IN_PAST)
        if any(b.duration > 0 for b in disruption.breakdowns):
            kinds.append(FaultKind.DOWNTIME_OVERLAP)
        if baseline is not None:
            kinds.append(FaultKind.FROZEN_MOVED)
    return kinds


def inject_faults(instance: Instance, schedule: Schedule, *, kinds: Sequence[FaultKind] | None = None,
                  count: int = 1, seed: int = 0, disruption: Disruption | None = None,
                  baseline: Schedule | None = None) -> FaultInjection:
    """Inject ``count`` labelled faults into a valid schedule, reproducibly.

    Fault ``i`` has kind ``kinds[i % len(kinds)]``; with ``kinds=None`` the kinds the context allows
    (see :func:`applicable_kinds`) are used in a seeded random order, skipping a kind that no operation
    suits any more. Targets are drawn with
    ``random.Random(seed)``, so the same arguments give the same result.

    Args:
        instance: The instance the schedule solves.
        schedule: A valid schedule (under ``disruption`` and ``baseline`` when given).
        kinds: Which fault kinds to inject, used in turn.
        count: How many faults to inject.
        seed: Seed of the target choice.
        disruption: The disruption the schedule answers; needed for the disruption-aware kinds.
        baseline: The plan in force before the disruption; needed for started_in_past and frozen_moved.

    Returns:
        The faulty schedule (makespan recomputed) and one label per fault.

    Raises:
        InputError: ``count`` is negative, ``kinds`` is empty, or a fault cannot be placed (no suitable
            operation left, or the kind needs a disruption or baseline that was not given).
    """
    if count < 0:
        raise InputError(f"fault count must be >= 0, got {count}")
    rng = random.Random(seed)
    if kinds is None:
        order = applicable_kinds(disruption, baseline)
        rng.shuffle(order)
    else:
        order = [FaultKind(k) for k in kinds]
        if not order:
            raise InputError("no fault kinds given")
    work = Workbench(instance, schedule, disruption, baseline, rng)
    faults: list[InjectedFault] = []
    for i in range(count):
        # An explicit kind must be honoured; the default mix moves on to the next kind that still fits.
        tries = [order[i % len(order)]] if kinds is not None else order[i % len(order):] + order[:i % len(order)]
        fault, kind = None, tries[0]
        for kind in tries:
            if (fault := INJECTORS[kind](work)) is not None:
                break
        if fault is None:
            # The default mix tried every kind: naming only the last one tried would blame one at random.
            what = f"of kind {kind}" if len(tries) == 1 else f"of any kind ({', '.join(map(str, tries))} tried)"
            raise InputError(f"cannot inject fault {i} {what}: no suitable operation, or it needs a "
                             "disruption/baseline that was not given", where=schedule.instance)
        faults.append(fault)
    return FaultInjection(schedule=work.schedule(schedule.instance), faults=faults)
