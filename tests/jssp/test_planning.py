"""Static planning: warm start, then CP-SAT and/or LNS by size."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveStatus
from alas_argo.jssp.dispatching import best_dispatch, dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import LNS_THRESHOLD, SolveMethod, plan
from alas_argo.jssp.searching import DTIME_PER_SECOND
from alas_argo.jssp.validate import validate


def test_auto_proves_small_optima(tiny: Instance, ft06: Instance) -> None:
    assert plan(tiny, time_limit=2).objective == 11
    result = plan(ft06, time_limit=2)
    assert (result.objective, result.status, result.bound) == (55, SolveStatus.OPTIMAL, 55)


def test_progress_starts_with_the_warm_start(ft06: Instance) -> None:
    events: list[ProgressEvent] = []
    plan(ft06, time_limit=2, progress=events.append)
    assert events[0].phase.startswith("dispatch:")
    assert events[0].makespan == best_dispatch(ft06)[1].makespan


@pytest.mark.parametrize("method", list(SolveMethod))
def test_every_method_is_valid_and_no_worse_than_dispatch(method: SolveMethod) -> None:
    instance = get_instance("la16")
    result = plan(instance, time_limit=1, method=method, rule="spt")
    assert validate(instance, result.schedule).valid
    assert result.objective <= dispatch(instance, "spt").makespan
    assert result.bound <= 945 <= result.objective  # la16's optimum


@pytest.mark.timeout(90)  # 6.2 s measured in the whole suite at load 5: 3x margin for a loaded machine, twice
def test_large_instances_go_through_lns() -> None:
    instance = get_instance("ta51")
    assert instance.num_operations > LNS_THRESHOLD
    warm = best_dispatch(instance)[1]
    events: list[ProgressEvent] = []
    result = plan(instance, time_limit=3, progress=events.append)
    assert validate(instance, result.schedule).valid
    assert result.objective < warm.makespan
    assert result.limits["deterministic_time"] <= (3 + 0.1) * DTIME_PER_SECOND  # the budget, in deterministic time
    assert {e.phase for e in events} >= {"cpsat"}


def test_bad_arguments(ft06: Instance) -> None:
    with pytest.raises(InputError, match="method"):
        plan(ft06, method="magic")
    with pytest.raises(InputError, match="time limit"):
        plan(ft06, time_limit=0)
    with pytest.raises(InputError, match="rule"):
        plan(ft06, rule="nope")
