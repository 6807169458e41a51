"""The operator's /healthz (its liveness probe) follows the reconcile loop, and /metrics next to it
carries what the loop did: issue 14 replaced a bare TCP check that passed whatever the loop did."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from alas_argo import metrics
from alas_argo.operator import Operator, OperatorConfig, Resource, serve_probes, workflow_manifest
from alas_argo.operator.resources import PlanRunSpec
from tests.operators.test_running import MemoryApi, cr


class OnePass(threading.Event):
    """A stop event that lets run_forever finish exactly one pass."""

    def wait(self, timeout: float | None = None) -> bool:
        self.set()
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read().decode()


@pytest.fixture
def probe() -> Iterator[tuple[Operator, Clock, MemoryApi, str]]:
    api, clock = MemoryApi(), Clock()
    operator = Operator(api, "alas", clock=clock)
    server = serve_probes(lambda: operator.liveness(60), "127.0.0.1", 0)
    try:
        yield operator, clock, api, f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def sample(name: str, **labels: str) -> float:
    value = metrics.REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_healthz_follows_the_passes(probe: tuple[Operator, Clock, MemoryApi, str]) -> None:
    operator, clock, api, base = probe
    assert get(f"{base}/healthz") == (200, "ok: start, no pass yet, 0s ago\n")
    clock.now += 61  # no pass for longer than the limit (a first pass that never ends)
    status, body = get(f"{base}/healthz")
    assert status == 503 and body.startswith("stuck:")
    api.put("alas.dev", "planruns", cr("PlanRun", "p", {"instance": "ft06"}))
    ok_before = sample("alas_operator_reconcile_passes_total", outcome="ok")
    operator.run_forever(0, OnePass())
    assert get(f"{base}/healthz") == (200, "ok: last reconcile pass 0s ago\n")
    assert sample("alas_operator_reconcile_passes_total", outcome="ok") == ok_before + 1
    status, text = get(f"{base}/metrics")
    assert status == 200 and "\nalas_operator_last_pass_timestamp_seconds " in text
    assert sample("alas_operator_last_pass_timestamp_seconds") == clock.now
    assert any(c.startswith("create workflows/") for c in api.calls)
    assert get(f"{base}/nothing")[0] == 404


def test_a_failing_pass_is_alive_and_counted(probe: tuple[Operator, Clock, MemoryApi, str]) -> None:
    operator, clock, api, base = probe

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("API server away")

    api.list_namespaced_custom_object = refuse  # type: ignore[method-assign]
    failed_before = sample("alas_operator_reconcile_passes_total", outcome="failed")
    clock.now += 61
    operator.run_forever(0, OnePass())
    assert get(f"{base}/healthz")[0] == 200  # the loop runs and will retry: restarting would not help
    assert sample("alas_operator_reconcile_passes_total", outcome="failed") == failed_before + 1


def test_a_hung_pass_fails_liveness(probe: tuple[Operator, Clock, MemoryApi, str]) -> None:
    operator, clock, api, base = probe
    entered, release = threading.Event(), threading.Event()

    def hang(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(60)
        return {"items": []}

    operator.run_forever(0, OnePass())  # one good pass first
    api.list_namespaced_custom_object = hang  # type: ignore[method-assign]
    stop = threading.Event()
    loop = threading.Thread(target=operator.run_forever, args=(0, stop))
    loop.start()
    try:
        assert entered.wait(30)
        clock.now += 61
        status, body = get(f"{base}/healthz")
        assert status == 503 and body.startswith("stuck: last reconcile pass 61s ago")
    finally:
        stop.set()
        release.set()
        loop.join(timeout=30)


def test_failed_actions_are_counted(probe: tuple[Operator, Clock, MemoryApi, str]) -> None:
    operator, _clock, api, _base = probe
    api.put("alas.dev", "planruns", cr("PlanRun", "q", {"instance": "ft06"}))
    api.fail_patch_for.add("q")
    before = sample("alas_operator_action_failures_total", action="patchstatus")
    operator.reconcile_once()
    assert sample("alas_operator_action_failures_total", action="patchstatus") == before + 1


def test_workflows_carry_pod_gc_and_ttl_when_configured() -> None:
    resource = Resource.from_object(cr("PlanRun", "p", {"instance": "ft06"}))
    spec = PlanRunSpec.model_validate({"instance": "ft06"})
    plain = workflow_manifest(resource, spec, OperatorConfig())["spec"]
    assert "podGC" not in plain and "ttlStrategy" not in plain  # the template's own settings apply
    config = OperatorConfig(pod_gc="OnPodSuccess", ttl_after_success=3600, ttl_after_failure=0)
    wf = workflow_manifest(resource, spec, config)["spec"]
    assert wf["podGC"] == {"strategy": "OnPodSuccess"}
    assert wf["ttlStrategy"] == {"secondsAfterSuccess": 3600, "secondsAfterFailure": 0}
