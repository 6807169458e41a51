"""`scripts/cluster up` installed the chart with `--wait`: what a user sees after the install."""

from __future__ import annotations

import pytest

from tests.cluster.conftest import Kube

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
