"""Time as a dependency: the real clock, and a fake one tests drive without sleeping.

Backoff delays and loop deadlines go through a :class:`Clock`, so a test can assert the exact delays the
runtime waited (:attr:`FakeClock.sleeps`) in microseconds of wall time.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "RealClock"]


@runtime_checkable
class Clock(Protocol):
    """Monotonic time in seconds, and a way to wait."""

    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        ...


class RealClock:
    """``time.monotonic`` and ``time.sleep``."""

    def now(self) -> float:
        """Seconds on the monotonic clock."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """Really wait."""
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """A clock that only moves when slept on or advanced; records every sleep (thread-safe)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def now(self) -> float:
        """The fake current time."""
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        """Advance time by ``seconds`` at once and record the request."""
        with self._lock:
            self.sleeps.append(seconds)
            self._now += max(seconds, 0.0)

    def advance(self, seconds: float) -> None:
        """Move time forward without recording a sleep (time passing during work)."""
        with self._lock:
            self._now += seconds
