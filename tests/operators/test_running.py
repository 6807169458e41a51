"""The operator's I/O layer against an in-memory stand-in for the Kubernetes API and a real loopback HTTP
server standing in for the controller."""

from __future__ import annotations

import contextlib
import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from alas_argo.operator import CreateWorkflow, Operator, OperatorConfig, PatchStatus, post_disruption
from alas_argo.operator.running import ARGO


class ApiError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class MemoryApi:
    """Keeps custom objects in dicts, with the call shapes of kubernetes.client.CustomObjectsApi."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.calls: list[str] = []
        self.fail_patch_for: set[str] = set()

    def put(self, group: str, plural: str, obj: dict[str, Any]) -> None:
        self.objects.setdefault((group, plural), {})[obj["metadata"]["name"]] = obj

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                      label_selector: str | None = None, **kwargs: Any) -> dict[str, Any]:
        items = list(self.objects.get((group, plural), {}).values())
        if label_selector:
            items = [i for i in items if label_selector in i["metadata"].get("labels", {})]
        return {"items": copy.deepcopy(items)}

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                        body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        self.calls.append(f"create {plural}/{body['metadata']['name']}")
        store = self.objects.setdefault((group, plural), {})
        if body["metadata"]["name"] in store:
            raise ApiError(409)
        store[body["metadata"]["name"]] = copy.deepcopy(body)
        return body

    def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str,
                                              name: str, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        self.calls.append(f"patch {plural}/{name}")
        if name in self.fail_patch_for:
            raise ApiError(500)
        obj = self.objects[(group, plural)][name]
        status = obj.setdefault("status", {})
        for key, value in body["status"].items():  # JSON merge patch: null deletes
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        return obj


def cr(kind: str, name: str, spec: dict[str, Any], generation: int = 1) -> dict[str, Any]:
    return {"apiVersion": "alas.dev/v1alpha1", "kind": kind,
            "metadata": {"name": name, "namespace": "alas", "uid": f"uid-{name}", "generation": generation},
            "spec": spec}


class Controller(BaseHTTPRequestHandler):
    """Answers POST /runs/<run>/disruptions like the repair controller, after checking the token."""

    replies: list[tuple[int, dict[str, Any]]] = []
    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Controller.seen.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                "key": self.headers.get("Idempotency-Key"), "body": body})
        code, doc = Controller.replies.pop(0) if Controller.replies else (201, {"version": 2})
        raw = json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def controller() -> Iterator[str]:
    Controller.replies, Controller.seen = [], []
    with serving(Controller) as url:
        yield url


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` on a loopback port for the block: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # A short poll, so that shutdown() does not wait the default half second after each test.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_planrun_lifecycle_through_the_api() -> None:
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "ta01", {"instance": "ta01"}))
    op = Operator(api, "alas", OperatorConfig(plan_template="my-plan"))

    applied = op.reconcile_once()
    assert [type(a) for a in applied] == [CreateWorkflow, PatchStatus]
    wf = api.objects[ARGO[0], ARGO[2]]["ta01-g1"]
    assert wf["spec"]["workflowTemplateRef"]["name"] == "my-plan"
    assert api.objects["alas.dev", "planruns"]["ta01"]["status"]["phase"] == "Pending"

    assert op.reconcile_once() == []  # nothing changed: no calls that write

    wf["status"] = {"phase": "Succeeded", "progress": "4/4",
                    "outputs": {"parameters": [{"name": "summary", "value": '{"makespan": 1231}'}]}}
    op.reconcile_once()
    status = api.objects["alas.dev", "planruns"]["ta01"]["status"]
    assert status["phase"] == "Succeeded" and status["summary"] == {"makespan": 1231}
    assert status["progress"] == "4/4"


def test_already_existing_workflow_counts_as_created() -> None:
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "ta01", {"instance": "ta01"}))
    # Created by an earlier pass that crashed before patching the status, but not yet listed by label.
    api.put(ARGO[0], ARGO[2], {"metadata": {"name": "ta01-g1"}})
    applied = Operator(api, "alas").reconcile_once()
    assert [type(a) for a in applied] == [CreateWorkflow, PatchStatus]
    assert api.calls == ["create workflows/ta01-g1", "patch planruns/ta01"]


def test_one_failing_object_does_not_stop_the_others() -> None:
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "broken", {"instance": "ta01"}))
    api.put("alas.dev", "planruns", cr("PlanRun", "fine", {"instance": "ft06"}))
    api.fail_patch_for = {"broken"}
    Operator(api, "alas").reconcile_once()
    assert api.objects["alas.dev", "planruns"]["fine"]["status"]["phase"] == "Pending"
    assert "status" not in api.objects["alas.dev", "planruns"]["broken"]


def test_disruption_is_posted_and_its_version_recorded(controller: str) -> None:
    api = MemoryApi()
    events = [{"kind": "machine_breakdown", "machine": 1, "start": 5, "duration": 3}]
    api.put("alas.dev", "disruptions", cr("Disruption", "d1", {"run": "alas.ta01-g1", "time": 5,
                                                                  "events": events}))
    Controller.replies = [(503, {"error": "store unavailable"}),
                          (201, {"version": 4, "makespan": 60, "moved_operations": 3, "method": "lcrp"})]
    clock = [1000.0]
    op = Operator(api, "alas", OperatorConfig(controller_url=controller, retry_base_seconds=2), token="s3cret",
                  clock=lambda: clock[0])

    op.reconcile_once()
    status = api.objects["alas.dev", "disruptions"]["d1"]["status"]
    assert status["phase"] == "Pending" and status["nextAttemptAt"] == 1002.0
    assert "store unavailable" in status["message"]

    op.reconcile_once()  # still backing off
    assert len(Controller.seen) == 1

    clock[0] = 1002.0
    op.reconcile_once()
    status = api.objects["alas.dev", "disruptions"]["d1"]["status"]
    assert status["phase"] == "Succeeded" and status["planVersion"] == 4 and status["attempts"] == 2
    assert "nextAttemptAt" not in status  # merge patch with null removed it

    assert [s["path"] for s in Controller.seen] == ["/runs/alas.ta01-g1/disruptions"] * 2
    assert {s["auth"] for s in Controller.seen} == {"Bearer s3cret"}
    assert {s["key"] for s in Controller.seen} == {"uid-d1-g1"}  # same key on the retry: deduplicated
    assert Controller.seen[0]["body"] == {"time": 5, "events": events, "method": "lcrp"}

    op.reconcile_once()
    assert len(Controller.seen) == 2


def test_post_disruption_reports_an_unreachable_controller() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    outcome = post_disruption(f"http://127.0.0.1:{port}/runs/r/disruptions", {}, "k", None, timeout=2)
    assert outcome.status_code == 0 and outcome.transient and "unreachable" in outcome.message


def test_post_disruption_parses_error_bodies(controller: str) -> None:
    Controller.replies = [(422, {"error": "events[0].machine: out of range"})]
    outcome = post_disruption(f"{controller}/runs/r/disruptions", {"time": 1}, "k", None)
    assert outcome.status_code == 422 and not outcome.transient and not outcome.ok
    assert outcome.message == "events[0].machine: out of range"
    assert Controller.seen[0]["auth"] is None


def test_run_forever_stops_when_told() -> None:
    api = MemoryApi()
    stop = threading.Event()
    passes = []

    class Counting(Operator):
        def reconcile_once(self) -> list[Any]:
            passes.append(1)
            if len(passes) == 3:
                stop.set()
            return []

    Counting(api, "alas").run_forever(0.01, stop)
    assert len(passes) == 3


def test_disruption_naming_a_planrun_posts_to_its_run(controller: str) -> None:
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "ta01", {"instance": "ta01"}))
    api.put("alas.dev", "disruptions", cr("Disruption", "d1", {
        "planRun": "ta01", "time": 5, "events": [{"kind": "machine_breakdown", "machine": 1, "start": 5,
                                                  "duration": 3}]}))
    op = Operator(api, "alas", OperatorConfig(controller_url=controller))
    op.reconcile_once()  # the PlanRun submits its workflow and records its run id in the same pass
    op.reconcile_once()
    assert [s["path"] for s in Controller.seen] == ["/runs/alas.ta01-g1/disruptions"]
    assert api.objects["alas.dev", "disruptions"]["d1"]["status"]["phase"] == "Succeeded"
