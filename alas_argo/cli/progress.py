"""Progress lines on stderr for long work whose output is not a terminal (CI logs, ``| tee``, ``nohup``).

A terminal gets rich's live bars; a pipe got nothing, so a 45-minute benchmark looked hung. This prints plain,
timestamped lines instead: one when an item finishes (at most one per ``every`` seconds, the last always), and
a heartbeat naming what is being worked on when nothing else was printed for ``heartbeat`` seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

__all__ = ["ProgressLines"]


class ProgressLines:
    """Periodic progress lines for one piece of work.

    Args:
        what: The command, named at the start of each line (``alas bench static``).
        total: How many items the work has (None when unknown).
        every: Seconds between item lines: items finished closer together are summed up in the next line
            (0: a line per item).
        heartbeat: Seconds of silence after which a line says what is being worked on.
        stream: Where to write (default: stderr at the time of writing).
        clock: Monotonic seconds (injected by tests).
    """

    def __init__(self, what: str, *, total: int | None = None, every: float = 10.0, heartbeat: float = 30.0,
                 stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.what, self.total, self.every, self.heartbeat = what, total, every, heartbeat
        self._stream, self._clock = stream, clock
        self._started = clock()
        self._last = float("-inf")
        self._done = 0
        self._current = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(f"[{self._clock() - self._started:7.1f} s] {self.what}: {text}\n")
        stream.flush()
        self._last = self._clock()

    def _count(self) -> str:
        return f"{self._done}/{self.total}" if self.total is not None else str(self._done)

    def done(self, label: str, *, always: bool = False) -> None:
        """An item finished; print it unless a line went out less than ``every`` seconds ago."""
        with self._lock:
            self._done += 1
            last = self.total is not None and self._done >= self.total
            if always or last or self._clock() - self._last >= self.every:
                self._write(f"{self._count()} done, last: {label}")

    def working_on(self, label: str) -> None:
        """Name what is being worked on now (the heartbeat says it)."""
        with self._lock:
            self._current = label

    def say(self, text: str) -> None:
        """Print ``text`` now (a failure, a phase change worth a line of its own)."""
        with self._lock:
            self._write(text)

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat / 4):
            with self._lock:
                if self._clock() - self._last >= self.heartbeat:
                    doing = f", working on {self._current}" if self._current else ""
                    self._write(f"{self._count()} done{doing}")

    def __enter__(self) -> ProgressLines:
        self._write("started" + (f" ({self.total} items)" if self.total is not None else ""))
        self._thread = threading.Thread(target=self._beat, name="alas-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._write(f"{'finished' if kind is None else 'stopped'} after {self._count()} items")
