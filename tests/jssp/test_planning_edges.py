"""The static planner's edges: the trivial bound and the warm start's shortcut, what a result reports (status,
bound, `improved`, the limits actually used), the method and rule words, and its refusals word for word."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp import planning
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveStatus
from alas_argo.jssp.dispatching import best_dispatch, dispatch
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.lns import LnsConfig
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import SolveMethod, plan
from alas_argo.jssp.searching import DTIME_PER_SECOND
from alas_argo.jssp.validate import validate


def instance(name: str, jobs: list[list[tuple[int, int]]]) -> Instance:
    return Instance(name=name, jobs=jobs, lower_bound=None, upper_bound=None)


def bound_by_hand(inst: Instance) -> int:
    """The longest job or the busiest machine, whichever is longer."""
    loads: dict[int, int] = {}
    for ops in inst.jobs:
        for m, d in ops:
            loads[m] = loads.get(m, 0) + d
    return max(max(sum(d for _, d in ops) for ops in inst.jobs), max(loads.values()))


NO_SOLVE = {"deterministic": True, "dtime_per_second": DTIME_PER_SECOND, "search_workers": 1, "search_streams": 1,
            "deterministic_time": 0.0, "solves": 0, "nominal_seconds": 0.0}


@pytest.mark.parametrize("method", list(SolveMethod))
def test_a_warm_start_on_the_trivial_bound_is_returned_as_optimal_without_a_solve(method: SolveMethod) -> None:
    # One job on two machines: the job's length (7) is the bound, above either machine's load (3, 4).
    one = instance("one", [[(0, 3), (1, 4)]])
    result = plan(one, method=method, time_limit=5)
    assert (result.status, result.objective, result.bound, result.improved) == (SolveStatus.OPTIMAL, 7, 7, True)
    assert result.total_shift is None
    assert dict(result.limits) == NO_SOLVE  # no search ran: none is reported
    # One machine, two jobs: the machine's load (5) is the bound, above either job (2, 3).
    result = plan(instance("one-machine", [[(0, 2)], [(0, 3)]]), method=method)
    assert (result.status, result.objective, result.bound) == (SolveStatus.OPTIMAL, 5, 5)


def test_dispatch_only_reports_the_rule_s_plan_and_the_trivial_bound() -> None:
    ft06 = get_instance("ft06")
    events: list[ProgressEvent] = []
    result = plan(ft06, method="DISPATCH", rule="SPT", progress=events.append)  # words in any case
    spt = dispatch(ft06, "spt")
    assert result.schedule == spt
    assert (result.status, result.objective, result.bound) == (SolveStatus.FEASIBLE, spt.makespan,
                                                               bound_by_hand(ft06))
    assert dict(result.limits) == NO_SOLVE
    assert [(e.phase, e.makespan, e.bound) for e in events] == [("dispatch:spt", spt.makespan, bound_by_hand(ft06))]
    assert 0 <= events[0].seconds <= result.seconds


def test_without_a_rule_the_best_rule_is_the_warm_start_and_named() -> None:
    tiny = instance("tiny", [[(0, 3), (1, 2), (2, 2)], [(0, 2), (2, 1), (1, 4)], [(1, 4), (2, 3), (0, 1)]])
    events: list[ProgressEvent] = []
    result = plan(tiny, method=SolveMethod.DISPATCH, seed=3, progress=events.append)
    rule, warm = best_dispatch(tiny, seed=3)
    assert events[0].phase == f"dispatch:{rule.value}"
    assert result.schedule == warm and result.bound == bound_by_hand(tiny) == 10


@pytest.mark.parametrize("method", ["cpsat", "auto"])
def test_a_solve_reports_its_own_limits_and_a_bound_no_higher_than_the_plan(method: str) -> None:
    tiny = instance("tiny", [[(0, 3), (1, 2), (2, 2)], [(0, 2), (2, 1), (1, 4)], [(1, 4), (2, 3), (0, 1)]])
    warm = best_dispatch(tiny)[1]
    result = plan(tiny, method=method, time_limit=1, workers=3)
    assert validate(tiny, result.schedule).valid
    assert (result.status, result.objective, result.bound) == (SolveStatus.OPTIMAL, 11, 11)
    assert result.improved is (result.objective < warm.makespan) is False  # the warm start was already optimal
    assert result.limits["solves"] == 1 and result.limits["deterministic"] is True
    assert result.limits["search_workers"] == 1  # one worker under a deterministic limit, whatever was asked
    wall = plan(tiny, method=method, time_limit=1, workers=3, deterministic=False)
    assert wall.limits["deterministic"] is False and wall.limits["search_workers"] == 3
    assert "nominal_seconds" not in wall.limits


def test_lns_keeps_the_trivial_bound_and_spends_its_budget_only() -> None:
    la16 = get_instance("la16")
    warm = dispatch(la16, "spt")
    result = plan(la16, method="lns", rule="spt", time_limit=0.3)
    assert validate(la16, result.schedule).valid
    assert result.objective <= warm.makespan and result.improved is (result.objective < warm.makespan)
    assert result.bound == bound_by_hand(la16) < result.objective  # LNS proves nothing, the bound stays
    assert 0 < result.limits["deterministic_time"] <= 0.3 * DTIME_PER_SECOND * 1.05
    assert result.limits["solves"] >= 1


def test_deterministic_limits_give_the_same_plan_twice() -> None:
    la16 = get_instance("la16")
    first = plan(la16, method="lns", time_limit=0.2, seed=5)
    again = plan(la16, method="lns", time_limit=0.2, seed=5)
    assert first.schedule == again.schedule
    assert first.limits == again.limits


def test_refusals_name_what_was_wrong() -> None:
    tiny = instance("tiny", [[(0, 1)]])
    with pytest.raises(InputError) as bad_method:
        plan(tiny, method="magic")
    assert str(bad_method.value) == "unknown method 'magic'; known: auto, cpsat, lns, dispatch"
    assert bad_method.value.__cause__ is None and bad_method.value.__suppress_context__
    for limit in (0, -1.5):
        with pytest.raises(InputError) as bad_limit:
            plan(tiny, time_limit=limit)
        assert str(bad_limit.value) == f"time limit must be positive, got {limit:g}"
    assert plan(tiny, time_limit=0.01).objective == 1  # any positive budget is taken


def phases(events: list[ProgressEvent]) -> set[str]:
    return {e.phase.split(":")[0] for e in events}


def test_auto_gives_cpsat_alone_up_to_the_threshold_and_cpsat_then_lns_above_it() -> None:
    """la21 has exactly LNS_THRESHOLD (150) operations, swv01 200; the budget is deterministic, so the number of
    solves is a fact of the instance, not of the machine."""
    events: list[ProgressEvent] = []
    at = plan(get_instance("la21"), time_limit=0.3, progress=events.append)
    assert get_instance("la21").num_operations == 150
    assert at.limits["solves"] == 1 and phases(events) == {"dispatch", "cpsat"}
    assert at.bound < at.objective  # not proven: LNS would have had its turn had AUTO split the budget
    # The solve ran on the deterministic budget it reports, to its end (a wall-limited solve would stop
    # elsewhere, on more workers, differently on every machine).
    assert at.limits["deterministic_time"] == pytest.approx(0.3 * DTIME_PER_SECOND, rel=0.02)

    swv01 = get_instance("swv01")
    warm = best_dispatch(swv01)[1]
    events = []
    above = plan(swv01, time_limit=0.3, progress=events.append)
    assert validate(swv01, above.schedule).valid and above.objective <= warm.makespan
    assert above.limits["solves"] > 1 and phases(events) == {"dispatch", "cpsat", "lns"}
    assert above.bound >= bound_by_hand(swv01) and above.bound <= above.objective
    assert above.limits["deterministic_time"] <= 0.3 * DTIME_PER_SECOND * 1.05  # both phases on one budget

    events = []
    alone = plan(swv01, method="cpsat", time_limit=0.3, progress=events.append)
    assert alone.limits["solves"] == 1 and phases(events) == {"dispatch", "cpsat"}
    events = []
    lns = plan(swv01, method="lns", time_limit=0.3, progress=events.append)
    assert lns.limits["solves"] > 1 and phases(events) == {"dispatch", "lns"}


def test_auto_keeps_the_first_solve_when_it_proves_optimality_on_a_large_instance() -> None:
    # 17 disjoint copies of the tiny instance: 153 operations, trivial bound 10, optimum 11, proven at once.
    tiny = [[(0, 3), (1, 2), (2, 2)], [(0, 2), (2, 1), (1, 4)], [(1, 4), (2, 3), (0, 1)]]
    copies = instance("tinies", [[(m + 3 * k, d) for m, d in job] for k in range(17) for job in tiny])
    assert copies.num_operations > 150
    events: list[ProgressEvent] = []
    result = plan(copies, time_limit=2, progress=events.append)
    assert (result.status, result.objective, result.bound) == (SolveStatus.OPTIMAL, 11, 11)
    assert result.limits["solves"] == 1 and "lns" not in phases(events)


def test_the_lns_tuning_and_the_seed_reach_the_search() -> None:
    la16 = get_instance("la16")
    default = plan(la16, method="lns", time_limit=0.2)
    short_moves = plan(la16, method="lns", time_limit=0.2, lns_config=LnsConfig(move_time=0.01))
    assert short_moves.limits["solves"] > default.limits["solves"]
    assert plan(la16, method="lns", time_limit=0.2, seed=0).schedule == default.schedule  # seed 0 by default
    assert len({plan(la16, method="lns", time_limit=0.2, seed=s).schedule.makespan for s in (1, 2, 3)}
               | {default.schedule.makespan}) > 1


def test_the_random_rule_takes_the_seed() -> None:
    ft06 = get_instance("ft06")
    assert plan(ft06, method="dispatch", rule="random", seed=7).schedule == dispatch(ft06, "random", seed=7)
    assert plan(ft06, method="dispatch", rule="random").schedule == dispatch(ft06, "random", seed=0)


def test_defaults_are_deterministic_limits_and_two_workers() -> None:
    ft06 = get_instance("ft06")
    assert plan(ft06, method="dispatch").limits["deterministic"] is True
    assert plan(ft06, method="dispatch", deterministic=False).limits["search_workers"] == 2
    assert plan(ft06, method="dispatch", deterministic=False, workers=3).limits["search_workers"] == 3


class SteppingClock:
    """Stands in for the planner's `time` module: every reading is 100 s after the one before."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        self.now += 100.0
        return self.now


def test_seconds_are_measured_from_the_start_and_a_deterministic_budget_ignores_the_wall_clock(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planning, "time", SteppingClock())
    ft06 = get_instance("ft06")
    events: list[ProgressEvent] = []
    result = plan(ft06, method="dispatch", progress=events.append)
    assert (events[0].seconds, result.seconds) == (100.0, 200.0)  # readings: start, progress, result
    # 100 s of "wall time" pass between two readings; a deterministic budget does not see them: LNS still
    # gets its 0.3 s, not the 0.05 s floor a wall-clock budget would leave.
    la16 = get_instance("la16")
    result = plan(la16, method="lns", time_limit=0.3)
    assert result.seconds == 100.0  # no progress: two readings
    assert result.limits["deterministic_time"] > 0.2 * DTIME_PER_SECOND
