"""Nothing acknowledged is lost on the real cluster: the chart upgraded to two controller replicas, clients
posting disruptions through the controller's NodePort while one controller pod and then the MinIO pod are
deleted under them.

The set test of tests/controller/test_replica_set.py, with what a loopback test cannot have: kube-proxy
spreading the clients over two pods, a Deployment replacing a deleted replica, a StatefulSet bringing MinIO
back on its volume, readiness taking a replica out of the Service while its store is gone. Clients retry
with the same Idempotency-Key on any answer that says "try again" (no answer, 409, 502-504) until a deadline.
At the end every acknowledged disruption is in force exactly once, each answer names its own commit, the
log verifies, and `helm rollback` restores one replica with the same token.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from alas_argo.jssp.catalog import get_instance
from tests.cluster.conftest import ROOT, Kube, Store, node_ip, node_port, record_figure, run, tool
from tests.controller.test_replica_set import set_request

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1200)]

RELEASE = "alas"
CLIENTS = 4
PER_CLIENT = 8
#: How long a client keeps retrying one request (a MinIO pod comes back in well under a minute here).
DEADLINE = 300.0
RETRY = (0, 409, 502, 503, 504)
FT06 = get_instance("ft06")


def _helm(*args: str, timeout: float = 600) -> str:
    return run([tool("helm"), *args], timeout=timeout).stdout


def _controllers(kube: Kube) -> list[dict[str, Any]]:
    return list(kube.json("get", "pods", "-l", "app.kubernetes.io/component=controller")["items"])


def _ready(pod: dict[str, Any]) -> bool:
    conditions = {c["type"]: c["status"] for c in pod.get("status", {}).get("conditions", [])}
    return pod["metadata"].get("deletionTimestamp") is None and conditions.get("Ready") == "True"


def _token(kube: Kube) -> str:
    deployment = kube.json("get", "deployment", "-l", "app.kubernetes.io/component=controller")["items"][0]
    env = deployment["spec"]["template"]["spec"]["containers"][0].get("env", [])
    secret = next(v["valueFrom"]["secretKeyRef"]["name"] for v in env if v["name"] == "ALAS_CONTROLLER__TOKEN")
    return kube.secret(secret, "token")


@pytest.fixture(scope="module")
def two_replicas(kube: Kube) -> Iterator[str]:
    """The release upgraded to two controller replicas (`helm upgrade --reuse-values`), rolled back after."""
    revision = json.loads(_helm("status", RELEASE, "-n", kube.namespace, "-o", "json"))["version"]
    token = _token(kube)
    _helm("upgrade", RELEASE, str(ROOT / "charts" / "alas"), "-n", kube.namespace, "--reuse-values",
          "--set", "controller.replicas=2", "--wait", "--timeout", "5m")
    try:
        assert _token(kube) == token, "helm upgrade changed the controller's token"
        kube.wait_for("two Ready controller pods", lambda: sum(map(_ready, _controllers(kube))) == 2, timeout=180)
        yield token
    finally:
        _helm("rollback", RELEASE, str(revision), "-n", kube.namespace, "--wait", "--timeout", "5m")
    kube.wait_for("one controller pod", lambda: len(_controllers(kube)) == 1 and _ready(_controllers(kube)[0]),
                  timeout=180)
    assert _token(kube) == token, "helm rollback changed the controller's token"


def _post(host: str, port: int, token: str, run_id: str, body: dict[str, Any],
          key: str) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
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


def test_every_acknowledged_disruption_survives_a_replica_and_minio_deleted(kube: Kube, store: Store,
                                                                           two_replicas: str) -> None:
    token = two_replicas
    run_id = f"e2e-set-{int(time.time()) % 100000}"
    store.alas("run", "ft06", "--planner", "heuristic", "--optimizer", "heuristic", "--store", "s3",
               "--run-id", run_id, "--quiet")
    host, port = node_ip(kube), node_port(kube, "controller", "http")
    acks: dict[str, tuple[int, dict[str, Any]]] = {}
    replays: list[tuple[str, int, dict[str, Any]]] = []
    failures: list[tuple[str, int, dict[str, Any]]] = []
    retried: Counter[int] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(CLIENTS + 1, timeout=60)

    def client(c: int) -> None:
        rng = random.Random(c)
        start.wait()
        for n in range(PER_CLIENT):
            i = c * PER_CLIENT + n
            key, body = f"{run_id}-c{c}-r{n}", set_request(FT06, i)
            deadline = time.monotonic() + DEADLINE
            while True:
                status, doc = _post(host, port, token, run_id, body, key)
                if status in (200, 201):
                    with lock:
                        acks[key] = (i, doc)
                    break
                if status not in RETRY or time.monotonic() > deadline:
                    with lock:
                        failures.append((key, status, doc))
                    break
                with lock:
                    retried[status] += 1
                time.sleep(rng.uniform(0.2, 1.0))
            if key in acks and n % 2 == 0:  # a duplicate delivery of an acknowledged request
                status, doc = _post(host, port, token, run_id, body, key)
                with lock:
                    replays.append((key, status, doc))

    def acknowledged() -> int:
        with lock:
            return len(acks)

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    start.wait()
    began = time.monotonic()
    chaos: dict[str, Any] = {}
    # A third of the way: one controller pod goes; two thirds: MinIO goes (a StatefulSet, its volume kept).
    kube.wait_for("a third acknowledged", lambda: acknowledged() >= CLIENTS * PER_CLIENT // 3, timeout=300,
                  every=0.2)
    victim = next(p["metadata"]["name"] for p in _controllers(kube) if _ready(p))
    kube("delete", "pod", victim, "--wait=false")
    chaos["controller deleted at"] = (round(time.monotonic() - began, 1), acknowledged())
    kube.wait_for("two thirds acknowledged", lambda: acknowledged() >= 2 * CLIENTS * PER_CLIENT // 3, timeout=600,
                  every=0.2)
    minio = kube.json("get", "pods", "-l", "app.kubernetes.io/component=minio")["items"][0]["metadata"]["name"]
    kube("delete", "pod", minio, "--wait=false")
    chaos["minio deleted at"] = (round(time.monotonic() - began, 1), acknowledged())
    for t in threads:
        t.join(timeout=DEADLINE * PER_CLIENT)
    assert not any(t.is_alive() for t in threads), "clients still running"
    chaos["seconds"] = round(time.monotonic() - began, 1)

    assert failures == [], failures
    shown = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    commits = {int(e["payload"]["version"]): e for e in shown["events"] if e["type"] == "plan.committed"}
    current = int(shown["current_version"])
    in_force = Counter(json.dumps(ev, sort_keys=True)
                       for ev in commits[current]["payload"]["meta"]["disruption"]["events"])
    acked = Counter(json.dumps(ev, sort_keys=True) for i, _ in acks.values() for ev in set_request(FT06, i)["events"])
    lost = sorted(set(acked) - set(in_force))
    twice = sorted(e for e, n in in_force.items() if n > 1)
    keys = Counter((e["payload"].get("meta") or {}).get("idempotency_key") for e in commits.values())
    keys.pop(None, None)
    wrong = sorted(k for k, (_, doc) in acks.items()
                   if (commits[doc["version"]]["payload"].get("meta") or {}).get("idempotency_key") != k)
    summary = {"acknowledged": len(acks), "in force": len(acked) - len(lost), "lost": len(lost),
               "applied twice": len(twice), "answers naming another commit": len(wrong),
               "retried answers": {str(k): v for k, v in sorted(retried.items())}, **chaos}
    print(summary)
    record_figure("replicas_under_deletion", summary)
    assert len(acks) == CLIENTS * PER_CLIENT, summary
    assert lost == [] and twice == [] and wrong == [], summary
    assert all(n == 1 for n in keys.values()) and set(keys) == set(acks), summary
    assert sum(in_force.values()) == len(acks), summary
    assert [(s, d.get("version")) for _, s, d in replays] == [(200, acks[k][1]["version"]) for k, _, _ in replays]
    # The deletions really happened under the clients: both replacements came up.
    assert sum(map(_ready, _controllers(kube))) == 2
    verified = json.loads(store.alas("log", "verify", run_id, "--store", "s3", "--json").stdout)
    assert verified["ok"], verified

