"""`alas log ls|show|diff|verify` and `alas replay`: read, compare, check and re-run a run's execution log.

Exit codes: 0 intact / done, 1 a negative verdict (a tampered or broken log, replay without parity),
2 bad input (an unknown run or version), 75 the store is unreachable.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import plan_version, whole
from alas_argo.cli.run_report import cell
from alas_argo.cli.running import add_store_arguments
from alas_argo.errors import InputError
from alas_argo.log import ExecutionLog, Store, list_runs, open_store
from alas_argo.log.fs_store import FsStore
from alas_argo.settings import load_settings

__all__ = ["open_existing_log", "plain_columns", "register", "store_from_args"]


def store_from_args(args: argparse.Namespace) -> Store:
    """The store named by `--store` / `--root` and the settings (S3 endpoint, bucket, keys from env).

    Raises:
        InputError: a filesystem store whose directory does not exist (reading it would show nothing,
            which reads as "no runs" when the path is simply wrong).
    """
    store = open_store(load_settings(store={"kind": args.store, "root": args.root}))
    if isinstance(store, FsStore):
        try:
            what = None if store.root.is_dir() else (
                "a file, not a directory" if store.root.exists() else "the directory does not exist")
        except OSError as e:  # a name the system cannot look up (too long, a parent it may not search)
            what = f"cannot look the directory up: {e.strerror}"
        if what is not None:
            raise InputError(f"no execution log store here: {what} (see --root)", where=str(store.root))
    return store


def open_existing_log(args: argparse.Namespace) -> ExecutionLog:
    """The log of ``args.run``; InputError (exit 2) when the store holds no such run."""
    store = store_from_args(args)
    log = ExecutionLog(store, args.run)
    if not log.exists():
        # A HEAD answers 404 for a missing bucket too: the listing is what names it (a StoreError), and
        # otherwise says which runs are there, for a mistyped id.
        runs = store.children(prefix="runs/")
        here = (f"runs here: {', '.join(runs[:5])}{', ...' if len(runs) > 5 else ''} (`alas log ls`)" if runs
                else "the store holds no runs")
        raise InputError(f"no run {args.run!r} in the log; {here}", where=store.location)
    return log


def _console() -> Console:
    return Console(highlight=False, soft_wrap=True)


def _short(payload: dict[str, Any], width: int = 70) -> str:
    text = json.dumps(payload, separators=(",", ":"), default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def cmd_ls(args: argparse.Namespace) -> int:
    """List the runs in the store."""
    runs = list_runs(store_from_args(args))
    if args.json:
        print_json([r.to_json() for r in runs])
        return 0
    columns = ("run_id", "status", "events", "plans", "last event", "at")
    rows = [(r.run_id, r.status, str(r.events), str(r.plans), r.last_type or "-", r.last_timestamp or "-")
            for r in runs]
    console = _console()
    if not console.is_terminal:
        # Pipes and scripts get plain columns, never truncated, so that a run id can be copied or cut.
        print(plain_columns(columns, rows), end="")
        return 0
    table = Table(title="runs")
    widest = max((len(r.run_id) for r in runs), default=6)
    for col in columns:
        # The run id is what people copy: it never shrinks or wraps; the other columns give way first.
        table.add_column(col, justify="right" if col in ("events", "plans") else "left",
                         no_wrap=col == "run_id", min_width=widest if col == "run_id" else None,
                         overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    return 0


def plain_columns(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table as left-aligned text columns two spaces apart, whole cells, one line per row."""
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in (headers, *rows)]
    return "\n".join(lines) + "\n"


