"""Shared fixtures: a tiny instance with a known optimum, the bundled ft06, a real S3 protocol server on
loopback (moto in server mode, over HTTP) with a fresh bucket per test, and, around every test, no stop request
left over from another."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from alas_argo import interrupts
from alas_argo.jssp.instance import Instance
from tests.s3server import s3_bucket, s3_server

__all__ = ["ft06", "no_stop_left_behind", "s3_bucket", "s3_server", "tiny"]

# The cycle collector at Python's default thresholds (700, 10, 10) spent about a tenth of the suite's time: the
# process holds a million objects by the end (imports, moto's buckets, cached instances), and objects that live
# for one test (plans, logs, HTTP clients) reach the oldest generation often enough to set off a full collection
# every few seconds, each a walk of the whole heap (0.85 s on average, 99 of them, 84 s in all; measured with a
# gc.callbacks probe over the whole suite). Collecting the youngest generation every 50,000 allocations instead of
# 700 lets those objects die young: on tests/log and tests/controller, full collections went from 132 to 11,
# collector time from 53 s to 21 s and the process's CPU time from 189 s to 126 s, for 200 MB more peak memory.
# Only when cyclic garbage is reclaimed changes; tests that need it reclaimed at a point call gc.collect().
gc.set_threshold(50_000, 20, 10)


@pytest.fixture(autouse=True)
def no_stop_left_behind() -> Iterator[None]:
    """Forget any stop request before and after each test: a request is process-wide (a Ctrl-C, SIGTERM, or
    a test that asks for one), and one left pending would stop the next test's first search or step."""
    interrupts.reset()
    yield
    interrupts.reset()


@pytest.fixture
def tiny() -> Instance:
    """3 jobs x 3 machines with optimal makespan 11 (proven by CP-SAT; tests/jssp re-prove it)."""
    return Instance(
        name="tiny",
        jobs=[[(0, 3), (1, 2), (2, 2)], [(0, 2), (2, 1), (1, 4)], [(1, 4), (2, 3), (0, 1)]],
        lower_bound=None,
        upper_bound=None,
    )


@pytest.fixture
def ft06() -> Instance:
    """Fisher & Thompson's 6x6 instance, optimum 55."""
    from alas_argo.jssp.catalog import get_instance

    return get_instance("ft06")
