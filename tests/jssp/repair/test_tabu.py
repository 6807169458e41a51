"""The tabu first edit: the compiled search's plans are valid, exactly re-timed, reproducible and never longer;
LCRP's default first edit; without the compiled search LCRP repairs as with the re-dispatch and says so."""

from __future__ import annotations

import re
import sys
from array import array
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from alas_argo.errors import ContractError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit, lower_bound, repair
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.jssp.repair import tabu as tabu_module
from alas_argo.jssp.repair.lcrp import TABU_BOX_SCALE
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.reoptimizing import FreeSequences
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.tabu import (
    ITERATIONS,
    KERNEL,
    MIN_ITERATIONS,
    SECONDS_PER_OPERATION_ITERATION,
    STREAM_SEED_STEP,
    STREAMS,
    kernel,
    tabu_first_edit,
    tabu_search,
)
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate
from tests.jssp.strategies import disrupted_cases

needs_kernel = pytest.mark.skipif(
    kernel() is None, reason=f"the compiled tabu search ({KERNEL}) is not built: `pip install -e .` with a C compiler")


def _first_edit(state: ExecutionState) -> Schedule:
    """LCRP's first edit: AOR, or the re-dispatched plan when shorter."""
    first, again = aor(state), redispatch(state)
    return again if again.makespan < first.makespan else first


def _weak_case(name: str, disruption: Disruption | str, seed: int = 0) -> tuple[Instance, Schedule, Disruption]:
    """A dispatched (weak) plan of ``name``, so that the search has room, and a disruption of it."""
    inst = get_instance(name)
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, disruption, seed=seed) if isinstance(disruption, str) else disruption
    return inst, plan, d


# Real disruption cases: breakdowns (one and two downtimes on a machine, so an operation can be pushed past one
# into the next), shocks, both; every one mid-plan, so operations are frozen and some interrupted.
CASES = [
    ("ft10", "breakdown", 1), ("ft10", "shock", 2), ("ft10", "mixed", 3), ("la21", "breakdown", 0),
    ("la21", "shock", 4), ("ta01", "mixed", 1),
]


def _two_downtimes() -> tuple[Instance, Schedule, Disruption]:
    inst = get_instance("ft10")
    plan = dispatch(inst, "mwkr")
    t = plan.makespan // 3
    d = Disruption(time=t, events=[MachineBreakdown(machine=3, start=t, duration=40),
                                   MachineBreakdown(machine=3, start=t + 60, duration=25),
                                   MachineBreakdown(machine=7, start=t + 10, duration=50),
                                   DurationChange(job=4, step=6, duration=90)])
    return inst, plan, d


def _cases() -> list[tuple[Instance, Schedule, Disruption]]:
    return [_weak_case(name, kind, seed) for name, kind, seed in CASES] + [_two_downtimes()]


@needs_kernel
@pytest.mark.parametrize("case", range(len(CASES) + 1))
def test_the_search_returns_a_valid_plan_timed_as_python_times_it_never_longer(case: int) -> None:
    inst, plan, d = _cases()[case]
    state = ExecutionState.at(inst, plan, d)
    assert state.frozen  # mid-plan: the search must leave these where they are
    first = _first_edit(state)
    start = FreeSequences(state, first)
    found = tabu_search(start, bound=lower_bound(state), seed=7)
    assert found is not None
    # The kernel's makespan is the one FreeSequences computes for its sequences, from scratch.
    again = start.adopted([list(s) for s in found.sequences.seqs])
    assert again is not None and again.makespan == found.makespan == found.sequences.makespan
    assert found.makespan <= start.makespan
    repaired = found.sequences.to_schedule()
    assert repaired.makespan == found.makespan
    assert validate(inst, repaired, disruption=d, baseline=plan).valid
    starts = repaired.starts()
    assert all(starts[k] == s for k, s in state.frozen_starts().items())
    assert found.makespan >= lower_bound(state)


@needs_kernel
def test_the_search_shortens_a_weak_first_edit() -> None:
    """A dispatched plan of ft10 after a shock: the search must find something (the reason it exists)."""
    inst, plan, d = _weak_case("ft10", "shock", 2)
    state = ExecutionState.at(inst, plan, d)
    start = FreeSequences(state, _first_edit(state))
    found = tabu_search(start, bound=lower_bound(state), seed=0)
    assert found is not None and found.makespan < start.makespan
    assert found.iterations > 0


