"""Fixtures for the tests that run on a real cluster (`scripts/cluster up`, then `scripts/cluster e2e`).

Everything here talks to real programs: the API server through the pinned `kubectl`, Argo through the pinned
`argo` CLI, MinIO through its NodePort with boto3 (via `alas --store s3`), Prometheus over HTTP. The tests
are opt-in (ALAS_CLUSTER_TESTS=1, which `scripts/cluster e2e` sets) and skip with the reason otherwise.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

NAMESPACE = os.environ.get("ARGO_NAMESPACE", "alas")
#: Prometheus that scripts/cluster started (its env file says where).
PROMETHEUS = os.environ.get("ALAS_CLUSTER_PROMETHEUS", "http://127.0.0.1:9090")
ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("ALAS_CLUSTER_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="needs a real cluster: scripts/cluster up, then scripts/cluster e2e")
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(skip)


def run(cmd: list[str], *, timeout: float = 120, check: bool = True, env: dict[str, str] | None = None,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, input=stdin)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not on PATH (source $ALAS_CLUSTER_HOME/env, as scripts/cluster e2e does)")
    return path


@dataclass
class Kube:
    """kubectl against the cluster, JSON in and out."""

    namespace: str = NAMESPACE

    def __call__(self, *args: str, timeout: float = 120, check: bool = True,
                 stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return run([tool("kubectl"), "-n", self.namespace, *args], timeout=timeout, check=check, stdin=stdin)

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "-o", "json").stdout)

    def apply(self, manifest: dict[str, Any]) -> None:
        self("apply", "-f", "-", stdin=json.dumps(manifest))

    def secret(self, name: str, key: str) -> str:
        data = self.json("get", "secret", name)["data"][key]
        return base64.b64decode(data).decode()

    def wait_for(self, what: str, predicate: Callable[[], Any], timeout: float = 300, every: float = 2) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            last = predicate()
            if last:
                return last
            time.sleep(every)
        raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


@dataclass
class Argo:
    """The argo CLI (it talks to the API server directly through KUBECONFIG)."""

    namespace: str = NAMESPACE

    def __call__(self, *args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run([tool("argo"), "-n", self.namespace, *args], timeout=timeout, check=check)

    def submit(self, template: str, params: dict[str, str], *, wait: bool = True,
               timeout: float = 900) -> dict[str, Any]:
        args = ["submit", "--from", f"workflowtemplate/{template}", "-o", "json"]
        for key, value in params.items():
            args += ["-p", f"{key}={value}"]
        created = json.loads(self(*args).stdout)
        name = created["metadata"]["name"]
        if wait:
            return self.succeeded(name, timeout=timeout)
        return self.get(name)

    def get(self, name: str) -> dict[str, Any]:
        return json.loads(self("get", name, "-o", "json").stdout)

    def succeeded(self, name: str, *, timeout: float = 900) -> dict[str, Any]:
        """Wait for the workflow to end and return it; fail naming each node that did not succeed, with its
        message, exit code and the end of its main container's log (`argo wait` alone says only "Failed")."""
        self("wait", name, timeout=timeout, check=False)
        workflow = self.get(name)
        if workflow["status"].get("phase") != "Succeeded":
            raise AssertionError(f"workflow {name} {workflow['status'].get('phase')}: "
                                 f"{workflow['status'].get('message')}\n{self.failures(name, workflow)}")
        return workflow

    def failures(self, name: str, workflow: dict[str, Any]) -> str:
        """The nodes that failed or errored, one paragraph each (a pod's log only while the pod is kept)."""
        kube = Kube(self.namespace)
        pods = kube.json("get", "pods", "-l", f"workflows.argoproj.io/workflow={name}")["items"]
        pod_of = {p["metadata"].get("annotations", {}).get("workflows.argoproj.io/node-name"): p["metadata"]["name"]
                  for p in pods}
        lines: list[str] = []
        for node in workflow["status"].get("nodes", {}).values():
            if node.get("phase") not in ("Failed", "Error"):
                continue
            exit_code = (node.get("outputs") or {}).get("exitCode")
            lines.append(f"- {node['name']} ({node.get('type')}): {node['phase']}, exit {exit_code}: "
                         f"{node.get('message')}")
            pod = pod_of.get(node["name"])
            if pod is not None and node.get("type") == "Pod":
                log = kube("logs", pod, "-c", "main", "--tail", "15", check=False)
                lines += [f"    {line}" for line in (log.stdout + log.stderr).splitlines()]
        return "\n".join(lines) or "(no node failed or errored)"


