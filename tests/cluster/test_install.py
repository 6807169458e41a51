"""`scripts/cluster up` installed the chart with `--wait`: what a user sees after the install."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.cluster.conftest import Kube, Store, record_figure, run, tool

# Real workflows take minutes (a plan run is 2 min, a failure path up to 5 on a busy machine).
pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]


def test_every_pod_of_the_release_is_ready(kube: Kube) -> None:
    pods = kube.json("get", "pods")["items"]
    running = [p for p in pods if p["status"].get("phase") == "Running"]
    assert {p["metadata"]["labels"].get("app.kubernetes.io/component") for p in running} >= {
        "controller", "operator", "minio"}
    for pod in running:
        ready = {c["type"]: c["status"] for c in pod["status"]["conditions"]}
        assert ready.get("Ready") == "True", pod["metadata"]["name"]
    for deployment in kube.json("get", "deployments")["items"]:
        status = deployment["status"]
        assert status.get("availableReplicas") == deployment["spec"]["replicas"], deployment["metadata"]["name"]


def test_pods_run_as_the_chart_says(kube: Kube) -> None:
    for pod in kube.json("get", "pods", "-l", "app.kubernetes.io/component in (controller,operator)")["items"]:
        spec = pod["spec"]
        for container in spec["containers"]:
            assert container["image"].endswith("alas:0.1.0")
            assert container["imagePullPolicy"] == "Never"  # values-kind.yaml
            context = container.get("securityContext", {})
            assert context.get("readOnlyRootFilesystem") is True
            assert context.get("runAsNonRoot") is True or spec.get("securityContext", {}).get("runAsNonRoot")


def test_the_crds_and_workflow_templates_are_served(kube: Kube) -> None:
    for crd in ("planruns.alas.dev", "disruptions.alas.dev", "workflows.argoproj.io"):
        got = Kube(namespace="default").json("get", "crd", crd)
        conditions = {c["type"]: c["status"] for c in got["status"]["conditions"]}
        assert conditions.get("Established") == "True", crd
    names = {t["metadata"]["name"] for t in kube.json("get", "workflowtemplates")["items"]}
    assert {"alas-plan", "alas-bench", "alas-repair"} <= names


def test_the_controller_answers_through_its_node_port(kube: Kube) -> None:
    import urllib.request

    from tests.cluster.conftest import node_ip, node_port

    url = f"http://{node_ip(kube)}:{node_port(kube, 'controller', 'http')}"
    for path in ("/healthz", "/readyz"):
        with urllib.request.urlopen(url + path, timeout=10) as response:
            assert response.status == 200, path
    with urllib.request.urlopen(url + "/metrics", timeout=10) as response:
        assert b"# TYPE" in response.read()


def test_helm_test_passes_every_smoke_check(kube: Kube, store: Store) -> None:
    """`helm test` as a user runs it after an install: the chart's test pod runs `alas smoke` against the
    release (a run planned into MinIO, a disruption repaired through the controller's Service with the
    release's token, the log verified) and succeeds; its run is in the store."""
    began = time.monotonic()
    out = run([tool("helm"), "test", "alas", "-n", kube.namespace, "--logs", "--timeout", "5m"], timeout=420).stdout
    seconds = round(time.monotonic() - began, 1)
    assert re.search(r"Phase:\s+Succeeded", out), out
    assert "all 5 checks passed" in out, out
    run_id = re.search(r"alas smoke: run (smoke-\S+)", out)
    assert run_id is not None, out
    shown = json.loads(store.alas("log", "show", run_id.group(1), "--store", "s3", "--json").stdout)
    assert shown["current_version"] == 2
    # The controller's repair ran with LCRP's compiled tabu search, the default: the image carries the kernel
    # (a repair without it records no first edit; images/Dockerfile).
    edits = re.findall(r'"first_edit": "(\w+)"', json.dumps(shown["events"]))
    assert edits and set(edits) == {"tabu"}, shown["events"]
    record_figure("helm_test", {"seconds": seconds, "run": run_id.group(1)})
