"""`alas bench log` and `alas bench open`: the execution log's benchmarks as commands.

The measuring lives in :mod:`alas_argo.benchmarks.log` and :mod:`alas_argo.benchmarks.open_cost`; this
module parses, calls them and prints, so that the benchmarks never import the CLI.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile

from alas_argo.benchmarks.log import run_log_bench
from alas_argo.benchmarks.open_cost import KINDS, run_open_bench
from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import MAX_REPEATS, counts, whole
from alas_argo.cli.running import add_store_arguments
from alas_argo.settings import Settings, StoreKind, load_settings

__all__ = ["register"]


def _settings(args: argparse.Namespace, stack: contextlib.ExitStack) -> Settings:
    """The store the flags name; ``--store fs`` without ``--root`` gets a temporary directory, removed with
    ``stack``, so that benchmark runs never mix with real ones."""
    root = args.root
    if root is None and load_settings(store={"kind": args.store}).store.kind is StoreKind.FS:
        root = stack.enter_context(tempfile.TemporaryDirectory(prefix=".alas-bench-", dir="."))
    return load_settings(store={"kind": args.store, "root": root})


def _log(args: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        result = run_log_bench(_settings(args, stack), appends=args.appends, versions=args.versions,
                               replay=not args.no_replay)
    if args.json:
        print_json(result)
        return 0
    a, b = result["append"], result["plan_bytes"]
    lines = [f"store {result['store']}",
             f"append latency: p50 {a['p50_ms']} ms, p99 {a['p99_ms']} ms over {a['appends']} appends",
             f"50x20 plan: {b['bytes_per_version']} bytes per stored version "
             f"({b['json_bytes_per_version']} bytes as JSON, {b['ratio']}x smaller)"]
    if "replay" in result:
        r = result["replay"]
        lines.append(f"replay of {r['versions']} versions ({r['steps']} steps): {r['replay_seconds']} s, "
                     f"{'parity' if r['parity'] else 'DRIFT'}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _open(args: argparse.Namespace) -> int:
    sizes = counts(str(args.events), "--events")
    with contextlib.ExitStack() as stack:
        result = run_open_bench(_settings(args, stack), sizes)
    if args.json:
        print_json(result)
        return 0
    lines = [f"store {result['store']} ({result['unit']} per access)",
             f"{'events':>8} " + " ".join(f"{k:>11}" for k in KINDS)]
    lines += [f"{r['events']:>8} " + " ".join(f"{r[k]:>11}" for k in KINDS) for r in result["rows"]]
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


#: Both benches measure the store they are given, so they leave runs in it: say so before they do.
_WRITES = ("{what}\n\nIt writes its runs ({runs}) into the store given (--store, --root or ALAS_STORE__*), and the "
           "log is append-only: they stay there, beside the store's other runs. Point --root at a scratch directory "
           "(or a scratch bucket) to keep them apart.")


def register(commands: Commands) -> None:
    """Add `alas bench log` and `alas bench open`."""
    p = commands.add("log", _log, help="Execution log: append latency, bytes per plan version, replay time.",
                     description=_WRITES.format(what="Execution log: append latency, bytes per plan version, replay "
                                                "time.", runs="bench-append-*, bench-bytes-* and bench-replay-*"),
                     group="bench")
    add_store_arguments(p)
    p.add_argument("--appends", type=whole(1, MAX_REPEATS), default=200, help="appends to time (default 200)")
    p.add_argument("--versions", type=whole(1, MAX_REPEATS), default=100,
                   help="plan versions in the replayed run (default 100)")
    p.add_argument("--no-replay", action="store_true", help="skip the replay figure")
    p.add_argument("--json", action="store_true", help="print JSON for machines")
    p = commands.add("open", _open, help="Execution log: store requests per pod against the run's length.",
                     description=_WRITES.format(what="Execution log: store requests per pod against the run's "
                                                "length.", runs="bench-open-*"),
                     group="bench")
    add_store_arguments(p)
    p.add_argument("--events", default="10,100,1000", help="run lengths, comma-separated (default 10,100,1000)")
    p.add_argument("--json", action="store_true", help="print JSON for machines")
