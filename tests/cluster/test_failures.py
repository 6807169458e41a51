"""Failure paths on the real engine: pods killed under a running workflow, a repair killed for good that climbs
the escalation ladder's tasks, a step that fails for good and the onExit compensation, and a resubmitted run
id."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.cluster.conftest import Argo, Kube, Store

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]


def node_of(workflow: dict[str, Any], display: str) -> dict[str, Any]:
    return next(n for n in workflow["status"]["nodes"].values() if n["displayName"] == display)


def attempts(workflow: dict[str, Any], node: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = workflow["status"]["nodes"]
    return [nodes[c] for c in node.get("children", [])]


def kill_pods(kube: Kube, argo: Argo, workflow: str, match: Callable[[dict[str, Any]], bool],
              *, times: int, timeout: float = 600) -> list[str]:
    """Delete pods of `workflow` that `match`, `times` pods in all, each as soon as its step runs (its `main`
    container started: Argo recreates a pod deleted before that, which is not the failure meant here)."""
    killed: list[str] = []
    deadline = time.monotonic() + timeout
    while len(killed) < times and time.monotonic() < deadline:
        pods = kube.json("get", "pods", "-l", f"workflows.argoproj.io/workflow={workflow}")["items"]
        for pod in pods:
            name = pod["metadata"]["name"]
            if name in killed or not match(pod) or not main_running(pod):
                continue
            # Kubernetes' own grace period (30 s): SIGTERM, which `alas step` answers with exit 75 (retried), then
            # SIGKILL. A 1 s grace made it a race: a step still finishing its work was killed (137, not
            # transient: the workflow failed once), unless Argo saw the pod vanish first (Error, retried).
            kube("delete", "pod", name, "--wait=false")
            killed.append(name)
            if len(killed) == times:
                break
        if argo.get(workflow)["status"].get("phase") in ("Succeeded", "Failed", "Error"):
            break
        time.sleep(0.5)
    return killed


def main_running(pod: dict[str, Any]) -> bool:
    states = {c["name"]: c.get("state", {}) for c in pod["status"].get("containerStatuses", [])}
    return "running" in states.get("main", {})


def runs_template(workflow: str, template: str) -> Callable[[dict[str, Any]], bool]:
    """Argo names a pod <workflow>-<template>-<hash>."""
    prefix = f"{workflow}-{template}-"
    return lambda pod: str(pod["metadata"]["name"]).startswith(prefix) and pod["metadata"]["name"][
        len(prefix):].isdigit()


def item_of(pod: dict[str, Any]) -> int:
    """The fan-out item a job-agent pod runs (its node name ends in item(<i>:<value>)(<attempt>))."""
    node = pod["metadata"]["annotations"]["workflows.argoproj.io/node-name"]
    return int(node.rsplit("item(", 1)[1].split(":", 1)[0])


def started(store: Store, run_id: str, node: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in store.events(run_id) if e["type"] == "node.started" and e.get("node_id") == node]


def test_a_job_agent_pod_killed_mid_run_leaves_one_output_per_job_and_a_success(argo: Argo, kube: Kube,
                                                                             store: Store) -> None:
    run_id = f"e2e-kill-{int(time.time())}"
    name = argo.submit("alas-plan", {"run-id": run_id, "instance": "ft10", "scenarios": '["none"]'},
                       wait=False)["metadata"]["name"]

    def mid_run(pod: dict[str, Any]) -> bool:
        # Its step has begun: it logged node.started (so the kill interrupts real work).
        return (runs_template(name, "propose-item")(pod) and main_running(pod)
                and any(s.get("item") == item_of(pod) for s in started(store, run_id, "propose")))

    killed_items: list[int] = []

    def match(pod: dict[str, Any]) -> bool:
        if mid_run(pod):
            killed_items.append(item_of(pod))
            return True
        return False

    killed = kill_pods(kube, argo, name, match, times=1)
    assert len(killed) == 1
    argo.succeeded(name)
    item = killed_items[0]
    # Argo v3.6.5 retries the node (the step exits 75 on the deletion's SIGTERM; or Argo marks it Error when it
    # sees the pod gone first): the job agent runs again; the log holds its output once (a step finds an output
    # recorded before the kill and returns it), and the supervisor gets one proposal per job.
    assert sum(1 for s in started(store, run_id, "propose") if s.get("item") == item) >= 1
    done = [e for e in store.events(run_id) if e["type"] == "node.succeeded" and e.get("node_id") == "propose"]
    assert sorted(e["payload"]["item"] for e in done) == list(range(10))
    proposed = [e["payload"] for e in store.events(run_id)
                if e["type"] == "plan.proposed" and e.get("node_id") == "merge"]
    assert proposed and proposed[-1]["proposals"] == 10


def kill_step_process(kube: Kube, pod: str, signum: int = 9, *, only_uncaught: bool = False) -> bool:
    """Send ``signum`` to the step's process in the pod's main container: SIGKILL by default (what the OOM
    killer does), SIGTERM as the kubelet does first when the pod is deleted, evicted or drained. With
    ``only_uncaught``, only while the process does not catch the signal (the kernel's SigCgt mask lacks it):
    while Python starts, before `alas step` installs its handler, or while it exits, after the step put the
    default back. Those windows are short, shorter than a `kubectl exec` round trip (a test that polled from
    outside missed every one of ten job agents on a loaded machine), so the pod's own loop watches for one
    until the step process is gone. Whether the signal was sent."""
    # Only `alas step` itself: argoexec (the container's PID 1, `argoexec emissary -- alas step ...`) has `step`
    # in its command line too; SIGKILL cannot reach a namespace's init, but SIGTERM did, and it took this exec
    # session down with the container (exit 143). The step ending the container may end the session as well,
    # so the exec's own exit code is not checked: the workflow's outcome is (and "sent" only when it printed).
    script = ("import os, time\n"
              "deadline, seen = time.monotonic() + 120, False\n"
              "while time.monotonic() < deadline:\n"
              "    found = False\n"
              "    for p in filter(str.isdigit, os.listdir('/proc')):\n"
              "        try:\n"
              "            cmd = open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')\n"
              "            if b'step' not in cmd or cmd[0].endswith(b'argoexec') or int(p) == os.getpid():\n"
              "                continue\n"
              "            found = True\n"
              "            status = dict(l.split(':', 1) for l in open(f'/proc/{p}/status') if ':' in l)\n"
              f"            if {only_uncaught} and int(status['SigCgt'], 16) >> ({signum} - 1) & 1:\n"
              "                continue\n"
              "        except (OSError, KeyError, ValueError):  # gone while read\n"
              "            continue\n"
              "        print('sent', flush=True)  # first: the step's end may end this session too\n"
              f"        os.kill(int(p), {signum})\n"
              "        raise SystemExit(0)\n"
              f"    if not {only_uncaught} or (seen and not found):\n"
              "        break\n"
              "    seen = seen or found\n"
              "    time.sleep(0.002)\n")
    return "sent" in kube("exec", pod, "-c", "main", "--", "python", "-c", script, check=False, timeout=180).stdout


def repairing_pod(argo: Argo, kube: Kube, store: Store, run_id: str) -> tuple[str, str]:
    """Submit alas-plan on ta01 with a full-stable repair and wait until its repair step runs: (workflow, pod).
    full-stable spends its whole budget (fewest moves at the best makespan), so the step runs long enough to be
    caught mid-run."""
    name = argo.submit("alas-plan", {"run-id": run_id, "instance": "ta01", "method": "full-stable", "time-limit": "60"},
                       wait=False)["metadata"]["name"]

    def repairing() -> str | None:
        pods = kube.json("get", "pods", "-l", f"workflows.argoproj.io/workflow={name}")["items"]
        return next((p["metadata"]["name"] for p in pods if runs_template(name, "repair-1")(p) and main_running(p)
                     and started(store, run_id, "repair_1")), None)

    return name, kube.wait_for("the repair step to run", repairing, timeout=600, every=0.5)


def test_a_repair_killed_for_good_escalates_to_the_patch_rung(argo: Argo, kube: Kube, store: Store) -> None:
    """The escalation ladder as Argo tasks: LCRP's pod killed outright fails its task (exit 137 is not transient
    under the step's retry policy), which starts the patch rung, a task of its own; the replan rung is omitted,
    recheck revalidates the patch's output, and the workflow succeeds with the patched repair committed."""
    run_id = f"e2e-ladder-{int(time.time())}"
    name, pod = repairing_pod(argo, kube, store, run_id)
    # Killed by signal, as the OOM killer does: the process is gone and logs no failure of its own.
    kill_step_process(kube, pod)
    argo("wait", name, check=False)
    workflow = argo.get(name)
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
    repair = node_of(workflow, "repair-1")
    assert repair["phase"] == "Failed"
    assert [a["phase"] for a in attempts(workflow, repair)] == ["Failed"]
    assert node_of(workflow, "repair-1-patch")["phase"] == "Succeeded"
    assert node_of(workflow, "repair-1-replan")["phase"] == "Omitted"
    assert node_of(workflow, "recheck-1")["phase"] == "Succeeded"
    events = store.events(run_id)
    escalated = [e["payload"] for e in events if e["type"] == "recovery.escalated"]
    assert [(e["from"], e["to"]) for e in escalated] == [("retry", "patch")]
    assert escalated[0]["error"].startswith("unknown")  # the killed pod recorded no error
    assert "compensation.started" not in [e["type"] for e in events]
    shown = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    assert shown["current_version"] == 2
    verified = json.loads(store.alas("log", "verify", run_id, "--store", "s3", "--json").stdout)
    assert verified["ok"] is True, verified


def test_a_repair_stopped_by_sigterm_exits_75_and_is_retried_not_escalated(argo: Argo, kube: Kube,
                                                                          store: Store) -> None:
    """SIGTERM, what a pod deleted, evicted or drained gets first: `alas step` stops its search and exits 75,
    which the retry expression retries; the second attempt repairs, no rung of the ladder runs."""
    run_id = f"e2e-term-{int(time.time())}"
    name, pod = repairing_pod(argo, kube, store, run_id)
    kill_step_process(kube, pod, signum=15)
    argo("wait", name, check=False)
    workflow = argo.get(name)
    assert workflow["status"]["phase"] == "Succeeded", workflow["status"].get("message")
    repair = node_of(workflow, "repair-1")
    tries = attempts(workflow, repair)
    assert [a["phase"] for a in tries] == ["Failed", "Succeeded"], tries
    assert "exit code 75" in tries[0].get("message", ""), tries[0]
    assert all(n["displayName"] not in ("repair-1-patch", "repair-1-replan") or n["phase"] in ("Omitted", "Skipped")
               for n in workflow["status"]["nodes"].values())
    events = store.events(run_id)
    assert [e for e in events if e["type"] == "recovery.escalated"] == []
    assert sum(e["type"] == "repair.finished" for e in events) == 1
    verified = json.loads(store.alas("log", "verify", run_id, "--store", "s3", "--json").stdout)
    assert verified["ok"] is True, verified


def test_a_job_agent_stopped_while_python_starts_dies_on_143_and_is_retried(argo: Argo, kube: Kube,
                                                                            store: Store) -> None:
    """SIGTERM before `alas step` catches it (a pod deleted or evicted while Python starts; the same holds while
    it exits): the default action ends the step, exit 143. Argo retries it like 75; before, one such pod failed
    the whole workflow (seen on this cluster; most likely also what failed CI's job-agent kill test once)."""
    run_id = f"e2e-early-{int(time.time())}"
    name = argo.submit("alas-plan", {"run-id": run_id, "instance": "ft10", "scenarios": '["none"]'},
                       wait=False)["metadata"]["name"]
    signalled: list[int] = []

    def starting(pod: dict[str, Any]) -> bool:
        if (runs_template(name, "propose-item")(pod) and main_running(pod) and not signalled
                and kill_step_process(kube, pod["metadata"]["name"], signal.SIGTERM, only_uncaught=True)):
            signalled.append(item_of(pod))
        return bool(signalled)

    kube.wait_for("a job-agent step signalled while it does not catch SIGTERM", lambda: any(
        starting(p) for p in kube.json("get", "pods", "-l", f"workflows.argoproj.io/workflow={name}")["items"]),
        timeout=300, every=0.2)
    workflow = argo.succeeded(name)
    item = next(n for n in workflow["status"]["nodes"].values()
                if n["type"] == "Retry" and n["displayName"].startswith(f"item({signalled[0]}:"))
    tries = attempts(workflow, item)
    assert [(a["phase"], (a.get("outputs") or {}).get("exitCode")) for a in tries] == [
        ("Failed", "143"), ("Succeeded", "0")], tries
    done = [e for e in store.events(run_id) if e["type"] == "node.succeeded" and e.get("node_id") == "propose"]
    assert sorted(e["payload"]["item"] for e in done) == list(range(10))


def test_a_step_that_fails_for_good_after_a_commit_is_compensated_on_exit(argo: Argo, store: Store) -> None:
    """A given disruption revealed after the plan ends fails disrupt_1 for good (exit 2, not retried) after
    commit_v1 committed the baseline: the workflow fails and its onExit handler retracts what it committed,
    once. (A well-formed disruption: the reveal time is the one rule only a step that sees the plan can check.)"""
    run_id = f"e2e-saga-{int(time.time())}"
    name = argo.submit("alas-plan", {"run-id": run_id, "instance": "ft10", "disruption": json.dumps(
        {"time": 100_000, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 100_000, "duration": 5}]})},
                       wait=False)["metadata"]["name"]
    argo("wait", name, check=False)
    workflow = argo.get(name)
    assert workflow["status"]["phase"] in ("Failed", "Error")
    disrupt = node_of(workflow, "disrupt-1")
    assert [a["phase"] for a in attempts(workflow, disrupt)] == ["Failed"]
    compensate = node_of(workflow, "compensate")
    assert compensate["phase"] == "Succeeded"
    events = store.events(run_id)
    assert "compensation.finished" in [e["type"] for e in events]
    retracted = [e["payload"] for e in events if e["type"] == "plan.retracted"]
    assert [r["version"] for r in retracted] == [1], retracted
    shown = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    assert shown["current_version"] is None
    verified = json.loads(store.alas("log", "verify", run_id, "--store", "s3", "--json").stdout)
    assert verified["ok"] is True, verified


