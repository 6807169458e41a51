"""LNS over machine sequences: exact evaluation, never worse, valid results."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, SolveStatus
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.lns import LnsConfig, improve
from alas_argo.jssp.searching import DTIME_PER_SECOND
from alas_argo.jssp.sequencing import Sequences
from alas_argo.jssp.validate import validate


def test_sequences_round_trip_and_tails(ft06: Instance) -> None:
    schedule = dispatch(ft06, "mwkr")
    seqs = Sequences.from_schedule(ft06, schedule, durations={})
    again = seqs.to_schedule()
    assert validate(ft06, again).valid
    assert again.makespan <= schedule.makespan  # left-shifted, never later
    tails = seqs.tails()
    critical = seqs.critical_path()
    assert critical
    assert all(seqs.start[op] + seqs.duration[op] + tails[op] == seqs.makespan for op in critical)
    assert all(seqs.start[op] + seqs.duration[op] + tails[op] <= seqs.makespan for op in range(len(tails)))


def test_resequencing_into_a_cycle_is_rejected(tiny: Instance) -> None:
    seqs = Sequences.from_schedule(tiny, dispatch(tiny, "spt"), durations={})
    # Operation ids: job 0 -> 0, 1, 2; job 1 -> 3, 4, 5; job 2 -> 6, 7, 8. Putting (2, 2) first on machine
    # 0 and (0, 1) first on machine 1 closes the cycle 6 -> 7 -> 8 -> 0 -> 1 -> 6.
    assert seqs.resequenced({8: 0, 0: 1, 3: 2, 1: 0, 6: 1, 5: 2}) is None
    acyclic = seqs.resequenced({0: 0, 3: 1, 8: 2})
    assert acyclic is not None and validate(tiny, acyclic.to_schedule()).valid


def test_improve_never_worse_and_valid() -> None:
    instance = get_instance("la21")
    start = dispatch(instance, "spt")
    result = improve(SolveRequest(instance, time_limit=1.0, seed=2), start,
                     config=LnsConfig(initial_size=20, move_time=0.2))
    assert validate(instance, result.schedule).valid
    assert result.objective <= start.makespan
    assert result.improved == (result.objective < start.makespan)
    # The budget is deterministic time, spent over many moves (the last one may overrun by its second phase).
    assert result.limits["deterministic"] and result.limits["solves"] > 1
    assert result.limits["deterministic_time"] <= (1.0 + 0.1) * DTIME_PER_SECOND


def test_improve_stops_at_the_bound(ft06: Instance) -> None:
    result = improve(SolveRequest(ft06, time_limit=5, seed=1), dispatch(ft06, "spt"), bound=55)
    assert result.objective == 55 and result.status is SolveStatus.OPTIMAL
    assert result.limits["deterministic_time"] < 5 * DTIME_PER_SECOND  # the bound stopped it, not the budget


def test_improve_rejects_disrupted_requests(ft06: Instance) -> None:
    with pytest.raises(InputError, match="static"):
        improve(SolveRequest(ft06, downtimes=[(0, 0, 5)]), dispatch(ft06, "spt"))
