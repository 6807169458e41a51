"""CLI commands of the long-running services: `alas controller`, `alas operator`, `alas metrics serve`."""

from __future__ import annotations

import argparse
import errno
import logging
import signal
import socket
import sys
import threading
from types import FrameType

from pydantic import ValidationError

from alas_argo.bounds import MAX_WORKERS
from alas_argo.cli.app import Commands
from alas_argo.cli.flag_values import MAX_PORT, flag_error, seconds, whole
from alas_argo.errors import InputError

__all__ = ["register"]


def _stop_on_signals(stop: threading.Event) -> None:
    """Set ``stop`` on SIGTERM (what Kubernetes sends) as well as on Ctrl-C."""

    def handler(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def _bind_error(error: OSError | UnicodeError, host: str, port: int) -> InputError:
    """Why a server could not bind, charged to the flag at fault: the host when it does not resolve or is not
    this machine's, the port otherwise (taken, or privileged)."""
    if isinstance(error, UnicodeError):  # the resolver's IDNA encoding refuses it (an empty or over-long label)
        return InputError("not a host name or address", where=f"--host {host[:80]}")
    # socket.create_server re-raises the resolver's gaierror as a plain OSError with its (negative) EAI code.
    if isinstance(error, socket.gaierror) or (error.errno is not None and error.errno < 0):
        reason = (error.strerror or "").split(" (while attempting", 1)[0]
        return InputError(f"cannot resolve {host[:80]}: {reason}", where="--host")
    if error.errno == errno.EADDRNOTAVAIL:
        return InputError(f"cannot listen on {host[:80]}: not an address of this machine", where="--host")
    return InputError(f"cannot listen on {host}:{port}: {error.strerror}", where="--port")


def _metrics_serve(args: argparse.Namespace) -> int:
    from alas_argo import metrics

    # Handlers first: a SIGTERM that arrives right after the "serving" line must stop us cleanly.
    stop = threading.Event()
    _stop_on_signals(stop)
    try:
        server = metrics.serve(args.host, args.port)
    except (UnicodeError, OSError) as e:
        raise _bind_error(e, args.host, args.port) from None
    sys.stderr.write(f"serving metrics on http://{args.host}:{server.server_port}/metrics\n")
    sys.stderr.flush()
    stop.wait()
    server.shutdown()
    return 0


def _operator(args: argparse.Namespace) -> int:
    from alas_argo.operator import Operator, OperatorConfig, connect
    from alas_argo.settings import load_settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = load_settings()
    token = settings.controller.token.get_secret_value() if settings.controller.token else None
    try:
        config = OperatorConfig(plan_template=args.plan_template, bench_template=args.bench_template,
                                service_account=args.service_account, controller_url=args.controller_url,
                                pod_gc=args.pod_gc, ttl_after_success=args.ttl_after_success,
                                ttl_after_failure=args.ttl_after_failure)
    except ValidationError as e:
        raise flag_error(e) from None
    operator = Operator(connect(), args.namespace, config, token=token)
    if args.once:
        for action in operator.reconcile_once():
            sys.stdout.write(f"{type(action).__name__}\n")
        return 0
    if args.metrics_port:
        from alas_argo.operator.health import serve_probes

        # All interfaces: scraped, and probed by the kubelet, from outside the pod.
        max_age = args.liveness_max_age or max(300.0, 10 * args.interval)
        try:
            serve_probes(lambda: operator.liveness(max_age), "0.0.0.0", args.metrics_port)
        except OSError as e:
            raise InputError(f"cannot listen on port {args.metrics_port}: {e.strerror}", where="--metrics-port") \
                from None
    stop = threading.Event()
    _stop_on_signals(stop)
    operator.run_forever(args.interval, stop)
    return 0


def _controller(args: argparse.Namespace) -> int:
    from alas_argo.controller import RepairService, serve
    from alas_argo.log import open_store
    from alas_argo.settings import load_settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = load_settings(controller={"host": args.host, "port": args.port},
                             store={"kind": args.store, "root": args.root})
    token = settings.controller.token.get_secret_value() if settings.controller.token else None
    if token is None and not args.no_auth:
        raise InputError("no bearer token: set ALAS_CONTROLLER__TOKEN (the chart takes it from a Secret), "
                         "or pass --no-auth for a local test", where="ALAS_CONTROLLER__TOKEN")
    if args.create_bucket and settings.store.kind != "s3":
        raise InputError("--create-bucket needs the s3 store (ALAS_STORE__KIND=s3)", where="--create-bucket")
    service = RepairService(open_store(settings), max_concurrent=args.max_concurrent)
    stop = threading.Event()
    _stop_on_signals(stop)
    if args.create_bucket:
        from alas_argo.controller import create_bucket_when_reachable

        # In the background: /healthz answers at once, /readyz once the bucket exists.
        threading.Thread(target=create_bucket_when_reachable, args=(settings.store, stop), name="create-bucket",
                         daemon=True).start()
    from alas_argo.metrics_outbox import MetricsInbox

    # Step pods leave what they counted in the store; /metrics shows it folded into this process's counters.
    threading.Thread(target=MetricsInbox(service.store).run, args=(stop,), name="metrics-inbox",
                     daemon=True).start()
    try:
        server = serve(service, settings.controller.host, settings.controller.port, token=token,
                       max_body_bytes=settings.controller.max_body_bytes)
    except (UnicodeError, OSError) as e:
        raise _bind_error(e, settings.controller.host, settings.controller.port) from None
    sys.stderr.write(f"alas controller listening on http://{settings.controller.host}:{server.server_port} "
                     f"(store {service.store.location}{', NO AUTH' if token is None else ''})\n")
    sys.stderr.flush()
    stop.wait()
    server.shutdown()
    server.server_close()
    return 0


def register(commands: Commands) -> None:
    """Add this module's commands."""
    p = commands.add(
        "controller", _controller,
        help="Run the repair service: POST /runs/<run>/disruptions, /healthz, /readyz, /metrics.",
        description="Serve the repair controller. A disruption POSTed for a run is repaired (LCRP by default) "
        "against the run's current plan in the log and committed as a new version; requests need a bearer "
        "token (ALAS_CONTROLLER__TOKEN) and an Idempotency-Key header. The store comes from ALAS_STORE__* "
        "(e.g. ALAS_STORE__KIND=s3 ALAS_STORE__S3_ENDPOINT=...).")
    p.add_argument("--host", default=None, help="address to bind (default 127.0.0.1, or ALAS_CONTROLLER__HOST)")
    p.add_argument("--port", type=whole(0, MAX_PORT), default=None, help="port to bind, 0 for any (default 8080)")
    p.add_argument("--store", choices=["fs", "s3"], default=None, help="log backend (default: settings)")
    p.add_argument("--root", default=None, help="directory of the fs store (default .alas)")
    p.add_argument("--max-concurrent", type=whole(1, MAX_WORKERS), default=2,
                   help="repairs running at once (default 2)")
    p.add_argument("--no-auth", action="store_true", help="accept requests without a token (local tests only)")
    p.add_argument("--create-bucket", action="store_true",
                   help="create the S3 bucket if it is missing (in the background, retrying until the store "
                   "answers); /readyz turns ready once it exists")

    commands.group("metrics", "Prometheus metrics of a long-running process, served on their own port.")
    p = commands.add("serve", _metrics_serve, group="metrics",
                     help="Serve the Prometheus metrics of this process on /metrics until stopped.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=whole(0, MAX_PORT), default=9464,
                   help="port to bind, 0 for any free one (default 9464)")

    p = commands.add(
        "operator", _operator,
        help="Run the Kubernetes operator: PlanRun and Disruption resources -> Argo workflows and repairs.",
        description="Reconcile PlanRun and Disruption custom resources in one namespace: submit Argo "
        "Workflows from WorkflowTemplates and mirror their phase; post disruptions to the repair controller "
        "and record the new plan version. Uses the in-cluster config, else ~/.kube/config. The controller "
        "token is read from ALAS_CONTROLLER__TOKEN.")
    p.add_argument("--namespace", default="default", help="namespace to watch (default: default)")
    p.add_argument("--interval", type=seconds, default=5.0, help="seconds between passes (default 5)")
    p.add_argument("--once", action="store_true", help="run one pass, print the actions taken, and exit")
    p.add_argument("--controller-url", default="http://alas-controller:8080",
                   help="base URL of the repair controller")
    p.add_argument("--plan-template", default="alas-plan", help="WorkflowTemplate of an instance PlanRun")
    p.add_argument("--bench-template", default="alas-bench", help="WorkflowTemplate of a suite PlanRun")
    p.add_argument("--service-account", default="alas-workflow", help="ServiceAccount of workflow pods")
    p.add_argument("--metrics-port", type=whole(0, MAX_PORT), default=0,
                   help="serve /metrics and /healthz (liveness) on this port (0: off)")
    p.add_argument("--liveness-max-age", type=seconds, default=None,
                   help="/healthz fails when no reconcile pass finished for this many seconds "
                   "(default: max(300, 10 x interval))")
    p.add_argument("--pod-gc", choices=["OnPodCompletion", "OnPodSuccess", "OnWorkflowCompletion",
                                        "OnWorkflowSuccess"], help="podGC strategy of submitted Workflows")
    p.add_argument("--ttl-after-success", type=int, help="seconds a succeeded Workflow is kept")
    p.add_argument("--ttl-after-failure", type=int, help="seconds a failed Workflow is kept")
