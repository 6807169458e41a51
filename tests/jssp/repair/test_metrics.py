"""The stability metrics a repair reports, on plans small enough to count by hand."""

from __future__ import annotations

from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.metrics import (
    moved_keys,
    moved_operations,
    resequenced_machines,
    total_start_shift,
    touched_machines,
    wip_moved,
)
from alas_argo.jssp.schedule import Schedule
from tests.jssp.strategies import plan_at

# Three jobs on three machines; job 2 is one operation on machine 2 that nothing disturbs.
INSTANCE = Instance(name="hand", jobs=[[(0, 3), (1, 2)], [(1, 2), (0, 3)], [(2, 1)]])



# Machine 1 idles over [2, 4) in the plan in force; the repair runs job 0's second operation first there (one
# unit earlier), job 1's two operations later, and leaves machine 0's order and job 2 alone.
BASELINE = plan_at(INSTANCE, {(0, 0): 0, (0, 1): 4, (1, 0): 0, (1, 1): 3, (2, 0): 0})
REPAIRED = plan_at(INSTANCE, {(0, 0): 0, (0, 1): 3, (1, 0): 5, (1, 1): 7, (2, 0): 0})


def test_moved_operations_are_those_whose_start_changed() -> None:
    assert moved_keys(BASELINE, REPAIRED) == {(0, 1), (1, 0), (1, 1)}
    assert moved_operations(BASELINE, REPAIRED) == 3
    assert moved_operations(BASELINE, BASELINE) == 0 and moved_keys(REPAIRED, REPAIRED) == set()


def test_total_start_shift_sums_the_distances_either_way() -> None:
    assert total_start_shift(BASELINE, REPAIRED) == 1 + 5 + 4  # one unit earlier counts as one, not minus one
    assert total_start_shift(REPAIRED, BASELINE) == 10
    # An operation the plan in force does not hold has no distance to count.
    partial = Schedule.from_operations(INSTANCE.name, [o for o in BASELINE.operations if o.key != (1, 1)])
    assert total_start_shift(partial, REPAIRED) == 1 + 5


def test_touched_and_resequenced_machines() -> None:
    assert touched_machines(BASELINE, REPAIRED) == [0, 1]  # machine 0: job 1's second operation starts later
    assert resequenced_machines(BASELINE, REPAIRED) == [1]  # machine 0 keeps its order, machine 1 does not
    assert touched_machines(BASELINE, BASELINE) == [] and resequenced_machines(BASELINE, BASELINE) == []


def test_wip_moved_counts_work_in_progress_whose_machine_order_changed() -> None:
    # Revealed at time 1: job 0's and job 1's first operations and job 2's are running (all started at 0); next
    # pending are job 0's second operation on machine 1 and job 1's second on machine 0. The repair changes the
    # positions of job 1's first operation (running) and job 0's second (staged next) on machine 1; job 1's
    # second starts later but is still second on machine 0.
    state = ExecutionState.at(INSTANCE, BASELINE, Disruption(time=1, events=[
        MachineBreakdown(machine=2, start=5, duration=1)]))
    assert state.wip() == {(0, 0), (1, 0), (2, 0), (0, 1), (1, 1)}
    assert wip_moved(state, REPAIRED) == 2
    assert wip_moved(state, BASELINE) == 0
    # Restricted to given operations: only those are counted.
    assert wip_moved(state, REPAIRED, [(0, 0), (2, 0)]) == 0
    assert wip_moved(state, REPAIRED, [(0, 1)]) == 1
    assert wip_moved(state, REPAIRED, [(1, 1)]) == 0
