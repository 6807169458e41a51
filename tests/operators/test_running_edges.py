"""The cases of ``operator/running.py`` that mutation testing found unasserted: which group, version and
namespace every API call names, the actions a pass returns over several objects, the controller URL built from
one with a trailing slash, what the POST carries and what ``post_disruption`` makes of any answer (or none), what
a failed action or pass logs and counts, the liveness boundary, and ``connect``'s error messages."""

from __future__ import annotations

import errno
import json
import logging
import os
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from alas_argo import metrics
from alas_argo.errors import InputError
from alas_argo.operator import (
    CreateWorkflow,
    Operator,
    OperatorConfig,
    PostOutcome,
    Resource,
    connect,
    post_disruption,
    running,
)
from tests.operators.test_running import MemoryApi, cr, serving

BREAKDOWN = {"kind": "machine_breakdown", "machine": 1, "start": 5, "duration": 3}


class RecordingApi(MemoryApi):
    """A MemoryApi that records the group, version, namespace and plural of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.addresses: list[tuple[str, str, str, str, str]] = []

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                      label_selector: str | None = None, **kwargs: Any) -> dict[str, Any]:
        self.addresses.append(("list", group, version, namespace, plural))
        return super().list_namespaced_custom_object(group, version, namespace, plural, label_selector, **kwargs)

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                        body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        self.addresses.append(("create", group, version, namespace, plural))
        return super().create_namespaced_custom_object(group, version, namespace, plural, body, **kwargs)

    def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str,
                                              name: str, body: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        self.addresses.append(("patch", group, version, namespace, plural))
        return super().patch_namespaced_custom_object_status(group, version, namespace, plural, name, body,
                                                             **kwargs)


class Posts:
    """A poster that records its calls and answers a committed repair."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any], str, str | None]] = []

    def __call__(self, url: str, body: dict[str, Any], key: str, token: str | None) -> PostOutcome:
        self.calls.append((url, body, key, token))
        return PostOutcome(201, {"version": 2, "makespan": 50, "moved_operations": 1, "method": "lcrp"})


def counted(name: str, **labels: str) -> float:
    value = metrics.REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value


# ---- The reconcile pass against the API --------------------------------------------------------------


def test_every_call_names_the_group_version_and_the_operators_namespace() -> None:
    """Guards the version and namespace of each list, create and patch (the stand-in ignored both): a pass over
    a new PlanRun and a Disruption names argoproj.io/v1alpha1 workflows and alas.dev/v1alpha1 planruns and
    disruptions, all in the namespace the operator watches."""
    api, posts = RecordingApi(), Posts()
    api.put("alas.dev", "planruns", cr("PlanRun", "ta01", {"instance": "ta01"}))
    api.put("alas.dev", "disruptions", cr("Disruption", "d1", {"run": "r1", "time": 5, "events": [BREAKDOWN]}))
    Operator(api, "alas", poster=posts, clock=lambda: 0.0).reconcile_once()
    assert api.addresses == [
        ("list", "argoproj.io", "v1alpha1", "alas", "workflows"),
        ("list", "alas.dev", "v1alpha1", "alas", "planruns"),
        ("create", "argoproj.io", "v1alpha1", "alas", "workflows"),
        ("patch", "alas.dev", "v1alpha1", "alas", "planruns"),
        ("list", "alas.dev", "v1alpha1", "alas", "disruptions"),
        ("patch", "alas.dev", "v1alpha1", "alas", "disruptions"),
    ]
    assert api.objects["alas.dev", "disruptions"]["d1"]["status"]["phase"] == "Succeeded"


def test_a_pass_returns_the_actions_applied_to_every_object() -> None:
    """Guards the accumulation over objects: the actions of both PlanRuns and of the Disruption, in order."""
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "a", {"instance": "ta01"}))
    api.put("alas.dev", "planruns", cr("PlanRun", "b", {"instance": "ft06"}))
    api.put("alas.dev", "disruptions", cr("Disruption", "d1", {"run": "r1", "time": 5, "events": [BREAKDOWN]}))
    applied = Operator(api, "alas", poster=Posts(), clock=lambda: 0.0).reconcile_once()
    assert [(type(a).__name__, getattr(a, "name", None) or a.manifest["metadata"]["name"])  # type: ignore[union-attr]
            for a in applied] == [("CreateWorkflow", "a-g1"), ("PatchStatus", "a"), ("CreateWorkflow", "b-g1"),
                                  ("PatchStatus", "b"), ("PostDisruption", "d1")]


