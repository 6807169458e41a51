"""Real SIGINT / SIGTERM sent to real `alas` processes: during static planning, during the optimizer, during
a repair, between two commits. Each stops cleanly (no abort in native code), exits 130 or 143 with one line
saying what stopped, records ``run.interrupted``, shows as interrupted in `alas log ls`, and resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.log import EventType, ExecutionLog, FsStore

# Each test starts `alas` processes and resumes runs: up to 33 s measured in the whole suite with the machine's
# two cores loaded about 3.5x (load average 7).
pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(120)]

_MAIN = "import sys; from alas_argo.cli import main; sys.exit(main(sys.argv[1:]))"


def _start(argv: list[str]) -> subprocess.Popen[str]:
    """`alas ARGV` in a child interpreter running this working tree's code."""
    return subprocess.Popen([sys.executable, "-c", _MAIN, *argv], env=dict(os.environ), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _handlers_installed(pid: int) -> bool:
    """Whether the child catches SIGTERM yet: Python leaves it at the default until `alas` installs its
    stop handler (together with the SIGINT one), so a signal sent after this is a stop request."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    return bool(caught >> (signal.SIGTERM - 1) & 1)


def _wait_for(child: subprocess.Popen[str], ready: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 240
    while not ready():
        assert child.poll() is None, f"the command ended before {what}: {child.communicate()[1]}"
        assert time.monotonic() < deadline, f"no {what} within 240 s"
        time.sleep(0.02)


def _stop(child: subprocess.Popen[str], signum: int) -> str:
    assert child.poll() is None, "the command ended before the signal"
    child.send_signal(signum)
    _, err = child.communicate(timeout=240)
    assert "bad_function_call" not in err and "Traceback" not in err, err
    assert child.returncode == 128 + signum, err
    return err


def _events(root: Path, run_id: str) -> list[EventType]:
    return [e.type for e in ExecutionLog(FsStore(root), run_id).events()]


def _started(root: Path, run_id: str, node: str) -> Callable[[], bool]:
    def ready() -> bool:
        return any(e.type is EventType.NODE_STARTED and e.node_id == node
                   for e in ExecutionLog(FsStore(root), run_id).events())
    return ready


def _ls(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    capsys.readouterr()
    assert main(["log", "ls", "--root", str(root), "--json"]) == 0
    return {r["run_id"]: r["status"] for r in json.loads(capsys.readouterr().out)}


def _resume(argv: list[str]) -> dict[str, object]:
    child = _start([*argv, "--json"])
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, err
    summary: dict[str, object] = json.loads(out)
    assert summary["resumed"] is True and summary["final_valid"] is True and summary["status"] == "succeeded"
    return summary


def _assert_interrupted(root: Path, run_id: str, signame: str, capsys: pytest.CaptureFixture[str]) -> None:
    log = ExecutionLog(FsStore(root), run_id)
    last = log.events()[-1]
    assert last.type is EventType.RUN_INTERRUPTED and last.payload["signal"] == signame
    assert _ls(root, capsys)[run_id] == "interrupted"
    assert log.verify().ok


def test_sigint_during_the_optimizer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    argv = ["run", "ft10", "--disrupt", "breakdown", "--time-limit", "4", "--repair-budget", "1",
            "--root", str(root), "--run-id", "opt", "--quiet"]
    child = _start(argv)
    _wait_for(child, _started(root, "opt", "optimize"), "optimizer")
    err = _stop(child, signal.SIGINT)
    assert "run opt interrupted by SIGINT during optimize" in err and "0 plan versions committed" in err
    _assert_interrupted(root, "opt", "SIGINT", capsys)
    summary = _resume(argv)
    assert summary["versions_committed"] == 2
    assert _ls(root, capsys)["opt"] == "succeeded"


def test_sigterm_during_a_repair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    # A global re-solve of a 20x20 plan cannot prove optimality within its budget: the signal lands in it.
    argv = ["run", "ta21", "--disrupt", "shock", "--time-limit", "0.5", "--repair-method", "full",
            "--repair-budget", "4", "--root", str(root), "--run-id", "rep", "--quiet"]
    child = _start(argv)
    _wait_for(child, lambda: EventType.REPAIR_STARTED in _events(root, "rep"), "repair")
    err = _stop(child, signal.SIGTERM)
    assert "interrupted by SIGTERM during repair_1" in err and "1 plan version committed (current v1)" in err
    _assert_interrupted(root, "rep", "SIGTERM", capsys)
    events = _events(root, "rep")
    assert EventType.REPAIR_FINISHED not in events  # the repair stopped, it did not finish
    summary = _resume(argv)
    assert summary["versions_committed"] == 2 and summary["repair_method"] == "full"


def test_sigterm_between_commits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    # The second repair is long, so the signal lands after the second commit and before the third.
    argv = ["run", "ta21", "--disrupt", "mixed", "--disruptions", "2", "--time-limit", "0.5", "--repair-method",
            "full", "--repair-budget", "4", "--root", str(root), "--run-id", "mid", "--quiet"]
    child = _start(argv)
    _wait_for(child, lambda: _events(root, "mid").count(EventType.PLAN_COMMITTED) == 2, "the second commit")
    err = _stop(child, signal.SIGTERM)
    assert "2 plan versions committed (current v2)" in err
    _assert_interrupted(root, "mid", "SIGTERM", capsys)
    summary = _resume(argv)
    assert summary["versions_committed"] == 3
    # the resumed run did not plan or repair the first disruption again
    log = ExecutionLog(FsStore(root), "mid")
    optimizer_runs = [e for e in log.events() if e.type is EventType.PLAN_PROPOSED
                      and e.payload.get("role") == "optimizer"]
    assert len(optimizer_runs) == 1
    assert sum(e.type is EventType.REPAIR_FINISHED and e.node_id == "repair_1" for e in log.events()) == 1


def test_sigint_during_static_planning_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    child = _start(["solve", "ta21", "--time-limit", "120", "--out", str(out)])
    _wait_for(child, lambda: _handlers_installed(child.pid), "the stop handler")
    err = _stop(child, signal.SIGINT)
    assert err.strip() == "alas: interrupted by SIGINT during the CP-SAT solve; nothing was written"
    assert not out.exists()


def test_sigint_during_alas_repair_writes_nothing(tmp_path: Path) -> None:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import dispatch
    from alas_argo.jssp.disruption import generate_disruption

    inst = get_instance("ta21")
    plan = dispatch(inst, "mwkr")
    (tmp_path / "p.json").write_text(json.dumps(plan.to_json()))
    (tmp_path / "d.json").write_text(json.dumps(generate_disruption(inst, plan, "shock", seed=1).to_json()))
    out = tmp_path / "r.json"
    child = _start(["repair", "--instance", "ta21", "--schedule", str(tmp_path / "p.json"), "--disruption",
                    str(tmp_path / "d.json"), "--method", "full", "--time-limit", "120", "--out", str(out)])
    _wait_for(child, lambda: _handlers_installed(child.pid), "the stop handler")
    err = _stop(child, signal.SIGINT)
    assert err.startswith("alas: interrupted by SIGINT during") and "nothing was written" in err
    assert not out.exists()


def test_sigterm_stops_a_workflow_step_with_the_transient_exit_and_the_step_runs_again(tmp_path: Path) -> None:
    # What Kubernetes does to a step pod it deletes, evicts or drains: SIGTERM. The step exits 75, the code
    # Argo's retry expression retries (143 failed the workflow on the real cluster), and its next attempt, on
    # the same inputs, continues the interrupted run to the end. (A 20x20 plan: the optimizer does not prove
    # optimality in its 6 s, so the signal lands in it.)
    root = tmp_path / "store"
    argv = ["step", "bench-case", "--run-id", "bench", "--store", "fs", "--root", str(root), "--item",
            json.dumps({"instance": "ta21", "scenario": "breakdown", "seed": 0}), "--run-input", "time-limit=6",
            "--outputs", str(tmp_path / "out")]
    case = "bench.ta21.breakdown.0"
    child = _start(argv)
    _wait_for(child, _started(root, case, "optimize"), "the case's optimizer")
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=240)
    assert "Traceback" not in err, err
    assert child.returncode == 75, err
    assert "interrupted by SIGTERM" in err and "exit 75: transient" in err
    assert _events(root, case)[-1] is EventType.RUN_INTERRUPTED
    assert not (tmp_path / "out" / "key").exists()  # no output handed to Argo
    again = _start(argv)  # Argo's retry: the same command
    _, err = again.communicate(timeout=600)
    assert again.returncode == 0, err
    events = _events(root, case)
    assert events.count(EventType.RUN_INTERRUPTED) == 1 and events.count(EventType.PLAN_COMMITTED) == 2
    assert ExecutionLog(FsStore(root), case).verify().ok
    assert (tmp_path / "out" / "key").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_bench_whose_cases_never_solve_stops_after_the_case_in_hand(tmp_path: Path, signum: int) -> None:
    """The simulated LLM bench calls no solver a stop request would reach: it ran on after SIGTERM until killed
    (seen for 10 minutes). The progress callback now ends it after the case in hand, nothing written."""
    out = tmp_path / "out"
    child = _start(["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "10000", "-o", str(out)])
    _wait_for(child, lambda: _handlers_installed(child.pid), "the stop handlers")
    time.sleep(1.0)  # into the cases
    err = _stop(child, signum)
    assert f"interrupted by {signal.Signals(signum).name} during alas bench llm; nothing was written" in err
    assert "stopped after" in err
    assert not out.exists()
