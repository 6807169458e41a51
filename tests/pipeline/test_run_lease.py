"""One run id, one pipeline at a time: a second ``alas run`` of a run another process is running on the same
filesystem store is refused at once (exit 75, naming the holder) and writes nothing; the lease dies with its
holder, however it dies, so the run then resumes or returns its result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.errors import ConflictError
from alas_argo.log import ExecutionLog, FsStore
from alas_argo.pipeline import RunConfig, run_pipeline

CONFIG = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", seed=1, repair_budget=1)
#: A child that takes run r1's lease, says so, and waits to be killed.
HOLDER = ("import sys, time; from alas_argo.log import FsStore\n"
          "with FsStore(sys.argv[1]).hold(name='run-r1'):\n"
          "    print('held', flush=True); time.sleep(120)\n")


def test_a_second_run_of_a_held_run_id_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    store = FsStore(tmp_path / "store")
    with store.hold(name="run-r1"), pytest.raises(ConflictError) as refused:
        run_pipeline(CONFIG, ExecutionLog(FsStore(tmp_path / "store"), "r1"))
    assert refused.value.message == (
        f"run r1 is being run by another process right now (lease run-r1 is held by process {os.getpid()}); "
        "run this again once it has stopped, to resume it or read its result")
    assert refused.value.where == str(tmp_path / "store" / ".leases" / "run-r1.lock")
    assert store.list(prefix="") == []  # no event, no head: the lease itself is no record
    # Released: the run goes ahead, and another id was never held.
    assert run_pipeline(CONFIG, ExecutionLog(store, "r1")).succeeded
    assert run_pipeline(CONFIG, ExecutionLog(store, "r2")).succeeded
    assert store.children(prefix="runs/") == ["r1", "r2"]
    assert not any(k.startswith(".") or "/." in k for k in store.list(prefix=""))


def test_alas_run_exits_75_naming_the_holder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with FsStore(tmp_path / "store").hold(name="run-r1"):
        code = main(["run", "ft06", "--planner", "heuristic", "--run-id", "r1", "--root", str(tmp_path / "store"),
                     "--out", str(tmp_path / "out")])
    assert code == 75
    err = capsys.readouterr().err
    assert f"run r1 is being run by another process right now (lease run-r1 is held by process {os.getpid()})" in err
    assert not (tmp_path / "out").exists()


def test_the_lease_dies_with_a_killed_holder(tmp_path: Path) -> None:
    root = tmp_path / "store"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        with pytest.raises(ConflictError, match=rf"\(lease run-r1 is held by process {holder.pid}\);"):
            run_pipeline(CONFIG, ExecutionLog(FsStore(root), "r1"))
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert run_pipeline(CONFIG, ExecutionLog(FsStore(root), "r1")).succeeded


def test_a_lease_is_taken_again_by_its_own_process_once_released(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    with store.hold(name="x"), pytest.raises(ConflictError), store.hold(name="x"):
        pass  # two descriptions of one lock file conflict inside one process too
    with store.hold(name="x"):
        assert (tmp_path / ".leases" / "x.lock").read_text() == str(os.getpid())