def test_a_trailing_slash_on_the_controller_url_is_dropped() -> None:
    """Guards the URL of the POST: ``http://controller:8080/`` gives ``.../runs/<run>/disruptions`` with one
    slash (a path with ``//`` is not the controller's route)."""
    api, posts = MemoryApi(), Posts()
    api.put("alas.dev", "disruptions", cr("Disruption", "d1", {"run": "r1", "time": 5, "events": [BREAKDOWN]}))
    config = OperatorConfig(controller_url="http://controller:8080/")
    Operator(api, "alas", config, token="t", poster=posts, clock=lambda: 0.0).reconcile_once()
    assert posts.calls == [("http://controller:8080/runs/r1/disruptions",
                            {"time": 5, "events": [BREAKDOWN], "method": "lcrp"}, "uid-d1-g1", "t")]


def test_a_failed_create_raises_its_own_error() -> None:
    """Guards the AlreadyExists check: an error without a ``status`` is raised as it is (not an AttributeError
    from reading one), so the warning names what went wrong."""
    api = MemoryApi()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("admission webhook denied the request")

    api.create_namespaced_custom_object = refuse  # type: ignore[method-assign]
    resource = Resource(name="p", namespace="alas", uid="u", spec={"instance": "ft06"})
    action = CreateWorkflow(namespace="alas", manifest={"metadata": {"name": "p-g1"}})
    with pytest.raises(RuntimeError, match="admission webhook denied"):
        Operator(api, "alas").apply(resource, action)


def test_an_unknown_action_is_named() -> None:
    resource = Resource(name="p", namespace="alas", uid="u")
    with pytest.raises(TypeError, match=r"^unknown action 'nonsense'$"):
        Operator(MemoryApi(), "alas").apply(resource, "nonsense")  # type: ignore[arg-type]


def test_a_failed_action_is_logged_with_its_object_and_error_and_applied_ones_are_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    """Guards the warning of a failed action (its namespace, name, action and error) and the counter of
    applied actions by kind."""
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "broken", {"instance": "ta01"}))
    api.fail_patch_for = {"broken"}
    created = counted("alas_operator_actions_total", action="createworkflow")
    patched = counted("alas_operator_actions_total", action="patchstatus")
    with caplog.at_level(logging.WARNING, logger="alas_argo.operator.running"):
        Operator(api, "alas").reconcile_once()
    assert [r.getMessage() for r in caplog.records] == ["reconcile alas/broken: PatchStatus failed: HTTP 500"]
    assert counted("alas_operator_actions_total", action="createworkflow") == created + 1
    assert counted("alas_operator_actions_total", action="patchstatus") == patched


class OnePass(threading.Event):
    """A stop event that lets run_forever finish exactly one pass."""

    def wait(self, timeout: float | None = None) -> bool:
        self.set()
        return True


def test_a_failed_pass_is_logged_with_its_error(caplog: pytest.LogCaptureFixture) -> None:
    api = MemoryApi()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("API server away")

    api.list_namespaced_custom_object = refuse  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="alas_argo.operator.running"):
        Operator(api, "alas", clock=lambda: 0.0).run_forever(0, OnePass())
    assert [r.getMessage() for r in caplog.records] == ["reconcile pass failed: API server away"]


def test_liveness_holds_at_exactly_the_limit() -> None:
    now = [1000.0]
    operator = Operator(MemoryApi(), "alas", clock=lambda: now[0])
    now[0] += 60
    assert operator.liveness(60) == (True, "ok: start, no pass yet, 60s ago")
    now[0] += 0.5
    assert operator.liveness(60) == (False, "stuck: start, no pass yet, 60s ago (more than 60s)")


# ---- post_disruption against a loopback server -------------------------------------------------------