@needs_kernel
def test_a_seed_gives_one_answer() -> None:
    inst, plan, d = _weak_case("la21", "mixed", 5)
    state = ExecutionState.at(inst, plan, d)
    start = FreeSequences(state, _first_edit(state))
    runs = [tabu_search(start, bound=lower_bound(state), seed=s, iterations=3000) for s in (11, 11, 12)]
    assert runs[0] is not None and runs[1] is not None and runs[2] is not None
    assert runs[0].sequences.seqs == runs[1].sequences.seqs
    assert (runs[0].makespan, runs[0].iterations) == (runs[1].makespan, runs[1].iterations)
    # The start is not changed by a search (FreeSequences.adopted copies).
    assert start.makespan == FreeSequences(state, _first_edit(state)).makespan


@needs_kernel
def test_the_search_stops_at_the_bound() -> None:
    inst, plan, d = _weak_case("ft10", "breakdown", 1)
    state = ExecutionState.at(inst, plan, d)
    start = FreeSequences(state, _first_edit(state))
    found = tabu_search(start, bound=start.makespan, seed=0)
    assert found is not None and found.iterations == 0 and found.makespan == start.makespan


@needs_kernel
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(disrupted_cases(max_jobs=5, max_machines=4))
def test_random_disruptions_give_valid_exactly_timed_plans(
        case: tuple[Instance, Schedule, Disruption, Schedule]) -> None:
    """Overlapping and empty downtimes, operations of length 0, duration changes: the kernel's timing must agree
    with FreeSequences' on all of them, from a valid repaired plan."""
    inst, baseline, d, repaired = case
    state = ExecutionState.at(inst, baseline, d)
    start = FreeSequences(state, repaired)
    found = tabu_search(start, bound=0, seed=3, iterations=300)
    assert found is not None and found.makespan <= start.makespan
    assert validate(inst, found.sequences.to_schedule(), disruption=d, baseline=baseline).valid


@needs_kernel
def test_inconsistent_arrays_are_refused_not_read_past() -> None:
    compiled = kernel()
    assert compiled is not None

    def q(*values: int) -> array[int]:
        return array("q", values)

    # Two operations of one job on machines 0 and 1.
    good = [q(3, 4), q(0, 1), q(0, 0), q(-1, 0), q(1, -1), q(0, 1, 2), q(0, 1), q(), q(), q(0, 0, 0)]
    assert compiled.search(*good, 0, 0, 10, 0)[1:] == (7, 0)  # already at its only plan: no move
    bad = {
        1: q(0, 5),  # a machine out of range
        3: q(-1, 9),  # a job predecessor out of range
        6: q(1, 0),  # operation 1 in machine 0's slot
        5: q(0, 1, 3),  # offsets past the end
        2: q(0),  # one release for two operations
        7: q(5),  # a downtime with no offsets for it
    }
    for index, wrong in bad.items():
        args = list(good)
        args[index] = wrong
        with pytest.raises(ValueError):
            compiled.search(*args, 0, 0, 10, 0)
    with pytest.raises(ValueError, match="iterations"):
        compiled.search(*good, 0, 0, -1, 0)
    # A machine order against the job order: operation 1 (job step 1) before operation 0 on one machine.
    cyclic = [q(3, 4), q(0, 0), q(0, 0), q(-1, 0), q(1, -1), q(0, 2), q(1, 0), q(), q(), q(0, 0)]
    with pytest.raises(ValueError, match="cyclic"):
        compiled.search(*cyclic, 0, 0, 10, 0)


@needs_kernel
def test_the_search_is_charged_to_a_deterministic_clock_per_iteration_and_operation() -> None:
    inst, plan, d = _weak_case("ft10", "shock", 2)
    state = ExecutionState.at(inst, plan, d)
    clock, notes = SearchClock(deterministic=True), list[str]()
    improved = tabu_first_edit(state, _first_edit(state), bound=lower_bound(state), seed=0, notes=notes, clock=clock)
    assert improved is not None
    made = int(notes[0].split("(")[1].split(" iterations")[0])
    assert made > 0
    assert clock.now() == pytest.approx(SECONDS_PER_OPERATION_ITERATION * made * len(state.free))