def cmd_show(args: argparse.Namespace) -> int:
    """Show a run's events and versions, or one plan version."""
    log = open_existing_log(args)
    if args.version is not None:
        doc, event = log.plan(args.version), log.plan_event(args.version)
        if args.json:
            print_json(doc)
            return 0
        p = event.payload
        _console().print(
            f"run {log.run_id} plan v{args.version}: makespan {cell(doc.get('makespan'))}, "
            f"{len(doc.get('operations') or [])} operations, committed by event {event.seq} at "
            f"{event.timestamp} (node {event.node_id or '-'}, reason {cell(p.get('reason'))}, "
            + (f"parent v{p['parent_version']}" if p.get("parent_version") is not None else "no parent")
            + f"), {cell(p.get('bytes'))} bytes stored")
        return 0
    events, current = log.events(), log.current_version()
    versions, retracted = log.versions(), log.retracted()
    if args.json:
        print_json({"run_id": log.run_id, "events": [e.to_json() for e in events],
                    "versions": versions, "current_version": current, "retracted": retracted})
        return 0
    table = Table(title=f"run {log.run_id}")
    for col in ("seq", "time", "type", "node", "try", "payload"):
        table.add_column(col, justify="right" if col in ("seq", "try") else "left")
    for e in events:
        table.add_row(str(e.seq), e.timestamp[11:23], e.type.value, e.node_id or "", str(e.attempt or ""),
                      _short(e.payload))
    console = _console()
    console.print(table)
    withdrawn = f"  retracted: {', '.join(f'v{v}' for v in retracted)}" if retracted else ""
    console.print(f"versions: {versions}  current: {'v' + str(current) if current else 'none'}{withdrawn}")
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    """Compare two plan versions of a run."""
    diff = open_existing_log(args).diff(args.a, args.b)
    if args.json:
        print_json(diff.to_json())
        return 0
    console = _console()
    moved = len(diff.moved_operations)
    moved_text = f"{moved} operation{'' if moved == 1 else 's'} moved"
    console.print(f"v{diff.version_a} -> v{diff.version_b}: makespan {diff.makespan_a} -> {diff.makespan_b} "
                  f"({diff.makespan_change:+d}), {moved_text} (total shift {diff.total_start_shift}), "
                  f"{len(diff.machine_changes)} on another machine, {len(diff.added)} added, "
                  f"{len(diff.removed)} removed"
                  if diff.makespan_change is not None else
                  f"v{diff.version_a} -> v{diff.version_b}: {moved_text}")
    for j, s, a, b in diff.moved_operations[: args.limit]:
        console.print(f"  job {j} step {s}: start {a} -> {b} ({b - a:+d})")
    if len(diff.moved_operations) > args.limit:
        console.print(f"  ... {len(diff.moved_operations) - args.limit} more (use --json for all)")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify a run's hash chain, sequence and plan objects; exit 1 when anything is broken."""
    report = open_existing_log(args).verify()
    if args.json:
        print_json(report.to_json())
    else:
        console = _console()
        console.print(report.summary())
        for p in report.problems:
            console.print(f"  {p.code} at {'event ' + str(p.seq) if p.seq is not None else p.key}: {p.message}")
        for w in report.warnings:
            console.print(f"  warning: {w}")
        if not report.ok:
            console.print(_AFTER_BROKEN)
    return 0 if report.ok else 1


#: What `alas log verify` tells a person whose log is broken (nothing in ALAS can mend it, by design).
_AFTER_BROKEN = ("what to do: nothing in ALAS rewrites a log (it is append-only), so the damage stays until the "
                 "objects named above are restored from a copy of the store (a backup, or the bucket's object "
                 "versions); verify again after restoring, or start the work as a new run.")


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-run every recorded validation and repair of a run and report parity; exit 1 without it."""
    from alas_argo.log.replay import replay_log

    report = replay_log(open_existing_log(args), repairs=not args.skip_repairs)
    if args.json:
        print_json(report.to_json())
    else:
        console = _console()
        for step in report.steps:
            mark = "same" if step.parity else "DRIFT"
            console.print(f"  event {step.seq:>4} {step.kind:<10} {step.node_id or '-':<16} {mark:<5} "
                          f"{step.detail}")
        console.print(report.summary())
    return 0 if report.parity else 1


def _common(parser: argparse.ArgumentParser, run: bool = True) -> None:
    if run:
        parser.add_argument("run", help="run id")
    add_store_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print JSON for machines")


def register(commands: Commands) -> None:
    """Add `alas log ...`, `alas replay` and `alas bench log`."""
    commands.group("log", help="Inspect, compare and verify execution logs.")
    _common(commands.add("ls", cmd_ls, help="List the runs in the store.", group="log"), run=False)
    p = commands.add("show", cmd_show, help="Show a run's events, or one plan version.", group="log")
    _common(p)
    p.add_argument("--version", type=plan_version, default=None,
                   help="show plan version N, as N or vN (with --json: the plan)")
    p = commands.add("diff", cmd_diff, help="Operations moved and makespan change between two versions.",
                     group="log")
    _common(p)
    p.add_argument("a", type=plan_version, help="first version (2 or v2)")
    p.add_argument("b", type=plan_version, help="second version")
    p.add_argument("--limit", type=whole(0), default=20, help="moved operations to list (default 20)")
    _common(commands.add("verify", cmd_verify, help="Check the hash chain, gaps and plan objects (exit 1 if "
                         "broken).", group="log"))
    p = commands.add("replay", cmd_replay, stoppable=True,
                     help="Re-run a run's validations and repairs from its log and "
                     "report parity (exit 1 on drift).")
    _common(p)
    p.add_argument("--skip-repairs", action="store_true", help="re-run validations only (repairs are slow)")
    from alas_argo.cli.log_benching import register as register_log_benches

    register_log_benches(commands)