class Raw(BaseHTTPRequestHandler):
    """Records each request's headers and answers the next (status, body bytes) of ``replies``."""

    replies: list[tuple[int, bytes]] = []
    seen: list[dict[str, Any]] = []
    announce = 0  # a Content-Length larger than the body sent: the answer breaks off
    unannounced = False  # no Content-Length at all: the body runs to the connection's close (HTTP/1.0)
    hold = 0.0  # seconds the connection is held after the short body (longer than the client's timeout: it stalls)
    release = threading.Event()

    def do_POST(self) -> None:
        Raw.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                         "body": self.rfile.read(int(self.headers["Content-Length"]))})
        code, raw = Raw.replies.pop(0)
        self.send_response(code)
        if not Raw.unannounced:
            self.send_header("Content-Length", str(Raw.announce or len(raw)))
        self.end_headers()
        self.wfile.write(raw)
        if Raw.announce:  # the rest never comes: held until the test lets go, then the connection closes
            self.wfile.flush()
            Raw.release.wait(Raw.hold)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def raw_server() -> Iterator[str]:
    Raw.replies, Raw.seen, Raw.announce, Raw.hold, Raw.release = [], [], 0, 0.0, threading.Event()
    Raw.unannounced = False
    with serving(Raw) as url:
        yield f"{url}/runs/r1/disruptions"
        Raw.release.set()


def test_the_post_carries_json_its_key_and_the_token(raw_server: str) -> None:
    """Guards the request's headers: the controller refuses any Content-Type but application/json (415, a
    permanent failure), and without the key a retry would repair twice."""
    Raw.replies = [(201, b'{"version": 2}')]
    outcome = post_disruption(raw_server, {"time": 5}, "uid-d1-g1", "s3cret")
    assert outcome == PostOutcome(201, {"version": 2}, "")
    (request,) = Raw.seen
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert (request["method"], request["path"], json.loads(request["body"])) == ("POST", "/runs/r1/disruptions",
                                                                                  {"time": 5})
    assert headers["content-type"] == "application/json"
    assert headers["idempotency-key"] == "uid-d1-g1" and headers["authorization"] == "Bearer s3cret"


@pytest.mark.parametrize("code, raw, outcome", [
    (503, b'{"message": "busy"}', PostOutcome(503, {"message": "busy"}, "busy")),
    (503, b'{"error": "store", "message": "busy"}', PostOutcome(503, {"error": "store", "message": "busy"}, "store")),
    (500, b"{}", PostOutcome(500, {}, "")),
    (500, b"", PostOutcome(500, {}, "")),
    (502, b"[1, 2]", PostOutcome(502, {}, "")),
    (502, b"<html><body>502 Bad Gateway</body></html>", PostOutcome(502, {}, "")),
    (201, b'"done"', PostOutcome(201, {}, "")),
])
def test_any_answer_becomes_an_outcome(raw_server: str, code: int, raw: bytes, outcome: PostOutcome) -> None:
    """Guards "never raises": a body that is not a JSON object (a proxy's HTML page, a list) gives an empty
    body and message, and ``message`` is read when there is no ``error``."""
    Raw.replies = [(code, raw)]
    assert post_disruption(raw_server, {}, "k", None) == outcome


@pytest.mark.parametrize("code", [201, 503])
@pytest.mark.parametrize(("hold", "said"), [
    (10.0, "timed out"),  # the body stalls past the timeout
    (0.0, "IncompleteRead(8 bytes read, 999999999992 more expected)"),  # the connection closes mid-body
])
def test_an_answer_that_breaks_off_is_no_answer_and_never_raises(raw_server: str, code: int, hold: float,
                                                                 said: str) -> None:
    """Guards "never raises" past the status line: read whole, a body that stalled or broke off raised out of
    the operator's pass (an error status's body was read outside the guarded block). No answer is status 0,
    so the POST is retried under the same key and the controller replays a repair it already committed."""
    Raw.replies, Raw.announce, Raw.hold = [(code, b'{"versio')], 10**12, hold
    outcome = post_disruption(raw_server, {}, "k", None, timeout=1)
    assert outcome == PostOutcome(0, {}, f"controller answer cut off: {said}")


def test_an_answer_past_the_bound_is_not_read(raw_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running, "MAX_ANSWER_BYTES", 2**20)
    Raw.replies = [(201, b'{"pad": "' + b"x" * 2**20 + b'"}')]
    assert post_disruption(raw_server, {}, "k", None) == PostOutcome(201, {}, "answer larger than 1 MiB: not read")


def test_an_answer_without_a_content_length_is_read_to_the_close(raw_server: str) -> None:
    """Guards "never raises" for an answer that announces no length (HTTP/1.0, a proxy): the announced length
    is missing, not a number, and the body read to the close is the answer."""
    Raw.replies, Raw.unannounced = [(201, b'{"version": 2}')], True
    assert post_disruption(raw_server, {}, "k", None) == PostOutcome(201, {"version": 2}, "")