@needs_kernel
def test_lcrp_with_the_tabu_first_edit_is_valid_reproducible_and_says_what_it_did() -> None:
    """The default: the cascade stops above the bound, the tabu search runs from the local plan (before the
    re-optimizing search, in the tabu's smaller time box), and the result says so."""
    inst, plan, d = _weak_case("ft10", "shock", 2)
    runs = [repair(inst, plan, d, "lcrp", budget=10, seed=3) for _ in range(2)]
    r = runs[0]
    assert r.valid and validate(inst, r.schedule, disruption=d, baseline=plan).valid
    assert r.schedule == runs[1].schedule and r.limits == runs[1].limits
    assert [_untimed(n) for n in r.notes] == [_untimed(n) for n in runs[1].notes]  # a solve's wall seconds aside
    assert DEFAULT_FIRST_EDIT is FirstEdit.TABU and r.limits["first_edit"] == "tabu"
    made = [int(m.group(1)) for n in r.notes if (m := re.match(r"tabu first edit \((\d+) iterations", n))]
    assert len(made) == 1 and 0 < made[0] <= ITERATIONS
    assert r.global_reason is not None and "the tabu search over all" in r.global_reason
    redispatched = repair(inst, plan, d, "lcrp", budget=10, seed=3, first_edit="redispatch")
    assert "first_edit" not in redispatched.limits and not [n for n in redispatched.notes if "tabu" in n]
    # The tabu's box: TABU_BOX_SCALE of the re-dispatch's.
    boxes = [float(m.group(1)) for x in (r, redispatched) if (m := re.search(r"time box ([0-9.]+) s", x.notes[0]))]
    assert len(boxes) == 2
    assert boxes[0] == pytest.approx(boxes[1] * TABU_BOX_SCALE, abs=0.006)


def _untimed(note: str) -> str:
    return re.sub(r"[0-9.]+ s\b", "", note)


def test_without_the_compiled_search_tabu_repairs_as_redispatch_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    inst, plan, d = _weak_case("ft10", "shock", 2)
    monkeypatch.setitem(sys.modules, KERNEL, None)  # `import` of it raises ImportError, as with no build
    assert kernel() is None
    asked = repair(inst, plan, d, "lcrp", budget=10, seed=3, effort=0.5)  # the default: tabu
    today = repair(inst, plan, d, "lcrp", budget=10, seed=3, effort=0.5, first_edit="redispatch")
    assert asked.schedule == today.schedule and asked.makespan == today.makespan
    said = [n for n in asked.notes if "tabu" in n]
    assert len(said) == 1 and "not built" in said[0] and "the first edit stands" in said[0]
    # The same repair otherwise, to the clock (the notes' wall seconds of a solve aside).
    assert [_untimed(n) for n in asked.notes if "tabu" not in n] == [_untimed(n) for n in today.notes]
    assert asked.limits == today.limits and "first_edit" not in asked.limits


def test_a_disruption_with_too_many_free_operations_keeps_the_first_edit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tabu_module, "MAX_OPERATIONS", 10)
    inst, plan, d = _weak_case("ft10", "shock", 2)
    state = ExecutionState.at(inst, plan, d)
    clock, notes = SearchClock(deterministic=True), list[str]()
    assert tabu_first_edit(state, _first_edit(state), bound=0, seed=0, notes=notes, clock=clock) is None
    assert len(notes) == 1 and "above its 10" in notes[0] and clock.now() == 0


def test_an_unknown_first_edit_is_refused() -> None:
    inst, plan, d = _weak_case("ft06", "breakdown", 0)
    with pytest.raises(InputError, match="unknown first edit 'genetic'; known: redispatch, tabu"):
        repair(inst, plan, d, "lcrp", first_edit="genetic")
    assert FirstEdit.parse("tabu") is FirstEdit.TABU


def test_a_kernel_that_times_its_plan_otherwise_than_python_is_a_contract_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan is re-timed in Python; a kernel whose makespan differs (or that refuses the arrays) is a bug,
    named, never a plan taken on the kernel's word."""
    inst, plan, d = _weak_case("ft10", "shock", 2)
    state = ExecutionState.at(inst, plan, d)
    start = FreeSequences(state, _first_edit(state))

    def off_by_one(*args: Any) -> tuple[bytes, int, int]:
        return bytes(args[6]), start.makespan + 1, 0  # its start sequence back, timed wrong

    def refusing(*args: Any) -> tuple[bytes, int, int]:
        raise ValueError("sequence: not a permutation")

    for search, message in ((off_by_one, "re-times to"), (refusing, "refused the free sequences")):
        monkeypatch.setattr(tabu_module, "kernel", lambda search=search: SimpleNamespace(search=search))
        with pytest.raises(ContractError, match=message):
            tabu_search(start, bound=0, seed=0)


