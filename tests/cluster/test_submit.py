"""`alas submit` against the real Argo server (Hera's WorkflowsService over HTTPS), as the chart README's
quickstart has a user do it: the IR definition compiled on this machine, sent to the server, run by Argo's
controller in the release's namespace with the release's store, and the run committed to MinIO. And what a user
sees when the submission cannot go: a self-signed certificate without ``-k``, a server that is not there, a
namespace that is not there; each a one-line error and its exit code, and no workflow created.

`scripts/cluster up` serves the Argo server (``--auth-mode=server``, TLS with its own certificate) on a
NodePort of the node.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.cluster.conftest import Argo, Kube, Store, node_ip, record_figure

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]

IMAGE = "alas:0.1.0"  # the image `scripts/cluster images` loaded into the node


@pytest.fixture(scope="module")
def server(kube: Kube) -> str:
    service = Kube(namespace="argo").json("get", "service", "argo-server")
    port = next(p["nodePort"] for p in service["spec"]["ports"] if p["port"] == 2746)
    return f"https://{node_ip(kube)}:{port}"


def _workflows_of(argo: Argo, run_id: str) -> list[str]:
    """The workflows whose run-id parameter is ``run_id``."""
    listed = json.loads(argo("list", "-o", "json").stdout) or []
    found = []
    for workflow in listed:
        params = ((workflow.get("spec") or {}).get("arguments") or {}).get("parameters") or []
        if any(p.get("name") == "run-id" and p.get("value") == run_id for p in params):
            found.append(workflow["metadata"]["name"])
    return found


def _submit(store: Store, server: str, *args: str, check: bool = True) -> Any:
    return store.alas("submit", "alas-plan", "--host", server, "--image", IMAGE, *args, check=check, timeout=120)


def test_alas_submit_runs_alas_plan_on_the_server(argo: Argo, kube: Kube, store: Store, server: str) -> None:
    run_id = f"e2e-submit-{int(time.time()) % 100000}"
    began = time.monotonic()
    out = _submit(store, server, "-k", "--namespace", kube.namespace, "-p", f"run-id={run_id}",
                  "-p", "instance=ft06", "-p", "planner=heuristic").stdout
    submitted = re.search(rf"submitted (\S+) in namespace {kube.namespace}", out)
    assert submitted is not None, out
    workflow = argo.succeeded(submitted.group(1))
    seconds = round(time.monotonic() - began, 1)
    assert workflow["metadata"]["labels"].get("alas-argo.dev/workflow") == "alas-plan"
    shown = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    assert shown["current_version"] == 2  # the plan, then the repair of the one disruption alas-plan reveals
    store.alas("log", "verify", run_id, "--store", "s3")
    record_figure("alas_submit", {"seconds": seconds, "workflow": submitted.group(1), "run": run_id})


@pytest.mark.parametrize(("case", "flags", "code", "says"), [
    ("a self-signed certificate without -k", [], 2, "TLS certificate is not trusted"),
    ("a namespace that is not there", ["-k", "--namespace", "no-such-namespace"], 2,
     "Argo server refused the workflow"),
])
def test_a_submission_the_server_cannot_take_says_why_and_creates_nothing(
        argo: Argo, kube: Kube, store: Store, server: str, case: str, flags: list[str], code: int, says: str) -> None:
    run_id = f"e2e-refused-{int(time.time() * 1000) % 10**8}"
    flags = flags if "--namespace" in flags else [*flags, "--namespace", kube.namespace]
    proc = _submit(store, server, *flags, "-p", f"run-id={run_id}", "-p", "instance=ft06", check=False)
    assert proc.returncode == code, (case, proc.stdout, proc.stderr)
    assert says in proc.stderr, (case, proc.stderr)
    assert server in proc.stderr, (case, proc.stderr)  # where: the server it asked
    assert "Traceback" not in proc.stderr
    assert _workflows_of(argo, run_id) == []


def test_a_server_that_is_not_there_is_transient(kube: Kube, store: Store) -> None:
    # A port of the node nothing listens on: connection refused, exit 75 (trying again later may work).
    proc = store.alas("submit", "alas-plan", "--host", f"https://{node_ip(kube)}:1", "-k", "--image", IMAGE,
                      "-p", "instance=ft06", check=False, timeout=120)
    assert proc.returncode == 75, (proc.stdout, proc.stderr)
    assert "Argo server not reachable" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
