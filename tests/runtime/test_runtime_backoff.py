"""Backoff delays per kind, the cap, and seeded jitter."""

from __future__ import annotations

import random

import pytest

from alas_argo.ir import Backoff
from alas_argo.runtime import base_delay, delay


@pytest.mark.parametrize(("kind", "expected"), [
    ("fixed", [2.0, 2.0, 2.0, 2.0, 2.0]),
    ("linear", [2.0, 4.0, 6.0, 8.0, 10.0]),
    ("exponential", [2.0, 6.0, 18.0, 54.0, 162.0]),
])
def test_base_delays_per_kind(kind: str, expected: list[float]) -> None:
    b = Backoff(kind=kind, initial=2.0, factor=3.0)
    assert [base_delay(b, n) for n in range(1, 6)] == expected


@pytest.mark.parametrize("kind", ["fixed", "linear", "exponential"])
def test_cap(kind: str) -> None:
    b = Backoff(kind=kind, initial=4.0, max=5.0)
    assert all(base_delay(b, n) <= 5.0 for n in range(1, 10))
    assert base_delay(Backoff(kind="exponential", initial=1, max=5), 4) == 5.0


def test_jitter_stays_within_bounds_and_is_seeded() -> None:
    b = Backoff(kind="exponential", initial=1.0, max=8.0, jitter=0.5)
    first = [delay(b, n, random.Random(7)) for n in range(1, 6)]
    again = [delay(b, n, random.Random(7)) for n in range(1, 6)]
    assert first == again
    for n, d in enumerate(first, start=1):
        base = base_delay(b, n)
        assert base * 0.5 <= d <= base
    assert first != [base_delay(b, n) for n in range(1, 6)]


def test_no_jitter_is_exact() -> None:
    assert delay(Backoff(kind="linear", initial=0.25), 3, random.Random(1)) == 0.75


def test_failures_must_be_positive() -> None:
    with pytest.raises(ValueError):
        base_delay(Backoff(), 0)
