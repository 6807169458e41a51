"""Edges of alas_argo.runtime.clock left open by mutation testing: the runtime's tests drive a FakeClock, so
RealClock.sleep's own rule (wait exactly the seconds asked, never call ``time.sleep`` for none or a negative
delay, which it would refuse) was never run; and FakeClock starts at 0 and moves by exactly what is slept,
a fraction of a second included, never backwards, while recording every request as made."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from alas_argo.runtime import clock
from alas_argo.runtime.clock import Clock, FakeClock, RealClock


def test_the_real_clock_sleeps_exactly_what_is_asked_and_nothing_for_no_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    # Only this module's view of ``time`` is replaced, so no other thread's sleep is caught (or skipped).
    monkeypatch.setattr(clock, "time", SimpleNamespace(sleep=calls.append, monotonic=lambda: 0.0))
    real = RealClock()
    assert isinstance(real, Clock)
    real.sleep(0.5)
    real.sleep(0)
    real.sleep(-1.0)  # a deadline already passed: time.sleep(-1) would raise ValueError
    real.sleep(2)
    assert calls == [0.5, 2]


def test_the_fake_clock_starts_at_zero_and_moves_by_what_is_slept() -> None:
    fake = FakeClock()
    assert isinstance(fake, Clock)
    assert fake.now() == 0.0
    fake.sleep(0.25)
    assert fake.now() == 0.25
    fake.sleep(-3.0)  # recorded, but time does not go back
    assert fake.now() == 0.25
    fake.advance(1.5)  # work taking time is no sleep
    assert fake.now() == 1.75
    assert fake.sleeps == [0.25, -3.0]
    assert FakeClock(10.0).now() == 10.0
