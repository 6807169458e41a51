"""Deterministic limits and stoppable solves: the one place CP-SAT runs."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from alas_argo import interrupts
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.repair import repair
from alas_argo.jssp.searching import DTIME_PER_SECOND, MIN_CHARGE, SearchClock, new_solver, search_workers


@pytest.fixture(autouse=True)
def _no_stop_left_behind() -> Iterator[None]:
    interrupts.reset()
    yield
    interrupts.reset()


def test_a_deterministic_solver_has_one_worker_a_deterministic_limit_and_no_sigint_handler() -> None:
    solver = new_solver(seconds=2.0, workers=4, seed=3, deterministic=True)
    p = solver.parameters
    assert p.num_workers == 1 and p.random_seed == 3 and not p.catch_sigint_signal
    assert p.max_deterministic_time == pytest.approx(2.0 * DTIME_PER_SECOND)
    assert p.max_time_in_seconds >= 600  # a safety net only
    wall = new_solver(seconds=2.0, workers=4, seed=3, deterministic=False).parameters
    assert wall.num_workers == 4 and wall.max_time_in_seconds == 2.0 and not wall.catch_sigint_signal
    assert search_workers(4, deterministic=True) == 1


def test_a_deterministic_clock_counts_only_what_the_solves_spent() -> None:
    clock = SearchClock()
    assert clock.now() == 0.0
    clock.charge_nothing()
    assert clock.now() == MIN_CHARGE
    result = optimize(SolveRequest(get_instance("ft10"), time_limit=0.2, seed=1, clock=clock))
    assert clock.solves == 1 and result.limits["deterministic_time"] == round(clock.dtime, 6) > 0
    assert clock.now() == pytest.approx(MIN_CHARGE + clock.dtime / DTIME_PER_SECOND)


def test_the_same_request_gives_the_same_schedule() -> None:
    inst = get_instance("la16")
    runs = [optimize(SolveRequest(inst, time_limit=0.3, seed=5)).schedule for _ in range(2)]
    assert runs[0] == runs[1]
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, "mixed", seed=2)
    for method in ("lcrp", "full-stable"):
        a, b = (repair(inst, plan, d, method, budget=0.5, seed=1) for _ in range(2))
        assert a.schedule == b.schedule and a.limits == b.limits


def test_a_stop_requested_before_a_solve_keeps_it_from_starting() -> None:
    interrupts.request_stop(signal.SIGTERM)
    with pytest.raises(interrupts.Interrupted) as stopped:
        optimize(SolveRequest(get_instance("ft06"), time_limit=1))
    assert stopped.value.exit_code == 143 and stopped.value.where == "the CP-SAT solve"


def test_a_stop_ends_a_running_search_which_raises_in_its_own_thread() -> None:
    # A long search in a worker thread, stopped from another thread once it has found a first solution.
    found = threading.Event()
    outcome: dict[str, BaseException] = {}

    def progress(_event: ProgressEvent) -> None:
        found.set()

    def search() -> None:
        try:
            optimize(SolveRequest(get_instance("ta21"), time_limit=10_000, seed=1), progress=progress)
        except BaseException as e:
            outcome["error"] = e

    worker = threading.Thread(target=search)
    worker.start()
    assert found.wait(600)
    interrupts.request_stop(signal.SIGINT)
    worker.join(600)
    assert not worker.is_alive()
    assert isinstance(outcome.get("error"), interrupts.Interrupted)
    assert outcome["error"].exit_code == 130  # type: ignore[attr-defined]
