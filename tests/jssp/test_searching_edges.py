"""The edges of the one place CP-SAT runs (alas_argo.jssp.searching): where a solve runs (a helper thread only
on the main thread with the stop handlers installed), an error inside ``solve`` raised in the caller's frame,
the default ``where`` of a stopped solve, the seed's int32 boundaries, the wall-clock safety net of a
deterministic limit, at least one worker, a wall clock's time, and what joining side-by-side searches adds to
what the clock already held. No test here depends on how fast the machine is: the solver is a stand-in where
only the calling convention matters, and the wall clock reads a fake ``time.monotonic``."""

from __future__ import annotations

import signal
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from alas_argo import interrupts
from alas_argo.jssp import searching
from alas_argo.jssp.searching import (
    DTIME_PER_SECOND,
    MIN_CHARGE,
    SearchClock,
    add_hints,
    new_model,
    new_solver,
    run_solver,
    search_workers,
)
from alas_argo.seeds import MAX_SEED


class _Solver:
    """A stand-in for ``CpSolver``: records the thread its ``solve`` ran on, and raises ``error`` if given."""

    def __init__(self, error: BaseException | None = None, deterministic_time: float = 0.0) -> None:
        self.error = error
        self.deterministic_time = deterministic_time
        self.thread: threading.Thread | None = None

    def solve(self, model: Any, callback: Any = None) -> str:
        self.thread = threading.current_thread()
        if self.error is not None:
            raise self.error
        return "solved"

    def stop_search(self) -> None:  # interrupts.Stoppable
        pass


def test_on_the_main_thread_with_the_handlers_installed_the_solve_runs_in_a_daemon_helper_thread() -> None:
    # Python runs signal handlers only on the main thread between bytecodes: the search must leave it free.
    solver = _Solver()
    with interrupts.handling_signals():
        assert run_solver(solver, new_model()) == "solved"  # type: ignore[arg-type]
    assert solver.thread is not None and solver.thread is not threading.main_thread()
    assert solver.thread.name == "alas-solve" and solver.thread.daemon


def test_without_the_handlers_or_off_the_main_thread_the_solve_runs_in_the_callers_thread() -> None:
    solver = _Solver()
    assert run_solver(solver, new_model()) == "solved"  # type: ignore[arg-type]
    assert solver.thread is threading.main_thread()
    elsewhere = _Solver()
    caller = threading.Thread(target=lambda: run_solver(elsewhere, new_model()))  # type: ignore[arg-type]
    with interrupts.handling_signals():
        caller.start()
        caller.join(60)
    assert elsewhere.thread is caller


@pytest.mark.parametrize("handlers", [True, False])
def test_an_error_inside_the_solve_is_raised_to_the_caller_and_nothing_is_charged(handlers: bool) -> None:
    clock = SearchClock()
    solver = _Solver(ValueError("the model is broken"), deterministic_time=0.3)
    if handlers:
        with interrupts.handling_signals(), pytest.raises(ValueError, match="the model is broken"):
            run_solver(solver, new_model(), clock)  # type: ignore[arg-type]
        assert solver.thread is not threading.main_thread()  # raised in the helper, re-raised here
    else:
        with pytest.raises(ValueError, match="the model is broken"):
            run_solver(solver, new_model(), clock)  # type: ignore[arg-type]
    assert clock.solves == 0 and clock.now() == 0.0


def test_a_stopped_solve_says_a_solve_unless_told_what_it_was() -> None:
    interrupts.request_stop(signal.SIGINT)
    with pytest.raises(interrupts.Interrupted) as stopped:
        run_solver(_Solver(), new_model())  # type: ignore[arg-type]
    assert stopped.value.where == "a solve" and str(stopped.value) == "interrupted by SIGINT during a solve"
    with pytest.raises(interrupts.Interrupted) as named:
        run_solver(_Solver(), new_model(), where="LCRP's subproblem")  # type: ignore[arg-type]
    assert named.value.where == "LCRP's subproblem"


@pytest.mark.parametrize(("seed", "given"), [(-MAX_SEED - 1, -MAX_SEED - 1), (-MAX_SEED, -MAX_SEED),
                                            (-MAX_SEED - 2, MAX_SEED)])
def test_the_least_int32_seed_is_kept_and_one_below_it_is_folded(seed: int, given: int) -> None:
    # int32's range is [-MAX_SEED - 1, MAX_SEED]: its least value is a valid seed as it is.
    assert new_solver(seconds=1, workers=1, seed=seed, deterministic=True).parameters.random_seed == given


@pytest.mark.parametrize(("seconds", "net"), [(0.5, 600.0), (3.0, 600.0), (10.0, 2000.0)])
def test_a_deterministic_limit_keeps_a_wall_clock_net_of_600_s_or_200_times_the_budget(seconds: float,
                                                                                         net: float) -> None:
    p = new_solver(seconds=seconds, workers=2, seed=0, deterministic=True).parameters
    assert p.max_time_in_seconds == net
    assert p.max_deterministic_time == pytest.approx(seconds * DTIME_PER_SECOND)


@pytest.mark.parametrize("asked", [-1, 0, 1])
def test_a_wall_clock_search_has_at_least_one_worker_and_one_means_one(asked: int) -> None:
    assert search_workers(asked, deterministic=False) == 1
    assert new_solver(seconds=1, workers=asked, seed=0, deterministic=False).parameters.num_workers == 1


def test_a_wall_clock_tells_the_time_passed_since_it_started_and_what_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([100.0, 102.5, 104.0])
    monkeypatch.setattr(searching, "time", SimpleNamespace(monotonic=lambda: next(readings)))
    clock = SearchClock(deterministic=False)
    assert clock.now() == 2.5
    assert clock.left(10.0) == 6.0


def test_what_is_left_of_a_deterministic_budget_is_the_budget_less_the_time_charged() -> None:
    clock = SearchClock()
    clock.charge(_Solver(deterministic_time=0.3))  # type: ignore[arg-type]
    assert clock.left(5.0) == pytest.approx(5.0 - 0.3 / DTIME_PER_SECOND)


def test_joining_forks_adds_to_what_the_clock_already_held() -> None:
    clock = SearchClock()
    clock.charge(_Solver(deterministic_time=0.3))  # type: ignore[arg-type]
    forks = [clock.fork() for _ in range(2)]
    forks[0].charge(_Solver(deterministic_time=0.15))  # type: ignore[arg-type]
    forks[1].charge(_Solver(deterministic_time=0.03))  # type: ignore[arg-type]
    clock.join(forks)
    assert clock.solves == 3 and clock.dtime == pytest.approx(0.48)
    assert clock.now() == pytest.approx((0.3 + 0.15) / DTIME_PER_SECOND)


def test_joining_no_forks_changes_nothing() -> None:
    clock = SearchClock()
    clock.charge_nothing()
    clock.join([])
    assert clock.now() == MIN_CHARGE and clock.solves == 0 and clock.dtime == 0.0


def test_add_hints_falls_back_to_cp_sat_for_integer_variables_beside_a_negated_literal() -> None:
    one, batch = new_model(), new_model()
    for model in (one, batch):
        x = model.new_int_var(0, 10, "x")
        flag = model.new_bool_var("flag")
        pairs = [(x, 7), (~flag, True)]
        if model is one:
            model.add_hint(x, 7)
            model.add_hint(~flag, True)
        else:
            add_hints(model, pairs)
    assert list(batch.proto.solution_hint.vars) == list(one.proto.solution_hint.vars) == [0, 1]
    assert list(batch.proto.solution_hint.values) == list(one.proto.solution_hint.values) == [7, 0]
