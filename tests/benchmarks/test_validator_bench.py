"""The validator throughput benchmark: its schedule is valid and its arithmetic is right."""

from __future__ import annotations

import itertools

import pytest

from alas_argo.benchmarks import validator as bench
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.validate import validate


def test_exports() -> None:
    assert sorted(bench.__all__) == ["ValidatorTiming", "benchmark_validator", "round_robin_schedule"]


def test_round_robin_schedule_is_valid_and_semi_active(tiny: Instance) -> None:
    schedule = bench.round_robin_schedule(tiny)
    assert validate(tiny, schedule).valid
    # Step 0 of jobs 0 and 1 share machine 0: job 1 waits for job 0, with no idle time.
    starts = schedule.starts()
    assert starts[(0, 0)] == 0 and starts[(1, 0)] == 3 and starts[(2, 0)] == 0


def test_round_robin_on_ragged_jobs() -> None:
    inst = Instance(name="ragged", jobs=[[(0, 2)], [(1, 1), (0, 3), (2, 2)]])
    assert validate(inst, bench.round_robin_schedule(inst)).valid


def test_timings_with_an_injected_clock(tiny: Instance) -> None:
    ticks = itertools.count(0.0, 0.5)  # every clock read advances 0.5 s: each call "takes" 0.5 s
    timings = bench.benchmark_validator(tiny, repeat=3, clock=lambda: next(ticks))
    assert [t.scenario for t in timings] == ["static", "disruption"]
    for t in timings:
        assert t.valid and t.operations == 9 and t.repeat == 3 and t.size == "3x3"
        assert t.median_seconds == t.best_seconds == 0.5
        assert t.ops_per_second == 18.0


def test_ta71_is_timed_for_real() -> None:
    timings = bench.benchmark_validator(get_instance("ta71"), repeat=2)
    assert all(t.valid and t.operations == 2000 and t.ops_per_second > 0 for t in timings)


def test_repeat_must_be_positive(tiny: Instance) -> None:
    with pytest.raises(InputError, match="repeat"):
        bench.benchmark_validator(tiny, repeat=0)
