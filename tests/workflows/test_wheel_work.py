"""Every command the README's table lists does its real work from a non-editable install (the wheel in a fresh
venv, nothing of the checkout on the path): planning, validation, disruption, repair, charts, the log, replay, the
IR and its compilers, a pod's step, the three services and every benchmark at its smallest size.

Each test names the README commands it exercises in ``COVERED``; the last test checks that the README lists no
command without such a test. The operator is the one command whose work needs a Kubernetes API: here it gets the
clear refusal of a machine without one, and its real work from an installed package is the cluster end to end's
(the image installs the wheel).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.workflows.test_wheel import readme_commands

# Measured on the loaded 2-core machine: 3-12 s per test (each command starts a fresh interpreter from the wheel).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

#: README command (argv words) -> the test that runs it for real.
COVERED: dict[str, str] = {}


def covers(*commands: str) -> Any:
    def mark(fn: Any) -> Any:
        for c in commands:
            COVERED[c] = fn.__name__
        return fn
    return mark


def alas(bin_dir: Path, *args: str, cwd: Path, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ALAS_WORKFLOWS_DIR")}
    env["KUBECONFIG"] = str(cwd / "no-kubeconfig")  # never the machine's cluster
    done = subprocess.run([str(bin_dir / "alas"), *args], capture_output=True, text=True, env=env, cwd=cwd,
                          check=False, timeout=200)
    if ok:
        assert done.returncode == 0, f"alas {' '.join(args)}: rc {done.returncode}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    return done


def alas_json(bin_dir: Path, *args: str, cwd: Path) -> Any:
    return json.loads(alas(bin_dir, *args, "--json", cwd=cwd).stdout)


@pytest.fixture
def run(installed: Path, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The README's main job, from the wheel: (working directory, its --json summary)."""
    cwd = tmp_path
    summary = alas_json(installed, "run", "ft06", "--disrupt", "breakdown", "--time-limit", "2", "--repair-budget",
                        "2", "--root", "store", cwd=cwd)
    return cwd, summary


@covers("run", "log ls", "log show", "log diff", "log verify", "replay")
def test_a_run_and_its_log(installed: Path, run: tuple[Path, dict[str, Any]]) -> None:
    cwd, summary = run
    rid = summary["run_id"]
    assert summary["final_valid"] is True and summary["status"] == "succeeded"
    listed = alas_json(installed, "log", "ls", "--root", "store", cwd=cwd)
    assert [(r["run_id"], r["status"], r["plans"]) for r in listed] == [(rid, "succeeded", 2)]
    shown = alas_json(installed, "log", "show", rid, "--root", "store", cwd=cwd)
    assert shown["current_version"] == 2 and shown["retracted"] == [], shown  # the baseline and the repair
    diff = alas_json(installed, "log", "diff", rid, "1", "2", "--root", "store", cwd=cwd)
    assert (diff["makespan_a"], diff["makespan_b"]) == (summary["makespan_before"], summary["makespan_after"])
    assert alas_json(installed, "log", "verify", rid, "--root", "store", cwd=cwd)["ok"] is True
    replayed = alas_json(installed, "replay", rid, "--root", "store", cwd=cwd)
    assert replayed["parity"] is True and replayed["current_version"] == 2 and replayed["steps"], replayed


@covers("solve", "validate", "disrupt", "repair", "gantt", "instance list", "instance show")
def test_plan_validate_disrupt_repair_draw(installed: Path, tmp_path: Path) -> None:
    names = {i["name"] for i in alas_json(installed, "instance", "list", cwd=tmp_path)}
    assert {"ft06", "ta01", "ta80", "dmu01", "dmu80", "abz7", "swv01", "yn1"} <= names
    shown = alas_json(installed, "instance", "show", "ft06", cwd=tmp_path)
    assert shown["name"] == "ft06" and len(shown["jobs"]) == 6 and shown["jobs"][0][0] == [2, 1], shown
    solved = alas_json(installed, "solve", "ft06", "--time-limit", "2", "--out", "plan.json", cwd=tmp_path)
    assert solved["makespan"] == 55 and solved["status"] == "optimal"  # ft06's optimum, proven in well under 2 s
    alas(installed, "validate", "--instance", "ft06", "--schedule", "plan.json", cwd=tmp_path)
    drawn = alas_json(installed, "disrupt", "--instance", "ft06", "--schedule", "plan.json", "--kind", "breakdown",
                      "--seed", "3", "--out", "d.json", cwd=tmp_path)
    assert drawn["events"] and json.loads((tmp_path / "d.json").read_text()) == drawn
    repaired = alas_json(installed, "repair", "--instance", "ft06", "--schedule", "plan.json", "--disruption",
                         "d.json", "--method", "lcrp", "--time-limit", "2", "--out", "r.json", cwd=tmp_path)
    assert repaired["valid"] is True and repaired["makespan"] >= solved["makespan"], repaired
    checked = alas(installed, "validate", "--instance", "ft06", "--schedule", "r.json", "--disruption", "d.json",
                   "--baseline", "plan.json", cwd=tmp_path)
    assert f"valid: 36 operations of ft06, makespan {repaired['makespan']}" in checked.stdout
    alas(installed, "gantt", "--instance", "ft06", "--schedule", "r.json", "--before", "plan.json",
         "--disruption", "d.json", "--out", "g.png", cwd=tmp_path)
    alas(installed, "gantt", "--instance", "ft06", "--schedule", "r.json", "--out", "g.html", cwd=tmp_path)
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ft06" in (tmp_path / "g.html").read_text()