def test_resubmitting_a_run_id_commits_no_second_baseline(argo: Argo, store: Store) -> None:
    run_id = f"e2e-again-{int(time.time())}"
    params = {"run-id": run_id, "instance": "ft10", "scenarios": '["none"]'}
    first = argo.submit("alas-plan", params)
    second = argo.submit("alas-plan", params)
    assert first["status"]["phase"] == second["status"]["phase"] == "Succeeded"
    baselines = [e for e in store.events(run_id) if e["type"] == "plan.committed"
                 and e["payload"].get("reason") == "baseline"]
    assert len(baselines) == 1


def test_argos_workflow_controller_restarted_mid_run_finishes_the_run_once(argo: Argo, kube: Kube,
                                                                          store: Store) -> None:
    """Argo's workflow controller deleted while the job agents run (an upgrade, a node drained): the new
    controller adopts the running workflow, which succeeds with one output per job, one baseline and a log that
    verifies; no step's work is done twice into the log."""
    run_id = f"e2e-wfc-{int(time.time())}"
    name = argo.submit("alas-plan", {"run-id": run_id, "instance": "ft10", "scenarios": '["none"]'},
                       wait=False)["metadata"]["name"]
    kube.wait_for("a job agent to run", lambda: any(
        runs_template(name, "propose-item")(p) and main_running(p)
        for p in kube.json("get", "pods", "-l", f"workflows.argoproj.io/workflow={name}")["items"]), timeout=600,
        every=0.5)
    controller = Kube("argo")
    before = {p["metadata"]["name"] for p in controller.json("get", "pods", "-l", "app=workflow-controller")["items"]}
    assert before, "no workflow-controller pod in namespace argo"
    controller("delete", "pod", "-l", "app=workflow-controller", "--wait=false")
    argo.succeeded(name)
    after = {p["metadata"]["name"] for p in controller.json("get", "pods", "-l", "app=workflow-controller")["items"]
             if p["metadata"].get("deletionTimestamp") is None}
    assert after and not after & before, f"the controller was not replaced: {before} -> {after}"
    done = [e["payload"]["item"] for e in store.events(run_id)
            if e["type"] == "node.succeeded" and e.get("node_id") == "propose"]
    assert sorted(done) == list(range(10)), done
    baselines = [e for e in store.events(run_id) if e["type"] == "plan.committed"
                 and e["payload"].get("reason") == "baseline"]
    assert len(baselines) == 1
    store.alas("log", "verify", run_id, "--store", "s3")