@dataclass
class Store:
    """The execution log in the cluster's MinIO, reached from this machine through its NodePort."""

    env: dict[str, str]

    def alas(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return run(["alas", *args], env=self.env, check=check, timeout=timeout)

    def events(self, run_id: str) -> list[dict[str, Any]]:
        shown = json.loads(self.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
        return list(shown["events"])


def record_figure(name: str, figures: dict[str, Any]) -> None:
    """Add measured figures to $ALAS_CLUSTER_HOME/figures.json (what the README's cluster section quotes)."""
    home = os.environ.get("ALAS_CLUSTER_HOME")
    if not home:
        return
    path = Path(home) / "figures.json"
    recorded = json.loads(path.read_text()) if path.exists() else {}
    recorded[name] = figures
    path.write_text(json.dumps(recorded, indent=2) + "\n")


@pytest.fixture(scope="session", autouse=True)
def local_alas() -> None:
    """Stop before the first cluster test when the `alas` on PATH is not this checkout's.

    The tests read the cluster's log, verify it and compare engines with the `alas` on PATH. An editable
    install repointed elsewhere (another clone's `pip install -e .`, since deleted) made three failure-path
    tests fail one after the other with `ModuleNotFoundError` inside their helpers, 40 minutes into a run.
    """
    proc = subprocess.run(["alas", "--version"], capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        pytest.exit(f"`alas --version` exited {proc.returncode}: {proc.stderr.strip()[-500:]}\n"
                    f"reinstall this checkout: pip install -e {ROOT}", returncode=2)
    # What `alas` imports: this interpreter, this environment, but not the working directory (a console script
    # does not put it on sys.path; pytest's rootdir is).
    where = subprocess.run([sys.executable, "-c", "import alas_argo; print(alas_argo.__file__)"], cwd="/",
                           capture_output=True, text=True, timeout=120, check=False).stdout.strip()
    if not where or Path(where).resolve().parents[1] != ROOT:
        pytest.exit(f"the installed alas_argo is {where or 'not importable'}, not this checkout ({ROOT}): the "
                    f"cluster tests would compare against other code; pip install -e {ROOT}", returncode=2)


@pytest.fixture(scope="session")
def kube() -> Kube:
    return Kube()


@pytest.fixture(scope="session")
def argo() -> Argo:
    return Argo()


def node_ip(kube: Kube) -> str:
    node = kube.json("get", "nodes")["items"][0]
    return next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")


def _service(kube: Kube, component: str) -> dict[str, Any]:
    services = kube.json("get", "services", "-l", f"app.kubernetes.io/component={component}")["items"]
    assert services, f"no Service for component {component}"
    return dict(services[0])


def node_port(kube: Kube, component: str, port_name: str | None = None) -> int:
    ports = _service(kube, component)["spec"]["ports"]
    port = next(p for p in ports if port_name is None or p.get("name") == port_name)
    return int(port["nodePort"])


def token_secret(kube: Kube) -> str:
    """The name of the Secret holding the controller's bearer token (what its Deployment reads)."""
    deployment = kube.json("get", "deployment", "-l", "app.kubernetes.io/component=controller")["items"][0]
    env = deployment["spec"]["template"]["spec"]["containers"][0].get("env", [])
    return str(next(v["valueFrom"]["secretKeyRef"]["name"] for v in env if v["name"] == "ALAS_CONTROLLER__TOKEN"))


def controller_token(kube: Kube) -> str:
    return kube.secret(token_secret(kube), "token")


def controller_address(kube: Kube) -> tuple[str, int]:
    """Where this machine reaches the controller: the node's address and the Service's NodePort."""
    return node_ip(kube), node_port(kube, "controller", "http")


def post_disruption(address: tuple[str, int], token: str, run_id: str, body: dict[str, Any], key: str, *,
                    timeout: float = 120) -> tuple[int, dict[str, Any]]:
    """``POST /runs/<run_id>/disruptions`` to the controller at ``address``, as a user's client does: (HTTP
    status, JSON answer), or (0, {"error": ...}) when no answer came."""
    conn = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        conn.request("POST", f"/runs/{run_id}/disruptions", body=json.dumps(body).encode(), headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {token}", "Idempotency-Key": key})
        resp = conn.getresponse()
        raw = resp.read()
        try:
            return resp.status, json.loads(raw or b"{}")
        except ValueError:
            return resp.status, {"error": raw[:200].decode(errors="replace")}
    except OSError as e:
        return 0, {"error": f"{type(e).__name__}: {e}"}
    finally:
        conn.close()


@pytest.fixture(scope="session")
def store(kube: Kube) -> Store:
    """Environment for `alas ... --store s3` against the chart's MinIO (credentials from its Secret)."""
    # The ConfigMap the workflow pods read the store from (its name is the release's).
    configmaps = [c for c in kube.json("get", "configmaps")["items"] if "ALAS_STORE__S3_BUCKET" in c.get("data", {})]
    assert len(configmaps) == 1, f"expected one store ConfigMap, found {[c['metadata']['name'] for c in configmaps]}"
    settings = configmaps[0]["data"]
    secret_name = next(
        v["valueFrom"]["secretKeyRef"]["name"]
        for c in kube.json("get", "deployment", "-l", "app.kubernetes.io/component=controller")["items"][0]["spec"][
            "template"]["spec"]["containers"]
        for v in c.get("env", []) if v["name"] == "AWS_ACCESS_KEY_ID"
    )
    env = dict(os.environ)
    env.update(settings)
    env["ALAS_STORE__S3_ENDPOINT"] = f"http://{node_ip(kube)}:{node_port(kube, 'minio', 's3')}"
    env["AWS_ACCESS_KEY_ID"] = kube.secret(secret_name, "accessKey")
    env["AWS_SECRET_ACCESS_KEY"] = kube.secret(secret_name, "secretKey")
    return Store(env)


def prometheus_api(path: str) -> Any:
    """The `data` of a Prometheus HTTP API answer (asserting it succeeded)."""
    with urllib.request.urlopen(PROMETHEUS + path, timeout=30) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]


@pytest.fixture(scope="session")
def prometheus() -> Iterator[Callable[[str], list[dict[str, Any]]]]:
    def query(expr: str) -> list[dict[str, Any]]:
        return list(prometheus_api("/api/v1/query?" + urllib.parse.urlencode({"query": expr}))["result"])

    yield query
