"""Nothing acknowledged is lost on the real cluster: the chart upgraded to two controller replicas, clients
posting disruptions through the controller's NodePort while one controller pod and then the MinIO pod are
deleted under them, and MinIO then kept away for longer than the controller's own retries.

The set test of tests/controller/test_replica_set.py, with what a loopback test cannot have: kube-proxy
spreading the clients over two pods, a Deployment replacing a deleted replica, a StatefulSet bringing MinIO
back on its volume, readiness taking a replica out of the Service while its store is gone. Clients post
throughout (before, during and after both outages) and retry with the same Idempotency-Key on any answer that
says "try again" (no answer, 409, 502-504) until a deadline.
At the end every acknowledged disruption is in force exactly once, each answer names its own commit, the
log verifies, and `helm rollback` restores one replica with the same token.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from alas_argo.jssp.catalog import get_instance
from tests.cluster.conftest import (
    ROOT,
    Kube,
    Store,
    controller_address,
    controller_token,
    post_disruption,
    record_figure,
    run,
    tool,
)
from tests.controller.test_replica_set import set_request

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(1200)]

RELEASE = "alas"
CLIENTS = 4
#: Each client's requests at most (ta01 has 225 operations, one per request), one every PACE seconds or so.
MAX_PER_CLIENT = 56
PACE = 0.5
#: Seconds MinIO stays scaled to 0: longer than the controller's S3 retries (about 15 s) and its readiness.
OUTAGE = 30
#: How long a client keeps retrying one request (a MinIO pod comes back in well under a minute here).
DEADLINE = 300.0
RETRY = (0, 409, 502, 503, 504)
INSTANCE = get_instance("ta01")


def _helm(*args: str, timeout: float = 600) -> str:
    return run([tool("helm"), *args], timeout=timeout).stdout


def _controllers(kube: Kube) -> list[dict[str, Any]]:
    return list(kube.json("get", "pods", "-l", "app.kubernetes.io/component=controller")["items"])


def _ready(pod: dict[str, Any]) -> bool:
    conditions = {c["type"]: c["status"] for c in pod.get("status", {}).get("conditions", [])}
    return pod["metadata"].get("deletionTimestamp") is None and conditions.get("Ready") == "True"


@pytest.fixture(scope="module")
def two_replicas(kube: Kube) -> Iterator[str]:
    """The release upgraded to two controller replicas (`helm upgrade --reuse-values`), rolled back after."""
    revision = json.loads(_helm("status", RELEASE, "-n", kube.namespace, "-o", "json"))["version"]
    token = controller_token(kube)
    _helm("upgrade", RELEASE, str(ROOT / "charts" / "alas"), "-n", kube.namespace, "--reuse-values",
          "--set", "controller.replicas=2", "--wait", "--timeout", "5m")
    try:
        assert controller_token(kube) == token, "helm upgrade changed the controller's token"
        kube.wait_for("two Ready controller pods", lambda: sum(map(_ready, _controllers(kube))) == 2, timeout=180)
        yield token
    finally:
        _helm("rollback", RELEASE, str(revision), "-n", kube.namespace, "--wait", "--timeout", "5m")
    kube.wait_for("one controller pod", lambda: len(_controllers(kube)) == 1 and _ready(_controllers(kube)[0]),
                  timeout=180)
    assert controller_token(kube) == token, "helm rollback changed the controller's token"


def test_every_acknowledged_disruption_survives_a_replica_and_minio_deleted(kube: Kube, store: Store,
                                                                           two_replicas: str) -> None:
    token = two_replicas
    run_id = f"e2e-set-{int(time.time()) % 100000}"
    store.alas("run", INSTANCE.name, "--planner", "heuristic", "--optimizer", "heuristic", "--store", "s3",
               "--run-id", run_id, "--quiet")
    address = controller_address(kube)
    acks: dict[str, tuple[int, dict[str, Any]]] = {}  # key -> (request index, answer)
    replays: list[tuple[str, int, dict[str, Any]]] = []
    failures: list[tuple[str, int, dict[str, Any]]] = []
    retried: Counter[int] = Counter()
    slowest: list[float] = []  # seconds from a request's first try to its acknowledgement
    lock = threading.Lock()
    stop = threading.Event()
    start = threading.Barrier(CLIENTS + 1, timeout=60)
    began = 0.0

    def deliver(key: str, body: dict[str, Any], rng: random.Random) -> tuple[int, dict[str, Any]]:
        """POST until answered (with the same key), or an answer that is not "try again", or the deadline."""
        deadline = time.monotonic() + DEADLINE
        while True:
            status, doc = post_disruption(address, token, run_id, body, key, timeout=30)
            if status not in RETRY or time.monotonic() > deadline:
                return status, doc
            with lock:
                retried[status] += 1
            time.sleep(rng.uniform(0.2, 1.0))

    def client(c: int) -> None:
        rng = random.Random(c)
        start.wait()
        for n in range(MAX_PER_CLIENT):
            if stop.is_set():
                break
            i = c + CLIENTS * n  # distinct operations across clients
            key, body = f"{run_id}-c{c}-r{n}", set_request(INSTANCE, i)
            sent = time.monotonic()
            status, doc = deliver(key, body, rng)
            with lock:
                if status in (200, 201):
                    acks[key] = (i, doc)
                    slowest.append(time.monotonic() - sent)
                else:
                    failures.append((key, status, doc))
            if key in acks and n % 2 == 0:  # a duplicate delivery of an acknowledged request, retried as any
                status, doc = deliver(key, body, rng)
                with lock:
                    replays.append((key, status, doc))
            time.sleep(PACE)

    def acknowledged() -> int:
        with lock:
            return len(acks)

    def now() -> float:
        return round(time.monotonic() - began, 1)

    threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    began = time.monotonic()
    start.wait()
    chaos: dict[str, Any] = {}
    try:
        # Traffic first; then one controller pod goes, and once its replacement is Ready, MinIO (a StatefulSet:
        # the same volume comes back). The clients go on until requests have been acknowledged after both.
        kube.wait_for("the first acknowledgements", lambda: acknowledged() >= 2 * CLIENTS, timeout=300, every=0.2)
        victim = next(p["metadata"]["name"] for p in _controllers(kube) if _ready(p))
        kube("delete", "pod", victim, "--wait=false")
        chaos["controller deleted"] = {"at": now(), "acknowledged": acknowledged()}
        kube.wait_for("a replacement controller", lambda: sum(
            _ready(p) for p in _controllers(kube) if p["metadata"]["name"] != victim) == 2, timeout=300, every=0.5)
        chaos["controllers Ready again"] = {"at": now(), "acknowledged": acknowledged()}
        minio = kube.json("get", "pods", "-l", "app.kubernetes.io/component=minio")["items"][0]
        kube("delete", "pod", minio["metadata"]["name"], "--wait=false")
        chaos["minio deleted"] = {"at": now(), "acknowledged": acknowledged()}

        def minio_back(*gone: str) -> bool:
            pods = kube.json("get", "pods", "-l", "app.kubernetes.io/component=minio")["items"]
            return any(p["metadata"]["uid"] not in gone and _ready(p) for p in pods)

        kube.wait_for("MinIO back", lambda: minio_back(minio["metadata"]["uid"]), timeout=300, every=0.5)
        chaos["minio Ready again"] = {"at": now(), "acknowledged": acknowledged()}
        # A restarted MinIO is back in seconds, within the controller's own S3 retries. Then a longer outage
        # (the StatefulSet scaled to 0, as for maintenance): longer than those retries and than readiness.
        back = acknowledged()
        kube.wait_for("acknowledgements after MinIO came back", lambda: acknowledged() >= back + 2 * CLIENTS,
                      timeout=DEADLINE, every=0.5)
        statefulset = kube.json("get", "statefulset", "-l", "app.kubernetes.io/component=minio")["items"][0]
        name = statefulset["metadata"]["name"]
        kube("scale", "statefulset", name, "--replicas=0")
        chaos["minio scaled to 0"] = {"at": now(), "acknowledged": acknowledged()}
        kube.wait_for("MinIO gone", lambda: not kube.json("get", "pods", "-l",
                                                          "app.kubernetes.io/component=minio")["items"], timeout=120)
        time.sleep(OUTAGE)
        kube("scale", "statefulset", name, "--replicas=1")
        chaos["minio scaled to 1"] = {"at": now(), "acknowledged": acknowledged()}
        kube.wait_for("MinIO back", minio_back, timeout=300, every=0.5)
        chaos["minio Ready after the outage"] = {"at": now(), "acknowledged": acknowledged()}
        back = acknowledged()
        kube.wait_for("acknowledgements after the outage", lambda: acknowledged() >= back + 2 * CLIENTS,
                      timeout=DEADLINE, every=0.5)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=DEADLINE + 60)
    assert not any(t.is_alive() for t in threads), "clients still running"
    chaos["seconds"] = now()

    assert failures == [], failures
    shown = json.loads(store.alas("log", "show", run_id, "--store", "s3", "--json").stdout)
    commits = {int(e["payload"]["version"]): e for e in shown["events"] if e["type"] == "plan.committed"}
    current = int(shown["current_version"])
    in_force = Counter(json.dumps(ev, sort_keys=True)
                       for ev in commits[current]["payload"]["meta"]["disruption"]["events"])
    acked = Counter(json.dumps(ev, sort_keys=True)
                    for i, _ in acks.values() for ev in set_request(INSTANCE, i)["events"])
    lost = sorted(set(acked) - set(in_force))
    twice = sorted(e for e, n in in_force.items() if n > 1)
    keys = Counter((e["payload"].get("meta") or {}).get("idempotency_key") for e in commits.values())
    keys.pop(None, None)
    wrong = sorted(k for k, (_, doc) in acks.items()
                   if (commits[doc["version"]]["payload"].get("meta") or {}).get("idempotency_key") != k)
    summary = {"acknowledged": len(acks), "in force": len(acked) - len(lost), "lost": len(lost),
               "slowest acknowledgement s": round(max(slowest), 1),
               "applied twice": len(twice), "answers naming another commit": len(wrong),
               "retried answers": {str(k): v for k, v in sorted(retried.items())}, **chaos}
    print(summary)
    record_figure("replicas_under_deletion", summary)
    # Every request a client sent was acknowledged (a client moves on only then, or fails above), and the
    # outages were felt: answers that said "try again" came while a pod was gone.
    assert len(acks) >= chaos["minio Ready after the outage"]["acknowledged"] + 2 * CLIENTS, summary
    assert sum(retried.values()) >= 1, summary
    assert lost == [] and twice == [] and wrong == [], summary
    assert all(n == 1 for n in keys.values()) and set(keys) == set(acks), summary
    assert sum(in_force.values()) == len(acks), summary
    assert [(s, d.get("version")) for _, s, d in replays] == [(200, acks[k][1]["version"]) for k, _, _ in replays]
    verified = json.loads(store.alas("log", "verify", run_id, "--store", "s3", "--json").stdout)
    assert verified["ok"], verified

