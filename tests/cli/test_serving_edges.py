"""`alas controller`, `alas metrics serve` and `alas operator` run in this process, found unasserted by mutation
testing (h-serve, 2026-12-06): `test_serving.py` runs them in child processes, which mutants never reach.

What is checked: the flags win over the environment (host, port, store, root) and reach what they configure
(the bearer token and the body limit of the server, the repairs at once, the operator's namespace, templates,
token and workflow lifetimes, the liveness age, the reconcile interval); the background threads (metrics inbox,
bucket creation) are named daemons that end with SIGTERM; each command stops cleanly on SIGTERM (exit 0); the
start line and each refusal read exactly as documented, naming the flag or variable to change; the parser's
defaults are the ones the help texts state.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import alas_argo.controller as controller_pkg
import alas_argo.log as log_pkg
import alas_argo.operator as operator_pkg
from alas_argo import metrics, metrics_outbox
from alas_argo.cli import build_parser, main
from alas_argo.controller import RepairService
from alas_argo.log import FsStore
from alas_argo.metrics_outbox import MetricsInbox
from alas_argo.operator import Operator, OperatorConfig
from alas_argo.settings import StoreSettings
from tests.operators.test_running import MemoryApi, cr

TOKEN = "t0k3n-t0k3n-t0k3n"


@pytest.fixture(autouse=True)
def _signals() -> Iterator[list[int]]:
    """The commands take over SIGTERM and SIGINT (this test runs them in the main thread, as their own process
    does); pytest gets its handlers back afterwards. A SIGTERM the command did not take is noted, not fatal."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    noted: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        noted.append(signum)

    signal.signal(signal.SIGTERM, note)
    yield noted
    for s, h in saved.items():
        signal.signal(s, h)


def _then_sigterm(ready: Callable[[], Any], visit: Callable[[Any], None]
                  ) -> tuple[Callable[[], None], list[BaseException]]:
    """A thread that waits until ``ready()`` gives something, calls ``visit`` with it, then sends SIGTERM to
    this process (as Kubernetes does to the pod); its errors are collected. Call the function returned once the
    command returned: a command that returned without serving is an error at once, not a 20 s wait."""
    errors: list[BaseException] = []
    returned = threading.Event()

    def run() -> None:
        try:
            deadline = time.monotonic() + 20
            while (got := ready()) is None:
                assert not returned.is_set(), "the command returned without serving"
                assert time.monotonic() < deadline, "the command never started serving"
                time.sleep(0.02)
            visit(got)
        except BaseException as e:  # reported by the test in the main thread
            errors.append(e)
        finally:
            if not returned.is_set():
                os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=run, name="test-visitor", daemon=True)
    thread.start()

    def finish() -> None:
        returned.set()
        thread.join(30)

    return finish, errors


def _taken_port(host: str = "127.0.0.1") -> socket.socket:
    s = socket.socket()
    s.bind((host, 0))
    s.listen()
    return s


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status(request: urllib.request.Request) -> int:
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as e:
        e.close()
        return int(e.code)


# --- alas metrics serve ---------------------------------------------------------------------------------


