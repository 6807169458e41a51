"""The Instance model and the tiny fixture's optimum."""

from __future__ import annotations

import itertools

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance


def _makespan_of_sequences(inst: Instance, orders: dict[int, tuple[tuple[int, int], ...]]) -> int | None:
    """Semi-active decode of fixed machine orders; None when the orders deadlock."""
    start: dict[tuple[int, int], int] = {}
    pending = {m: list(seq) for m, seq in orders.items()}
    progress = True
    while progress:
        progress = False
        for m, seq in pending.items():
            if not seq:
                continue
            j, s = seq[0]
            if s > 0 and (j, s - 1) not in start:
                continue
            prev_job = start[(j, s - 1)] + inst.duration(j, s - 1) if s > 0 else 0
            done_on_m = [start[k] + inst.duration(*k) for k in orders[m] if k in start]
            start[(j, s)] = max([prev_job, *done_on_m])
            seq.pop(0)
            progress = True
    if len(start) < inst.num_operations:
        return None
    return max(start[k] + inst.duration(*k) for k in start)


def test_tiny_optimum_is_11_by_enumeration(tiny: Instance) -> None:
    per_machine: dict[int, list[tuple[int, int]]] = {}
    for j, ops in enumerate(tiny.jobs):
        for s, (m, _) in enumerate(ops):
            per_machine.setdefault(m, []).append((j, s))
    machines = sorted(per_machine)
    best = min(
        v for combo in itertools.product(*(itertools.permutations(per_machine[m]) for m in machines))
        if (v := _makespan_of_sequences(tiny, dict(zip(machines, combo, strict=True)))) is not None
    )
    assert best == 11


def test_properties(ft06: Instance) -> None:
    assert (ft06.num_jobs, ft06.num_machines, ft06.num_operations) == (6, 6, 36)
    assert ft06.machine(0, 0) == 2 and ft06.duration(0, 0) == 1
    assert ft06.horizon() == sum(d for ops in ft06.jobs for _, d in ops)
    assert Instance.model_validate(ft06.to_json()) == ft06


@pytest.mark.parametrize("jobs", [[], [[]], [[(0, -1)]], [[(-1, 3)]]])
def test_rejects_malformed(jobs: list) -> None:
    with pytest.raises((InputError, ValueError)):
        Instance(name="bad", jobs=jobs)