@covers("ir schema", "ir validate", "ir export", "engines matrix", "render", "submit")
def test_the_ir_and_its_compilers(installed: Path, tmp_path: Path) -> None:
    schema = json.loads(alas(installed, "ir", "schema", cwd=tmp_path).stdout)
    assert "properties" in schema and "nodes" in schema["properties"]
    (tmp_path / "plan.ir.json").write_text(alas(installed, "ir", "export", "alas-plan", cwd=tmp_path).stdout)
    alas(installed, "ir", "validate", "plan.ir.json", cwd=tmp_path)
    matrix = alas_json(installed, "engines", "matrix", cwd=tmp_path)
    assert {row["feature"] for row in matrix} >= {"map", "retry", "compensation"}
    alas(installed, "render", "--out", "rendered", cwd=tmp_path)
    assert (tmp_path / "rendered/argo/alas-plan.yaml").is_file()
    dry = alas(installed, "submit", "alas-plan", "--dry-run", cwd=tmp_path).stdout
    assert "kind: Workflow" in dry and "alas-plan" in dry


@covers("step")
def test_a_pod_step(installed: Path, tmp_path: Path) -> None:
    """What the first pod of alas-plan runs (the arguments its template renders), against a filesystem store."""
    alas(installed, "step", "blueprint", "--node", "blueprint", "--run-id", "w1", "--scope", "w1", "--outputs",
         "out", "--params", "{}", "--run-input", "run-id=w1", "--run-input", "instance=ft06", "--root", "store",
         cwd=tmp_path)
    assert json.loads((tmp_path / "out/jobs").read_text()) == [0, 1, 2, 3, 4, 5]
    assert (tmp_path / "out/key").read_text().strip() == "output/w1/blueprint"