def test_metrics_serve_binds_the_host_given_and_stops_on_sigterm(monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    servers: list[Any] = []
    real = metrics.serve

    def serve(host: str, port: int) -> Any:
        servers.append(real(host, port))
        return servers[-1]

    monkeypatch.setattr(metrics, "serve", serve)
    seen: dict[str, Any] = {}

    def visit(server: Any) -> None:
        seen["port"] = port = server.server_port
        with urllib.request.urlopen(f"http://127.0.0.2:{port}/metrics", timeout=10) as resp:
            seen["body"] = resp.read()
        with pytest.raises(OSError):  # bound to 127.0.0.2 only, not to every address
            socket.create_connection(("127.0.0.1", port), timeout=5).close()

    finish, errors = _then_sigterm(lambda: servers[0] if servers else None, visit)
    assert main(["metrics", "serve", "--host", "127.0.0.2", "--port", "0"]) == 0
    finish()
    assert errors == []
    assert b"alas_exporter_up 1.0" in seen["body"]
    assert capsys.readouterr().err == f"serving metrics on http://127.0.0.2:{seen['port']}/metrics\n"
    servers[0].server_close()


def test_metrics_serve_on_a_taken_port_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with _taken_port() as s:
        port = s.getsockname()[1]
        assert main(["metrics", "serve", "--port", str(port)]) == 2
    assert capsys.readouterr().err == (f"alas: error: --port: cannot listen on 127.0.0.1:{port}: Address already "
                                       "in use\n")


# --- alas controller --------------------------------------------------------------------------------------


class _Spies:
    """What `alas controller` built: the repair service (and its max_concurrent), the metrics inbox, the
    server."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.services: list[tuple[RepairService, dict[str, Any]]] = []
        self.servers: list[Any] = []
        self.inboxes: list[MetricsInbox] = []
        spies = self

        class Service(RepairService):
            def __init__(self, store: Any, **kwargs: Any) -> None:
                super().__init__(store, **kwargs)
                spies.services.append((self, kwargs))

        real_serve = controller_pkg.serve

        def serve(*args: Any, **kwargs: Any) -> Any:
            server = real_serve(*args, **kwargs)
            spies.servers.append(server)
            return server

        class Inbox(MetricsInbox):
            def __init__(self, store: Any, **kwargs: Any) -> None:
                super().__init__(store, **kwargs)
                spies.inboxes.append(self)

        monkeypatch.setattr(controller_pkg, "RepairService", Service)
        monkeypatch.setattr(metrics_outbox, "MetricsInbox", Inbox)
        monkeypatch.setattr(controller_pkg, "serve", serve)

    def server(self) -> Any:
        return self.servers[0] if self.servers else None


def _post(base: str, body: bytes, token: str | None) -> urllib.request.Request:
    headers = {"Content-Type": "application/json", "Idempotency-Key": "k1"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return urllib.request.Request(f"{base}/runs/r/disruptions", data=body, method="POST", headers=headers)


def test_the_controller_takes_its_flags_over_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    spies = _Spies(monkeypatch)
    with _taken_port() as taken:
        # Every one of these would fail or show if the flag did not win: an address this machine does not
        # have, a port in use, the s3 store, another root.
        monkeypatch.setenv("ALAS_CONTROLLER__HOST", "192.0.2.1")
        monkeypatch.setenv("ALAS_CONTROLLER__PORT", str(taken.getsockname()[1]))
        monkeypatch.setenv("ALAS_STORE__KIND", "s3")
        monkeypatch.setenv("ALAS_STORE__ROOT", str(tmp_path / "env-root"))
        monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", TOKEN)
        monkeypatch.setenv("ALAS_CONTROLLER__MAX_BODY_BYTES", "64")
        seen: dict[str, Any] = {}

        def visit(server: Any) -> None:
            base = f"http://127.0.0.1:{server.server_port}"
            seen["port"] = server.server_port
            seen["readyz"] = _status(urllib.request.Request(f"{base}/readyz"))  # the service's store answers
            seen["no token"] = _status(_post(base, b"{}", None))
            seen["too large"] = _status(_post(base, b"{" + b" " * 100 + b"}", TOKEN))
            inbox = [t for t in threading.enumerate() if t.name == "metrics-inbox"]
            seen["inbox"] = [(t.is_alive(), t.daemon) for t in inbox]
            seen["inbox threads"] = inbox

        finish, errors = _then_sigterm(spies.server, visit)
        code = main(["controller", "--host", "127.0.0.1", "--port", "0", "--store", "fs", "--root",
                     str(tmp_path / "flag-root"), "--max-concurrent", "3"])
        finish()
    assert (code, errors) == (0, [])
    assert (seen["readyz"], seen["no token"], seen["too large"]) == (200, 401, 413)  # the token, the body limit
    assert [inbox.store for inbox in spies.inboxes] == [spies.services[0][0].store]  # folds what steps left there
    service, kwargs = spies.services[0]
    assert kwargs == {"max_concurrent": 3}
    assert isinstance(service.store, FsStore) and str(tmp_path / "flag-root") in service.store.location
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas controller listening on http://127.0.0.1:{seen['port']} (store {service.store.location})")
    # The inbox ran beside the server, as a daemon, and SIGTERM ended it; the server's socket is closed.
    assert seen["inbox"] == [(True, True)]
    seen["inbox threads"][0].join(10)
    assert not seen["inbox threads"][0].is_alive()
    assert spies.servers[0].socket.fileno() == -1


def test_a_controller_without_auth_says_so_and_lets_requests_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    spies = _Spies(monkeypatch)
    monkeypatch.delenv("ALAS_CONTROLLER__TOKEN", raising=False)
    seen: dict[str, Any] = {}

    def visit(server: Any) -> None:
        seen["port"] = server.server_port
        seen["status"] = _status(_post(f"http://127.0.0.1:{server.server_port}", b"{}", None))

    finish, errors = _then_sigterm(spies.server, visit)
    code = main(["controller", "--port", "0", "--root", str(tmp_path / "store"), "--no-auth"])
    finish()
    assert (code, errors) == (0, [])
    assert seen["status"] == 422  # past authentication: the empty body is what is refused
    location = spies.services[0][0].store.location
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas controller listening on http://127.0.0.1:{seen['port']} (store {location}, NO AUTH)")


def test_create_bucket_runs_in_a_named_daemon_thread_until_sigterm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                    ) -> None:
    """The chart's `--create-bucket` on the s3 store: /healthz answers while the bucket is made in the background
    (the store is an fs one here: this checks the wiring, tests/controller/test_bucket.py the creation)."""
    spies = _Spies(monkeypatch)
    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", TOKEN)
    monkeypatch.setenv("ALAS_STORE__KIND", "s3")
    monkeypatch.setenv("ALAS_STORE__S3_BUCKET", "the-bucket")
    monkeypatch.setattr(log_pkg, "open_store", lambda settings: FsStore(tmp_path / "store"))
    calls: list[tuple[StoreSettings, str, bool, bool]] = []

    def create(settings: StoreSettings, stop: threading.Event) -> None:
        me = threading.current_thread()
        calls.append((settings, me.name, me.daemon, stop.wait(30)))

    monkeypatch.setattr(controller_pkg, "create_bucket_when_reachable", create)
    finish, errors = _then_sigterm(spies.server, lambda server: None)
    assert main(["controller", "--port", "0", "--create-bucket"]) == 0
    finish()
    assert errors == []
    for t in threading.enumerate():
        if t.name == "create-bucket":
            t.join(10)
    [(settings, name, daemon, stopped)] = calls
    assert (settings.kind, settings.s3_bucket, name, daemon, stopped) == ("s3", "the-bucket", "create-bucket", True,
                                                                           True)


def test_the_controller_on_a_taken_port_names_the_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(MetricsInbox, "run", lambda self, stop: None)  # it would outlive the refused start
    with _taken_port() as s:
        port = s.getsockname()[1]
        assert main(["controller", "--no-auth", "--port", str(port), "--root", str(tmp_path / "store")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas: error: --port: cannot listen on 127.0.0.1:{port}: Address already in use (while attempting to "
        f"bind on address ('127.0.0.1', {port}))")


def test_the_controller_refusals_read_as_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ALAS_CONTROLLER__TOKEN", raising=False)
    assert main(["controller", "--port", "0", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "alas: error: ALAS_CONTROLLER__TOKEN: no bearer token: set ALAS_CONTROLLER__TOKEN (the chart takes it "
        "from a Secret), or pass --no-auth for a local test\n")
    assert main(["controller", "--no-auth", "--port", "0", "--store", "fs", "--root", str(tmp_path),
                 "--create-bucket"]) == 2
    assert capsys.readouterr().err == ("alas: error: --create-bucket: --create-bucket needs the s3 store "
                                       "(ALAS_STORE__KIND=s3)\n")
    assert list(tmp_path.iterdir()) == []  # refused before the store was opened


# --- alas operator ----------------------------------------------------------------------------------------


class _RecordingOperator(Operator):
    """The real operator, noting what it was built with, the ages its liveness was asked about and the loop's
    arguments (a loop without the command's stop event would never end: it is refused here, not run)."""

    made: list[_RecordingOperator] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ages: list[float] = []
        self.loops: list[tuple[float, threading.Event | None]] = []
        _RecordingOperator.made.append(self)

    def liveness(self, max_age: float) -> tuple[bool, str]:
        self.ages.append(max_age)
        return super().liveness(max_age)

    def run_forever(self, interval: float, stop: threading.Event | None = None) -> None:
        self.loops.append((interval, stop))
        if isinstance(stop, threading.Event):
            super().run_forever(interval, stop)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> MemoryApi:
    api = MemoryApi()
    api.put("alas.dev", "planruns", cr("PlanRun", "ta01", {"instance": "ta01"}))
    _RecordingOperator.made = []
    monkeypatch.setattr(operator_pkg, "connect", lambda: api)
    monkeypatch.setattr(operator_pkg, "Operator", _RecordingOperator)
    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", TOKEN)
    return api


def test_operator_once_builds_the_operator_from_its_flags(api: MemoryApi, capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(["operator", "--once", "--namespace", "alas", "--plan-template", "pt", "--bench-template", "bt",
                 "--service-account", "sa", "--controller-url", "http://c:9", "--pod-gc", "OnPodSuccess",
                 "--ttl-after-success", "60", "--ttl-after-failure", "120"]) == 0
    [op] = _RecordingOperator.made
    assert (op.namespace, op.token) == ("alas", TOKEN)
    assert op.config == OperatorConfig(plan_template="pt", bench_template="bt", service_account="sa",
                                       controller_url="http://c:9", pod_gc="OnPodSuccess", ttl_after_success=60,
                                       ttl_after_failure=120)
    # One line per action taken, its kind: the PlanRun's workflow made, then its status patched.
    assert capsys.readouterr().out == "CreateWorkflow\nPatchStatus\n"
    assert api.calls == ["create workflows/ta01-g1", "patch planruns/ta01"]


@pytest.mark.parametrize(("flags", "age"), [
    ([], 300.0),  # at least 5 minutes
    (["--interval", "40"], 400.0),  # else ten passes
    (["--liveness-max-age", "12"], 12.0),  # as given
])
def test_the_operator_probes_liveness_with_its_age_and_stops_on_sigterm(
        flags: list[str], age: float, api: MemoryApi) -> None:
    port = _free_port()
    seen: dict[str, Any] = {}

    def visit(op: _RecordingOperator) -> None:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as resp:
            seen["healthz"] = (resp.status, resp.read().decode())

    def ready() -> _RecordingOperator | None:
        made = _RecordingOperator.made
        return made[0] if made and made[0].last_pass_at is not None else None

    finish, errors = _then_sigterm(ready, visit)
    assert main(["operator", "--metrics-port", str(port), *flags]) == 0
    finish()
    assert errors == []
    [op] = _RecordingOperator.made
    assert seen["healthz"] == (200, "ok: last reconcile pass 0s ago\n")
    assert op.ages == [age]
    [(interval, stop)] = op.loops
    assert interval == (40.0 if "--interval" in flags else 5.0)
    assert isinstance(stop, threading.Event) and stop.is_set()
    assert "create workflows/ta01-g1" in api.calls  # the loop reconciled


def test_the_operator_on_a_taken_metrics_port_names_the_flag(api: MemoryApi,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    with _taken_port("0.0.0.0") as s:
        port = s.getsockname()[1]
        assert main(["operator", "--metrics-port", str(port)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas: error: --metrics-port: cannot listen on port {port}: Address already in use")


# --- the parser's defaults ----------------------------------------------------------------------------------


def test_the_defaults_are_the_ones_the_help_states() -> None:
    metrics_args = build_parser(["metrics"]).parse_args(["metrics", "serve"])
    assert (metrics_args.host, metrics_args.port) == ("127.0.0.1", 9464)
    controller = build_parser(["controller"]).parse_args(["controller"])
    assert (controller.host, controller.port, controller.store, controller.root, controller.max_concurrent,
            controller.no_auth, controller.create_bucket) == (None, None, None, None, 2, False, False)
    op = build_parser(["operator"]).parse_args(["operator", "--ttl-after-success", "7", "--ttl-after-failure", "8"])
    assert (op.namespace, op.interval, op.metrics_port, op.liveness_max_age, op.once) == ("default", 5.0, 0, None,
                                                                                          False)
    assert (op.ttl_after_success, op.ttl_after_failure) == (7, 8)  # numbers, not the text given


def test_a_host_that_is_not_this_machines_is_charged_to_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine, so bind gives EADDRNOTAVAIL. Both
    # commands said "--port" for it, the wrong flag to change.
    assert main(["metrics", "serve", "--host", "192.0.2.1", "--port", "0"]) == 2
    assert capsys.readouterr().err == ("alas: error: --host: cannot listen on 192.0.2.1: not an address of this "
                                       "machine\n")
    monkeypatch.setattr(MetricsInbox, "run", lambda self, stop: None)  # it would outlive the refused start
    assert main(["controller", "--no-auth", "--host", "192.0.2.1", "--port", "0",
                 "--root", str(tmp_path / "store")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "alas: error: --host: cannot listen on 192.0.2.1: not an address of this machine")


@pytest.mark.parametrize("command", [["metrics", "serve"], ["controller", "--no-auth"]])
def test_a_host_that_does_not_resolve_is_charged_to_host(command: list[str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # The resolver is replaced (no DNS in a test): the metrics server's bind raises gaierror itself, the
    # controller's socket.create_server re-raises it as a plain OSError keeping the negative EAI code.
    def no_name(address: tuple[str, int], **_: Any) -> socket.socket:
        raise OSError(socket.EAI_NONAME, f"Name or service not known (while attempting to bind on address "
                                         f"{address!r})")

    def no_name_bind(self: socket.socket, address: tuple[str, int]) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "create_server", no_name)
    monkeypatch.setattr(socket.socket, "bind", no_name_bind)
    monkeypatch.setattr(MetricsInbox, "run", lambda self, stop: None)
    root = ["--root", str(tmp_path / "store")] if command[0] == "controller" else []
    assert main([*command, "--host", "nowhere.invalid", "--port", "0", *root]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "alas: error: --host: cannot resolve nowhere.invalid: Name or service not known")
