"""A writer killed mid-write leaves a ``.tmp-*`` file; opening the run again for writing removes it (and only
the temp files of writers that are gone)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.fs_store import STALE_SECONDS, FsStore

_KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from alas_argo.log.fs_store import FsStore
root = Path(sys.argv[1])
FsStore(root)._write_temp(root / "runs" / "r" / "events" / "00000001.json", b"half an event")
os.kill(os.getpid(), signal.SIGKILL)
"""


def _temps(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir() if p.name.startswith(".tmp-")}


def test_reopening_a_run_removes_what_killed_writers_left(tmp_path: Path) -> None:
    root = tmp_path / "store"
    ExecutionLog(FsStore(root), "r").append(EventType.RUN_STARTED, payload={"instance": {"name": "ft06"}})
    events = root / "runs" / "r" / "events"
    done = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(root)], env={**os.environ,
                          "PYTHONPATH": str(Path(__file__).resolve().parents[2])}, capture_output=True)
    assert done.returncode == -9  # killed between the temp file and the publish
    killed = _temps(events)
    assert len(killed) == 1
    old = events / ".tmp-00000007.json.0123abcd"  # an older naming, from long ago
    old.write_bytes(b"x")
    os.utime(old, (time.time() - 2 * STALE_SECONDS,) * 2)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = {f".tmp-00000002.json.{sleeper.pid}.feed", f".tmp-00000003.json.{os.getpid()}.beef"}
        for name in live:  # writers that are still running: their temp files must survive
            (events / name).write_bytes(b"in flight")
        log = ExecutionLog(FsStore(root), "r")  # the run opened again
        log.append(EventType.NODE_SUCCEEDED, node_id="n", payload={})
        assert _temps(events) == live
        assert [e.seq for e in log.events()] == [0, 1] and log.verify().ok
    finally:
        sleeper.kill()
        sleeper.wait()