def test_an_answer_of_exactly_the_bound_is_read_and_one_cut_there_is_no_answer(
        raw_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'{"version": 222}'
    monkeypatch.setattr(running, "MAX_ANSWER_BYTES", len(body))
    Raw.replies = [(201, body)]
    assert post_disruption(raw_server, {}, "k", None) == PostOutcome(201, {"version": 222}, "")
    # The same bytes, but announced as 100 and then the connection closes: a cut answer, even at the bound
    # (read as whole, a prefix of the answer that parses would pass for the controller's answer).
    Raw.replies, Raw.announce = [(201, body)], 100
    assert post_disruption(raw_server, {}, "k", None) == PostOutcome(
        0, {}, "controller answer cut off: IncompleteRead(16 bytes read, 84 more expected)")


def test_an_answer_past_the_bound_that_never_ends_is_not_waited_for(raw_server: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the bounded read: one byte past the bound is enough to know, so an answer that goes on (the
    connection held open here past the client's timeout) is "larger", with its status; a read of the whole
    body, or of more than one byte past the bound, would wait for the rest and end cut off (status 0)."""
    monkeypatch.setattr(running, "MAX_ANSWER_BYTES", 2**20)
    Raw.replies, Raw.announce, Raw.hold = [(201, b"x" * (2**20 + 1))], 10**12, 10.0
    assert post_disruption(raw_server, {}, "k", None, timeout=1) == PostOutcome(
        201, {}, "answer larger than 1 MiB: not read")


def test_a_cut_off_without_words_is_named_by_its_kind() -> None:
    assert running._cut_off(TimeoutError()) == PostOutcome(0, {}, "controller answer cut off: TimeoutError")
    assert running._cut_off(ConnectionResetError("reset")).message == "controller answer cut off: reset"


def test_a_refused_connection_names_the_reason() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    outcome = post_disruption(f"http://127.0.0.1:{port}/runs/r/disruptions", {}, "k", None)
    refused = ConnectionRefusedError(errno.ECONNREFUSED, os.strerror(errno.ECONNREFUSED))
    assert outcome == PostOutcome(0, {}, f"controller unreachable: {refused}")


def test_a_controller_that_never_answers_times_out() -> None:
    """Guards the timeout: a controller that takes the connection and never answers must not hang the
    operator's loop (it is held for 10 s at most here, so a POST without a timeout fails, not hangs)."""
    release = threading.Event()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)

        def hold() -> None:
            conn, _ = listener.accept()
            with conn:
                release.wait(10)

        holder = threading.Thread(target=hold, daemon=True)
        holder.start()
        try:
            outcome = post_disruption(f"http://127.0.0.1:{listener.getsockname()[1]}/runs/r/disruptions", {}, "k",
                                      None, timeout=0.2)
        finally:
            release.set()
            holder.join(10)
    assert outcome == PostOutcome(0, {}, "controller unreachable: timed out")
    assert outcome.transient


# ---- connect: the messages of a missing package or configuration -------------------------------------


@pytest.fixture
def no_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Not in a pod, and a home without ``~/.kube/config``: no real cluster is ever reached."""
    kube_config = pytest.importorskip("kubernetes.config.kube_config")
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    # The client reads KUBECONFIG once, when it is imported: the default it took then must not be used here.
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", "~/.kube/config")
    # A configuration that loads becomes the client's process-wide default: put the one before back after.
    client = pytest.importorskip("kubernetes.client")
    monkeypatch.setattr(client.Configuration, "_default", client.Configuration._default)
    return tmp_path


def test_connect_without_the_kubernetes_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)  # `import kubernetes` raises ImportError
    with pytest.raises(InputError) as raised:
        connect()
    assert str(raised.value) == "the operator needs the kubernetes package: pip install 'alas-argo[cluster]'"


def test_connect_without_kubeconfig_names_the_default_file(no_cluster: Path) -> None:
    with pytest.raises(InputError) as raised:
        connect()
    assert str(raised.value) == ("no Kubernetes configuration found (not in a pod; no KUBECONFIG, so "
                                 "~/.kube/config): ~/.kube/config: no such file")


def _refusal_with_kubeconfig(env: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """What ``connect`` says with KUBECONFIG (and the client's import-time default) set to ``env``."""
    monkeypatch.setenv("KUBECONFIG", env)
    monkeypatch.setattr("kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION", env)
    with pytest.raises(InputError) as raised:
        connect()
    return str(raised.value)


def test_connect_names_every_missing_file_of_kubeconfig(no_cluster: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """KUBECONFIG is a list (``os.pathsep``); each missing file is named, the one that is there is not."""
    a, b, there = no_cluster / "a", no_cluster / "b", no_cluster / "there"
    there.write_text("{}")
    env = os.pathsep.join([str(a), str(there), str(b)])
    assert _refusal_with_kubeconfig(env, monkeypatch) == (
        f"no Kubernetes configuration found (not in a pod; KUBECONFIG={env}): {a}, {b}: no such file")


def test_connect_names_a_kubeconfig_file_the_system_cannot_look_up(no_cluster: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A name past the length limit: Path.is_file() raised OSError while the message was being built, a traceback.
    long = str(no_cluster / ("x" * 300))
    assert _refusal_with_kubeconfig(long, monkeypatch) == (
        f"no Kubernetes configuration found (not in a pod; KUBECONFIG={long}): {long}: no such file")


def test_connect_reads_kubeconfig_as_it_is_now_not_as_it_was_at_import(no_cluster: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards against a bug: the client takes KUBECONFIG's default once, when first imported, and ``connect``
    let it read that file whatever KUBECONFIG said by then, while its error named KUBECONFIG. So a test of
    "no cluster" that ran after another test imported the client with no KUBECONFIG loaded ~/.kube/config and
    could run an operator pass against a real cluster. Nothing listens at the address below."""
    stale = no_cluster / "imported-kubeconfig"
    stale.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "not-a-secret"}}]}))
    monkeypatch.setattr("kubernetes.config.kube_config.KUBE_CONFIG_DEFAULT_LOCATION", str(stale))
    missing = no_cluster / "missing"
    monkeypatch.setenv("KUBECONFIG", str(missing))
    with pytest.raises(InputError) as raised:
        connect()
    assert str(raised.value) == (f"no Kubernetes configuration found (not in a pod; KUBECONFIG={missing}): "
                                 f"{missing}: no such file")
    monkeypatch.delenv("KUBECONFIG")
    with pytest.raises(InputError, match=r"no KUBECONFIG, so ~/.kube/config\): ~/.kube/config: no such file$"):
        connect()


def test_a_malformed_object_is_skipped_and_counted_and_the_others_are_reconciled(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """One object the API returns malformed (a generation that is no number), or whose reconciling raises,
    must not end the pass for the others (it used to: the read was outside the per-object handling)."""
    api = MemoryApi()
    api.objects["argoproj.io", "workflows"] = {"nameless": {"metadata": {"labels": {"alas.dev/planrun": "x"}}}}
    bad = cr("PlanRun", "a-bad", {"instance": "ta01"})
    bad["metadata"]["generation"] = "many"
    api.put("alas.dev", "planruns", bad)
    api.put("alas.dev", "planruns", cr("PlanRun", "b", {"instance": "ft06"}))
    api.put("alas.dev", "disruptions", cr("Disruption", "d0", {"run": "r1", "time": 5, "events": [BREAKDOWN]}))
    api.put("alas.dev", "disruptions", cr("Disruption", "d1", {"run": "r1", "time": 5, "events": [BREAKDOWN]}))
    import alas_argo.operator.running as running

    real = running.reconcile_disruption

    def broken_for_d0(resource: Resource, *args: Any) -> Any:
        if resource.name == "d0":
            raise KeyError("status")
        return real(resource, *args)

    monkeypatch.setattr(running, "reconcile_disruption", broken_for_d0)
    reads, decides = counted("alas_operator_action_failures_total", action="read"), counted(
        "alas_operator_action_failures_total", action="reconcile")
    with caplog.at_level(logging.WARNING, logger="alas_argo.operator.running"):
        applied = Operator(api, "alas", poster=Posts(), clock=lambda: 0.0).reconcile_once()
    assert [(type(a).__name__, getattr(a, "name", None) or a.manifest["metadata"]["name"])  # type: ignore[union-attr]
            for a in applied] == [("CreateWorkflow", "b-g1"), ("PatchStatus", "b"), ("PostDisruption", "d1")]
    assert counted("alas_operator_action_failures_total", action="read") == reads + 1
    assert counted("alas_operator_action_failures_total", action="reconcile") == decides + 1
    assert "reconcile: cannot read object a-bad: invalid literal for int() with base 10: 'many'" in caplog.text
    assert "reconcile alas/d0: 'status'" in caplog.text
