"""`helm uninstall`, then `helm install` again, as charts/alas/README.md ("Install, upgrade and GitOps") promises:
the release's workloads go, its two Secrets (``helm.sh/resource-policy: keep``), MinIO's volume claim and the CRDs
stay, and the release installed again serves the same controller token and the log written before it went, which
still verifies and still takes a disruption.

This file sorts after every other cluster test, so it runs last; it installs the release again with the values
it had (`helm get values`), as `scripts/cluster up` left it. Prometheus's targets are the Services' cluster IPs
of the first install: a telemetry test run after this one would need `scripts/cluster up` again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cluster.conftest import (
    ROOT,
    Kube,
    Store,
    controller_address,
    post_disruption,
    record_figure,
    run,
    token_secret,
    tool,
)

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1500)]

RELEASE = "alas"
INSTANCE = "ft06"
RELEASE_LABEL = f"app.kubernetes.io/instance={RELEASE}"


def _helm(*args: str, timeout: float = 900, check: bool = True) -> str:
    return run([tool("helm"), *args], timeout=timeout, check=check).stdout


def _names(kube: Kube, kind: str, selector: str | None = RELEASE_LABEL) -> set[str]:
    """The names of ``kind`` in the namespace (those with ``selector``'s labels, when given)."""
    found = kube.json("get", kind, *(("-l", selector) if selector else ()))["items"]
    return {item["metadata"]["name"] for item in found}


def _workload_pods(kube: Kube) -> set[str]:
    """The release's pods but its hooks' (the `helm test` pod)."""
    pods = kube.json("get", "pods", "-l", RELEASE_LABEL)["items"]
    return {p["metadata"]["name"] for p in pods if "helm.sh/hook" not in p["metadata"].get("annotations", {})}


def test_uninstall_keeps_the_log_and_the_token_for_the_next_install(kube: Kube, store: Store,
                                                                    tmp_path: Path) -> None:
    run_id = f"e2e-reinstall-{int(time.time()) % 100000}"
    store.alas("run", INSTANCE, "--planner", "heuristic", "--optimizer", "heuristic", "--disrupt", "breakdown",
               "--store", "s3", "--run-id", run_id, "--quiet")
    before = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    assert before["current_version"] == 2
    secrets = {token_secret(kube), *(
        v["valueFrom"]["secretKeyRef"]["name"]
        for v in kube.json("get", "deployment", "-l", "app.kubernetes.io/component=controller")["items"][0]["spec"][
            "template"]["spec"]["containers"][0].get("env", []) if v["name"] == "AWS_ACCESS_KEY_ID")}
    token = kube.secret(token_secret(kube), "token")
    claims = _names(kube, "pvc", None)
    assert any("minio" in c for c in claims), f"no volume claim of MinIO: {claims}"
    values = tmp_path / "values.json"
    values.write_text(_helm("get", "values", RELEASE, "-n", kube.namespace, "-o", "json"))

    began = time.monotonic()
    _helm("uninstall", RELEASE, "-n", kube.namespace, "--wait", "--timeout", "5m")
    uninstall_seconds = round(time.monotonic() - began, 1)
    status = run([tool("helm"), "status", RELEASE, "-n", kube.namespace], check=False)
    assert status.returncode != 0 and "not found" in status.stderr, status.stderr
    kube.wait_for("the release's pods gone", lambda: not _workload_pods(kube), timeout=300)
    # Helm never deletes a hook's objects on uninstall: the last `helm test` pod stays, as the README says.
    assert _names(kube, "pods") <= {"alas-smoke"}, _names(kube, "pods")
    for kind in ("deployments", "statefulsets", "services", "configmaps", "workflowtemplates", "roles",
                 "rolebindings", "serviceaccounts", "networkpolicies"):
        assert not _names(kube, kind), f"{kind} of the release left after helm uninstall: {_names(kube, kind)}"
    assert secrets <= {s["metadata"]["name"] for s in kube.json("get", "secrets")["items"]}, "a kept Secret went"
    assert claims <= _names(kube, "pvc", None), "MinIO's volume claim went"
    for crd in ("planruns.alas.dev", "disruptions.alas.dev"):
        Kube(namespace="default")("get", "crd", crd)

    began = time.monotonic()
    _helm("install", RELEASE, str(ROOT / "charts" / "alas"), "-n", kube.namespace, "-f", str(values),
          "--wait", "--timeout", "10m")
    install_seconds = round(time.monotonic() - began, 1)
    assert kube.secret(token_secret(kube), "token") == token, "the install after an uninstall made a new token"
    assert claims == _names(kube, "pvc", None), "MinIO got a new volume claim"

    store.alas("log", "verify", run_id, "--store", "s3")
    after = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    assert after["events"] == before["events"], "the log of the run before the uninstall changed"
    # The kept token and the kept log, through the new release's controller: a second disruption of the old run,
    # revealed when the first was (a reveal time may not go back).
    revealed = next(e["payload"]["disruption"]["time"] for e in before["events"] if e["type"] == "disruption.observed")
    event = {"kind": "machine_breakdown", "machine": 0, "start": revealed, "duration": 3}
    status_code, answer = post_disruption(controller_address(kube), token, run_id,
                                          {"time": revealed, "events": [event], "method": "right-shift",
                                           "budget": 1}, f"{run_id}-after-reinstall")
    assert status_code == 201, answer  # a new commit (a replay of the key would be 200)
    assert answer["version"] == 3, answer
    store.alas("log", "verify", run_id, "--store", "s3")
    record_figure("reinstall", {"uninstall_seconds": uninstall_seconds, "install_seconds": install_seconds,
                                "run": run_id})
