"""The reference of `alas bench llm --disruptions`, its edges: it is `full` with the budget given and seed 0 (the
same reference on a rerun and a replay), the note is the solver's status only (nothing when the repair says
nothing), one solve per (plan in force, disruption) with a cache and none kept without one (mutation survivors
of alas_argo/benchmarks/repair_reference.py)."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.benchmarks import repair_reference
from alas_argo.benchmarks.repair_reference import Reference, References, reference_for
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.planning import plan
from alas_argo.jssp.schedule import Schedule

UNSET = "(unset)"


class RepairSpy:
    """Wraps the module's `repair`: records what each call was given, optionally replaces the result's notes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, notes: list[str] | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.notes = notes
        self.real = repair_reference.repair
        monkeypatch.setattr(repair_reference, "repair", self)

    def __call__(self, instance: Instance, schedule: Schedule, disruption: Any, method: Any = UNSET,
                 budget: Any = UNSET, **kwargs: Any) -> Any:
        self.calls.append({"method": method, "budget": budget, **kwargs})
        given = {k: v for k, v in (("method", method), ("budget", budget)) if v is not UNSET}
        result = self.real(instance, schedule, disruption, **given, **kwargs)
        return result if self.notes is None else result.model_copy(update={"notes": self.notes})


@pytest.fixture
def ft06_case() -> tuple[Instance, Schedule, Any]:
    instance = get_instance("ft06")
    schedule = plan(instance, time_limit=1, deterministic=True, workers=1).schedule
    return instance, schedule, generate_disruption(instance, schedule, "breakdown", seed=2)


def test_the_reference_is_full_with_the_budget_given_and_seed_0(
        monkeypatch: pytest.MonkeyPatch, ft06_case: tuple[Instance, Schedule, Any]) -> None:
    spy = RepairSpy(monkeypatch)
    reference_for(*ft06_case, budget=0.7)
    assert spy.calls == [{"method": "full", "budget": 0.7, "seed": 0}]


@pytest.mark.parametrize(("notes", "note"), [
    (["cp-sat feasible: 0.70 s, 12 branches", "the time box was reached"], "cp-sat feasible"),
    (["cp-sat optimal"], "cp-sat optimal"),
    ([], ""),
])
def test_the_note_is_the_first_notes_status_only(monkeypatch: pytest.MonkeyPatch,
                                                 ft06_case: tuple[Instance, Schedule, Any], notes: list[str],
                                                 note: str) -> None:
    RepairSpy(monkeypatch, notes)
    assert reference_for(*ft06_case, budget=0.5).note == note


def test_without_a_cache_every_call_solves_again(monkeypatch: pytest.MonkeyPatch,
                                                  ft06_case: tuple[Instance, Schedule, Any]) -> None:
    spy = RepairSpy(monkeypatch)
    first = reference_for(*ft06_case, budget=0.5)
    again = reference_for(*ft06_case, budget=0.5)
    assert len(spy.calls) == 2 and first == again and first is not again


def test_a_cache_keeps_one_reference_per_plan_in_force_and_disruption(
        monkeypatch: pytest.MonkeyPatch, ft06_case: tuple[Instance, Schedule, Any]) -> None:
    instance, schedule, breakdown = ft06_case
    spy = RepairSpy(monkeypatch)
    cache: References = {}
    ref = reference_for(instance, schedule, breakdown, budget=0.5, cache=cache)
    assert list(cache.values()) == [ref] and isinstance(ref, Reference)
    # Another plan in force (each operation one unit later), the same disruption: another solve, another entry.
    later = Schedule.model_validate({**schedule.to_json(), "operations": [
        {**op, "start": op["start"] + 1, "end": op["end"] + 1} for op in schedule.to_json()["operations"]],
        "makespan": schedule.makespan + 1})
    other = reference_for(instance, later, breakdown, budget=0.5, cache=cache)
    assert len(cache) == 2 and len(spy.calls) == 2 and cache[next(iter(cache))] is ref
    assert reference_for(instance, later, breakdown, budget=0.5, cache=cache) is other and len(spy.calls) == 2
