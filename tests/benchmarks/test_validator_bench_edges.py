"""The validator throughput benchmark (alas_argo/benchmarks/validator.py) at the edges mutation testing found
open: what each scenario hands the validator (the disruption revealed halfway, a breakdown after the horizon,
the schedule as its own baseline), that one invalid verdict among the timed calls makes the timing's verdict
false, the default number of timed calls, and an instance with a single machine."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from alas_argo.benchmarks import validator as bench
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.validate import validate


class _Spy:
    """Stands in for ``validate``: records each call's keyword arguments and answers with the real verdict,
    or with an invalid one on the calls numbered in ``invalid`` (0-based)."""

    def __init__(self, invalid: frozenset[int] = frozenset()) -> None:
        self.calls: list[dict[str, Any]] = []
        self.invalid = invalid

    def __call__(self, instance: Instance, schedule: Any, **kwargs: Any) -> Any:
        report = validate(instance, schedule, **kwargs)
        self.calls.append(kwargs)
        if len(self.calls) - 1 in self.invalid:
            return report.model_copy(update={"valid": False})
        return report


def test_each_scenario_hands_the_validator_what_the_docstring_says(tiny: Instance,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy()
    monkeypatch.setattr(bench, "validate", spy)
    bench.benchmark_validator(tiny, repeat=2)
    schedule = bench.round_robin_schedule(tiny)
    assert schedule.makespan == 11
    static, disruption = spy.calls[:3], spy.calls[3:]  # a warm-up call and two timed calls each
    assert static == [{}] * 3  # instance checks only
    assert len(disruption) == 3
    for kwargs in disruption:
        assert kwargs["baseline"] == schedule  # read against itself as the plan in force
        # revealed halfway (11 // 2), the breakdown on machine 0 starting at the makespan: nothing it could
        # interrupt, so the schedule stays valid and every disruption-aware check runs to the end
        assert kwargs["disruption"] == Disruption(time=5, events=[MachineBreakdown(machine=0, start=11,
                                                                                 duration=10)])


@pytest.mark.parametrize("bad_call", [1, 2, 4, 5])  # a timed call of either scenario (0 and 3 are warm-ups)
def test_one_invalid_timed_verdict_makes_the_scenario_invalid(tiny: Instance, monkeypatch: pytest.MonkeyPatch,
                                                              bad_call: int) -> None:
    monkeypatch.setattr(bench, "validate", _Spy(invalid=frozenset({bad_call})))
    timings = bench.benchmark_validator(tiny, repeat=2)
    assert [t.valid for t in timings] == [bad_call > 2, bad_call < 3]


def test_an_invalid_warm_up_verdict_counts_too(tiny: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "validate", _Spy(invalid=frozenset({3})))
    assert [t.valid for t in bench.benchmark_validator(tiny, repeat=2)] == [True, False]


def test_fifty_timed_calls_by_default(tiny: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = _Spy()
    monkeypatch.setattr(bench, "validate", spy)
    timings = bench.benchmark_validator(tiny)
    assert [t.repeat for t in timings] == [50, 50] and len(spy.calls) == 2 * (1 + 50)


def test_one_machine_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    # The disruption scenario's breakdown is on machine 0, the one machine every instance has.
    one = Instance(name="one", jobs=[[(0, 2)], [(0, 3)]])
    ticks = itertools.count(0.0, 0.25)
    timings = bench.benchmark_validator(one, repeat=1, clock=lambda: next(ticks))
    assert [(t.scenario, t.valid, t.size, t.operations) for t in timings] == [
        ("static", True, "2x1", 2), ("disruption", True, "2x1", 2)]
    assert [t.median_seconds for t in timings] == [0.25, 0.25]