def _serve(installed: Path, cwd: Path, *args: str, banner: str) -> Iterator[str]:
    """Start a service from the wheel on port 0; yield host:port from the banner it writes to stderr."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen([str(installed / "alas"), *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 90)
        line = proc.stderr.readline() if ready else ""
        assert banner in line, f"no banner within 90 s: {line!r}"
        yield line.split("http://", 1)[1].split()[0].removesuffix("/metrics")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


@covers("controller")
def test_the_controller_repairs_a_run(installed: Path, run: tuple[Path, dict[str, Any]]) -> None:
    cwd, summary = run
    rid = summary["run_id"]
    events = alas_json(installed, "log", "show", rid, "--root", "store", cwd=cwd)["events"]
    seen = [e["payload"]["disruption"]["time"] for e in events if e["type"] == "disruption.observed"]
    at = seen[-1] + 3  # a reveal after the run's own disruption (the controller refuses an earlier one)
    body = json.dumps({"time": at, "events": [{"kind": "machine_breakdown", "machine": 1, "start": at,
                                               "duration": 4}]}).encode()
    for host in _serve(installed, cwd, "controller", "--port", "0", "--root", "store", "--no-auth",
                       banner="alas controller listening"):
        with urllib.request.urlopen(f"http://{host}/runs/{rid}", timeout=30) as resp:
            before = json.load(resp)
        req = urllib.request.Request(f"http://{host}/runs/{rid}/disruptions", data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Idempotency-Key": "wheel-1"})
        with urllib.request.urlopen(req, timeout=120) as resp:
            answer = json.load(resp)
        assert answer["version"] == before["version"] + 1 == 3, answer
    shown = alas_json(installed, "log", "show", rid, "--root", "store", cwd=cwd)
    assert shown["current_version"] == 3
    assert alas_json(installed, "log", "verify", rid, "--root", "store", cwd=cwd)["ok"] is True


@covers("smoke")
def test_smoke_checks_a_served_controller(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", "wheel-smoke-token")  # the controller's and the check's
    for host in _serve(installed, tmp_path, "controller", "--port", "0", "--root", "store",
                       banner="alas controller listening"):
        doc = alas_json(installed, "smoke", "--root", "store", "--controller", f"http://{host}", "--run-id", "w1",
                        cwd=tmp_path)
    assert doc["ok"] is True and [c["ok"] for c in doc["checks"]] == [True] * 5, doc
    assert alas_json(installed, "log", "show", "w1", "--root", "store", cwd=tmp_path)["current_version"] == 2


@covers("metrics serve")
def test_the_metrics_exporter(installed: Path, tmp_path: Path) -> None:
    for host in _serve(installed, tmp_path, "metrics", "serve", "--port", "0", banner="serving metrics"):
        with urllib.request.urlopen(f"http://{host}/metrics", timeout=30) as resp:
            text = resp.read().decode()
        assert "# TYPE alas_repairs_total counter" in text


@covers("operator")
def test_the_operator_without_a_cluster_says_so(installed: Path, tmp_path: Path) -> None:
    done = alas(installed, "operator", "--once", cwd=tmp_path, ok=False)
    assert done.returncode == 2 and "no Kubernetes configuration found" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@covers("bench static", "bench repair", "bench ablation", "bench validator", "bench runtime", "bench log", "bench llm")
@pytest.mark.parametrize("args", [
    ["static", "--suite", "ft06", "--time-limit", "1", "--out", "o"],
    ["repair", "--suite", "ft06", "--scenarios", "breakdown", "--seeds", "1", "--methods", "aor,lcrp",
     "--time-limit", "1", "--baseline-time-limit", "1", "--out", "o"],
    ["ablation", "--suite", "ft06", "--trials", "1", "--time-limit", "1", "--out", "o"],
    ["validator", "--instance", "ft06", "--repeat", "3"],
    ["runtime", "--nodes", "5", "--repeats", "1", "--tasks", "4", "--seconds", "0.2"],
    ["log", "--root", "o", "--appends", "5", "--versions", "2"],
    ["llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--out", "o"],
], ids=lambda a: a[0])
def test_every_benchmark_at_its_smallest(installed: Path, tmp_path: Path, args: list[str]) -> None:
    doc = alas_json(installed, "bench", *args, cwd=tmp_path)
    if args[0] == "static":
        assert doc["rows"][0]["valid"] is True and doc["summary"]["valid_rate"] == 1.0
    elif args[0] == "repair":
        assert doc["valid_rate"] == 1.0 and {r["method"] for r in doc["summary"]} == {"aor", "lcrp"}
    elif args[0] == "ablation":
        assert {r["variant"] for r in doc["summary"]} and all(r["trials"] == 1 for r in doc["summary"])
    elif args[0] == "validator":
        assert all(r["valid"] is True and r["operations"] == 36 for r in doc)
    elif args[0] == "runtime":
        assert doc["overhead"] and doc["speedup"]
    elif args[0] == "log":
        assert doc["append"]["appends"] == 5 and doc["replay"]["parity"] is True
    else:
        assert doc["simulated"] is True and {r["instance"] for r in doc["rows"]} == {"ft06"}
    if "--out" in args:
        assert any((tmp_path / "o").iterdir())


@covers("bench report")
def test_bench_report_tabulates_case_runs_from_the_log(installed: Path, tmp_path: Path) -> None:
    # A case run as a bench-case pod names it (<fan-out>.<instance>.<scenario>.<seed>), here from `alas run`.
    ran = alas_json(installed, "run", "ft06", "--disrupt", "breakdown", "--planner", "heuristic", "--time-limit", "1",
                    "--run-id", "fan.ft06.breakdown.0", "--root", "store", cwd=tmp_path)
    doc = alas_json(installed, "bench", "report", "fan", "--root", "store", "--out", "o", cwd=tmp_path)
    [row] = doc["rows"]
    assert (row["run_id"], row["status"], row["final_valid"]) == ("fan.ft06.breakdown.0", "succeeded", True)
    assert (row["makespan_after"], row["moved_operations"]) == (ran["makespan_after"], ran["moved_operations"])
    assert (tmp_path / "o" / "cases.csv").is_file()


def test_every_command_the_readme_lists_has_real_work_here() -> None:
    listed = {" ".join(argv) for argv in readme_commands()}
    assert listed - set(COVERED) == set(), "README commands without a real-work test from the wheel"
    assert set(COVERED) - listed == set(), "tests claiming commands the README does not list"
