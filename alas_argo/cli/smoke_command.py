"""`alas smoke`: check an installation end to end (the chart's `helm test` runs it in a pod)."""

from __future__ import annotations

import argparse
import secrets
import time

from rich.console import Console

from alas_argo.addresses import is_http_url
from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import run_id as run_id_flag
from alas_argo.cli.flag_values import seconds
from alas_argo.cli.running import add_store_arguments
from alas_argo.errors import InputError
from alas_argo.log import open_store
from alas_argo.settings import load_settings

__all__ = ["register"]

_MARK = {True: "[green]ok     [/green]", False: "[red]FAILED [/red]", None: "[dim]skipped[/dim]"}


def _smoke(args: argparse.Namespace) -> int:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.smoke import smoke

    get_instance(args.instance)  # an unknown name is bad input, before anything is written
    if args.controller is not None:
        _check_url(args.controller)
    settings = load_settings(store={"kind": args.store, "root": args.root})
    token = settings.controller.token.get_secret_value() if settings.controller.token else None
    run_id = args.run_id or f"smoke-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"
    checks = smoke(open_store(settings), run_id, instance=args.instance, controller=args.controller, token=token,
                   timeout=args.timeout)
    failed = [c for c in checks if c.ok is False]
    if args.json:
        print_json({"run_id": run_id, "ok": not failed, "checks": [c.to_json() for c in checks]})
    else:
        # Lines, not a table: `helm test --logs` and CI logs show them unwrapped.
        console = Console(soft_wrap=True, highlight=False)
        console.print(f"alas smoke: run {run_id}")
        for c in checks:
            console.print(f"{_MARK[c.ok]} {c.name} ({c.seconds:.2f} s): {c.detail}")
        console.print(f"[red]{len(failed)} of {len(checks)} checks failed[/red]" if failed else
                      f"all {sum(c.ok is True for c in checks)} checks passed")
    return 1 if failed else 0


def _check_url(url: str) -> None:
    """Refuse a controller address that is not http(s)://host[:port][/path] before anything is written."""
    if not is_http_url(url):
        raise InputError("not a controller address: expected http://host:port or https://host:port "
                         "(e.g. http://alas-controller:8080)", where=url)


def register(commands: Commands) -> None:
    """Add this module's commands."""
    p = commands.add(
        "smoke", _smoke,
        help="Check an installation end to end: the store takes a run, the controller repairs it, the log "
        "verifies.",
        description="Plan a small bundled instance with the heuristic planner into the store (ALAS_STORE__*, "
        "or --store/--root) as a new run; with --controller, check its /readyz, POST a disruption of that run "
        "(with the bearer token ALAS_CONTROLLER__TOKEN) and check that its repair is the current version in the "
        "store under this check's idempotency key; then verify the run's log (whenever the run has one, so a "
        "damaged log is reported whole). Exit 0 when every check passed, 1 when one failed (each check says "
        "why; the ones that needed it are skipped). The chart's `helm test` "
        "runs this in a pod against the release.")
    p.add_argument("--controller", metavar="URL", default=None,
                   help="base URL of the repair controller (e.g. http://alas-controller:8080); without it only "
                   "the store is checked")
    p.add_argument("--instance", default="ft06", help="bundled instance to plan (default ft06: seconds)")
    p.add_argument("--run-id", type=run_id_flag, default=None,
                   help="run id to write (default: smoke-<UTC time>-<random>)")
    p.add_argument("--timeout", type=seconds, default=30.0,
                   help="seconds to wait for each controller answer (default 30)")
    add_store_arguments(p)
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
