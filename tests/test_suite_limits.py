"""The suite's own limits: a hanging test fails the run instead of holding CI until its limit.

The shape that matters is the runtime's: the test's thread waits on a worker thread that never returns, and
leaving the runtime waits for that worker again (a thread pool shut down with ``wait=True``). pytest-timeout's
signal method interrupts only the first wait, so the run hangs; the thread method ends it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HANGING = '''
import threading
from concurrent.futures import ThreadPoolExecutor


def test_waits_for_a_worker_that_never_returns():
    never = threading.Event()
    with ThreadPoolExecutor(1) as pool:  # leaving the block waits for the worker again
        pool.submit(never.wait)
        never.wait()
'''


def test_the_per_test_limit_is_seconds_and_the_method_is_thread(pytestconfig: pytest.Config) -> None:
    assert pytestconfig.getini("timeout_method") == "thread"
    assert 0 < float(pytestconfig.getini("timeout")) <= 60


def test_a_hanging_test_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text(HANGING)
    # The project's settings (-c pyproject.toml: the timeout method among them), with a short limit.
    argv = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
            "-p", "no:cacheprovider", "-q", "--timeout=2", str(tmp_path / "test_hang.py")]
    log = tmp_path / "out.txt"
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            # Well inside this test's own limit, so the verdict is this test's and the run is always reaped.
            code = proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = log.read_text()
    assert code is not None, f"the hanging test still held the run after 20 s:\n{text[-2000:]}"
    assert code != 0
    assert "Timeout" in text and "test_waits_for_a_worker_that_never_returns" in text
