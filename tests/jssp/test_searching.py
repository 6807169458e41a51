"""Deterministic limits and stoppable solves: the one place CP-SAT runs."""

from __future__ import annotations

import signal
import threading

import pytest
from ortools.sat.python import cp_model

from alas_argo import interrupts
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.cpsat import SolveRequest, optimize
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.repair import repair
from alas_argo.jssp.searching import (
    DTIME_PER_SECOND,
    MIN_CHARGE,
    UNCHARGED_OPERATIONS,
    SearchClock,
    add_hints,
    new_model,
    new_solver,
    run_solver,
    search_workers,
)
from alas_argo.seeds import MAX_SEED


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


def test_a_floor_on_a_charge_tops_up_a_deterministic_clock_and_never_takes_time_back() -> None:
    clock = SearchClock()
    began = clock.now()
    clock.charge_nothing()
    clock.charge_at_least(began, 0.01)
    assert clock.now() == pytest.approx(0.01) and clock.dtime == 0.0  # time charged, no solver work recorded
    clock.charge_at_least(began, 0.005)
    assert clock.now() == pytest.approx(0.01)
    # No wall-clock case: a wall clock's now() is the time passed, whatever is charged to it, so no assertion
    # about a top-up there could fail.


def test_a_step_over_many_operations_is_charged_for_those_beyond_the_uncharged_ones() -> None:
    clock = SearchClock()
    clock.charge_operations(clock.now(), UNCHARGED_OPERATIONS, 1.0)  # every suite's instance: nothing
    assert clock.now() == 0.0
    clock.charge_operations(clock.now(), UNCHARGED_OPERATIONS + 250, 1e-4)
    assert clock.now() == pytest.approx(0.025)
    began = clock.now()
    clock.charge_nothing()
    clock.charge_operations(began, UNCHARGED_OPERATIONS + 5, 1e-4)  # a floor: MIN_CHARGE already covers it
    assert clock.now() == pytest.approx(0.025 + MIN_CHARGE)


@pytest.mark.parametrize(("seed", "given"), [(0, 0), (-3, -3), (MAX_SEED, MAX_SEED), (MAX_SEED + 6, 5),
                                            (2**64 + 7, 7)])
def test_a_seed_past_cp_sats_32_bits_is_folded_into_them(seed: int, given: int) -> None:
    # CP-SAT's random_seed is an int32: a larger value is a TypeError from its bindings.
    assert new_solver(seconds=1, workers=1, seed=seed, deterministic=True).parameters.random_seed == given


def test_side_by_side_searches_are_charged_their_longest_time_and_all_their_work() -> None:
    clock = SearchClock(streams=2)
    clock.charge_nothing()
    forks = [clock.fork() for _ in range(2)]
    assert all(f.deterministic and f.now() == 0.0 for f in forks)
    for fork, seconds in zip(forks, (0.05, 0.2), strict=True):
        optimize(SolveRequest(get_instance("ft10"), time_limit=seconds, seed=1, clock=fork))
    assert forks[0].now() < forks[1].now()
    clock.join(forks)
    assert clock.now() == pytest.approx(MIN_CHARGE + forks[1].now())
    assert clock.dtime == pytest.approx(forks[0].dtime + forks[1].dtime) and clock.solves == 2
    record = clock.record(2)
    assert record["search_streams"] == 2 and record["search_workers"] == 1
    assert record["nominal_seconds"] == round(clock.now(), 6)
    assert record["deterministic_time"] == round(clock.dtime, 6)
    assert "nominal_seconds" not in SearchClock(deterministic=False).record(2)


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
        finally:
            found.set()  # a search that ends before its first solution fails the test below, not its timeout

    worker = threading.Thread(target=search)
    worker.start()
    assert found.wait(600)
    assert worker.is_alive(), f"the search ended before the stop: {outcome.get('error')!r}"
    interrupts.request_stop(signal.SIGINT)
    worker.join(600)
    assert not worker.is_alive()
    assert isinstance(outcome.get("error"), interrupts.Interrupted)
    assert outcome["error"].exit_code == 130  # type: ignore[attr-defined]


def test_add_hints_writes_the_hint_add_hint_writes_in_the_same_order() -> None:
    one, batch = new_model(), new_model()
    for model in (one, batch):
        xs = [model.new_int_var(0, 10, f"x{i}") for i in range(4)]
        flag = model.new_bool_var("flag")
        pairs = [(xs[2], 7), (xs[0], 3), (flag, True), (xs[3], 0)]
        if model is one:
            for v, value in pairs:
                model.add_hint(v, value)
        else:
            add_hints(model, pairs)
    assert list(batch.proto.solution_hint.vars) == list(one.proto.solution_hint.vars) == [2, 0, 4, 3]
    assert list(batch.proto.solution_hint.values) == list(one.proto.solution_hint.values) == [7, 3, 1, 0]


def test_add_hints_falls_back_to_cp_sat_for_a_negated_literal() -> None:
    one, batch = new_model(), new_model()
    for model in (one, batch):
        flag = model.new_bool_var("flag")
        if model is one:
            model.add_hint(~flag, True)
        else:
            add_hints(model, [(~flag, True)])
    assert list(batch.proto.solution_hint.vars) == list(one.proto.solution_hint.vars)
    assert list(batch.proto.solution_hint.values) == list(one.proto.solution_hint.values) == [0]


def test_a_new_model_solves_like_cp_sats_own_without_the_camel_case_aliases() -> None:
    model = new_model()
    assert not hasattr(model, "NewIntVar") and hasattr(cp_model.CpModel(), "NewIntVar")
    x = model.new_int_var(0, 9, "x")
    model.add(x >= 4)
    model.minimize(x)
    solver = new_solver(seconds=1.0, workers=1, seed=0, deterministic=True)
    assert run_solver(solver, model) == cp_model.OPTIMAL and solver.value(x) == 4
