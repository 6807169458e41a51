"""Stability metrics of a repair: how much of the plan in force it changed."""

from __future__ import annotations

from collections.abc import Iterable

from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.schedule import Schedule

__all__ = ["moved_keys", "moved_operations", "resequenced_machines", "total_start_shift", "touched_machines",
           "wip_moved"]


def moved_keys(baseline: Schedule, repaired: Schedule) -> set[Key]:
    """Operations whose start differs between the two plans."""
    before = baseline.starts()
    return {k for k, start in repaired.starts().items() if before.get(k) != start}


def moved_operations(baseline: Schedule, repaired: Schedule) -> int:
    """How many operations start at a different time."""
    return len(moved_keys(baseline, repaired))


def total_start_shift(baseline: Schedule, repaired: Schedule) -> int:
    """Sum over operations of ``|new start - old start|``."""
    before = baseline.starts()
    return sum(abs(start - before[k]) for k, start in repaired.starts().items() if k in before)


def _positions(schedule: Schedule) -> dict[Key, int]:
    return {k: i for seq in schedule.machine_sequences().values() for i, k in enumerate(seq)}


def wip_moved(state: ExecutionState, repaired: Schedule, keys: Iterable[Key] | None = None) -> int:
    """Work in progress whose machine order changed.

    Work in progress is every started operation plus the next pending one on each machine (what the shop
    floor has already staged); an operation counts when its position in its machine's sequence changed.
    """
    before, after = _positions(state.baseline), _positions(repaired)
    wip = state.wip() if keys is None else set(keys)
    return sum(1 for k in wip if before.get(k) != after.get(k))


def touched_machines(baseline: Schedule, repaired: Schedule) -> list[int]:
    """Machines with at least one operation whose start changed."""
    machines = {o.key: o.machine for o in repaired.operations}
    return sorted({machines[k] for k in moved_keys(baseline, repaired)})


def resequenced_machines(baseline: Schedule, repaired: Schedule) -> list[int]:
    """Machines whose order of operations differs between the two plans."""
    before = baseline.machine_sequences()
    return sorted(m for m, seq in repaired.machine_sequences().items() if before.get(m) != seq)