@needs_kernel
def test_the_tabu_first_edit_under_a_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a wall clock nothing is charged (the clock reads the time the search took) and the repair is as valid.
    The cascade solve is skipped (every cascade counts as global): on a wall clock whether it reaches the bound,
    and so whether the search runs at all, depends on the machine's load."""
    monkeypatch.setattr(lcrp_module, "PROBE_MIN_SHARE", 0.0)
    inst, plan, d = _weak_case("ft10", "shock", 2)
    r = repair(inst, plan, d, "lcrp", budget=2, seed=3, effort=0.5, first_edit="tabu", deterministic=False,
               workers=1)
    assert r.valid and validate(inst, r.schedule, disruption=d, baseline=plan).valid
    assert [n for n in r.notes if n.startswith("tabu first edit (")] and r.limits["first_edit"] == "tabu"
    assert "nominal_seconds" not in r.limits


@needs_kernel
def test_the_iterations_are_split_between_streams_and_the_shortest_plan_is_kept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """STREAMS searches of ITERATIONS / STREAMS iterations each, seeded apart by STREAM_SEED_STEP; the shortest
    plan is the one returned and every stream's iterations are charged."""
    inst, plan, d = _weak_case("ft10", "shock", 2)
    state = ExecutionState.at(inst, plan, d)
    first = _first_edit(state)
    calls: list[tuple[int, int, int]] = []
    real = tabu_module.tabu_search

    def recording(free: FreeSequences, *, bound: int, seed: int, iterations: int) -> tabu_module.TabuSearch | None:
        found = real(free, bound=bound, seed=seed, iterations=iterations)
        assert found is not None
        calls.append((seed, iterations, found.makespan))
        return found

    monkeypatch.setattr(tabu_module, "tabu_search", recording)
    clock, notes = SearchClock(deterministic=True), list[str]()
    kept = tabu_first_edit(state, first, bound=0, seed=5, notes=notes, clock=clock)
    assert [(s, i) for s, i, _ in calls] == [(5 + k * STREAM_SEED_STEP, ITERATIONS // STREAMS)
                                            for k in range(STREAMS)] and STREAMS > 1
    assert kept is not None and kept.makespan == min(m for _, _, m in calls)
    assert f"({STREAMS * (ITERATIONS // STREAMS)} iterations" in notes[0]
    assert clock.now() == pytest.approx(SECONDS_PER_OPERATION_ITERATION * len(state.free) * ITERATIONS, rel=1e-6)
    # A budget too small to split runs one stream with all it pays for.
    calls.clear()
    seconds = SECONDS_PER_OPERATION_ITERATION * len(state.free) * (STREAMS * MIN_ITERATIONS - 1)
    tabu_first_edit(state, first, bound=0, seed=5, notes=notes, clock=SearchClock(deterministic=True),
                    seconds=seconds)
    assert [(s, i) for s, i, _ in calls] == [(5, STREAMS * MIN_ITERATIONS - 1)]


@needs_kernel
def test_too_many_free_operations_repair_as_the_re_dispatch_time_box_and_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """LCRP sizes its box by the same answer the search gives (tabu.unavailable): above MAX_OPERATIONS the
    default repair is the re-dispatch's, box included, and one note says why."""
    monkeypatch.setattr(tabu_module, "MAX_OPERATIONS", 10)
    inst, plan, d = _weak_case("ft10", "shock", 2)
    asked = repair(inst, plan, d, "lcrp", budget=10, seed=3)
    today = repair(inst, plan, d, "lcrp", budget=10, seed=3, first_edit="redispatch")
    said = [n for n in asked.notes if "tabu" in n]
    assert len(said) == 1 and "above its 10; the first edit stands" in said[0]
    assert asked.schedule == today.schedule
    assert [_untimed(n) for n in asked.notes if "tabu" not in n] == [_untimed(n) for n in today.notes]
