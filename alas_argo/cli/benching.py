"""`alas bench static`: plan a suite, validate every schedule independently, write CSV + Markdown tables."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from alas_argo.benchmarks.partial_table import PartialTable
from alas_argo.benchmarks.static import COLUMNS, StaticRow, run_static, summarize, write_tables
from alas_argo.bounds import MAX_WORKERS
from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import seconds, whole
from alas_argo.cli.flag_values import seed as seed_flag
from alas_argo.cli.outputs import check_output_dir
from alas_argo.cli.progress import ProgressLines
from alas_argo.cli.running import add_store_arguments
from alas_argo.jssp.catalog import suite
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import SolveMethod
from alas_argo.log import ExecutionLog

__all__ = ["default_directory", "register"]


def default_directory(suite_name: str, now: datetime | None = None, *, kind: str = "static") -> Path:
    """``bench/results/<kind>-<suite or run>-<UTC timestamp>/``, with the name made path-safe."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", suite_name)[:60]
    return Path("bench") / "results" / f"{kind}-{safe}-{stamp}"


def _static(args: argparse.Namespace) -> int:
    names = suite(args.suite)
    directory = check_output_dir(Path(args.out) if args.out else default_directory(args.suite))
    limits = "deterministic limits, 1 worker" if args.deterministic else f"{args.workers} workers"
    title = (f"Static benchmark: {args.suite}, method {args.method}, seed {args.seed}, {args.time_limit:g} s per "
             f"instance, {limits}")
    # The command that reproduces the table (every setting spelled out, defaults too), kept with the figures.
    command = shlex.join(["alas", "bench", "static", "--suite", args.suite, "--time-limit", f"{args.time_limit:g}",
                          "--workers", str(args.workers), "--seed", str(args.seed), "--method", args.method,
                          *(["--deterministic"] if args.deterministic else [])])
    with PartialTable(directory / "static.csv", COLUMNS) as table:
        rows = _plan_suite(args, names, table.add)
    csv_path, md_path = write_tables(rows, directory, title=title, command=command)
    s = summarize(rows)
    if args.json:
        print_json({"summary": asdict(s), "rows": [asdict(r) for r in rows], "command": command,
                    "csv": str(csv_path), "markdown": str(md_path)})
    else:
        gap = "n/a" if s.mean_gap_percent is None else f"{s.mean_gap_percent:.2f}%"
        print(f"{s.instances} instances: mean gap {gap}, valid {100 * s.valid_rate:.1f}%, "
              f"{s.total_seconds} s")
        print(f"tables: {csv_path} {md_path}")
    return 0 if s.valid_rate == 1.0 else 1


def _plan_suite(args: argparse.Namespace, names: list[str], keep: Callable[[StaticRow], None]) -> list[StaticRow]:
    """Plan every instance; ``keep`` receives each row as it finishes (the partial table on disk)."""
    if not sys.stderr.isatty():  # a CI log or a pipe: a line per instance, a heartbeat during long solves
        with ProgressLines("alas bench static", total=len(names), every=0) as lines:
            def plain_row(row: StaticRow) -> None:
                keep(row)
                gap = "?" if row.gap_percent is None else f"{row.gap_percent:+.2f}%"
                lines.done(f"{row.instance} {row.size} makespan {row.makespan} ({gap}) "
                           f"{'valid' if row.valid else 'INVALID'} {row.seconds:.1f} s")

            def plain_event(name: str, event: ProgressEvent) -> None:
                lines.working_on(f"{name} ({event.phase}, incumbent {event.makespan})")

            return run_static(names, time_limit=args.time_limit, workers=args.workers, seed=args.seed,
                              method=args.method, on_row=plain_row, progress=plain_event,
                              deterministic=args.deterministic)
    if args.json:
        return run_static(names, time_limit=args.time_limit, workers=args.workers, seed=args.seed,
                          method=args.method, on_row=keep, deterministic=args.deterministic)
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        task = bar.add_task("starting", total=len(names))

        def on_event(name: str, event: ProgressEvent) -> None:
            bar.update(task, description=f"{name} ({event.phase}) incumbent {event.makespan}")

        def on_row(row: StaticRow) -> None:
            keep(row)
            bar.advance(task)
            gap = "?" if row.gap_percent is None else f"{row.gap_percent:+.2f}%"
            console.print(f"{row.instance} {row.size}: {row.makespan} ({gap}) "
                          f"{'valid' if row.valid else 'INVALID'} {row.seconds:.1f} s", highlight=False)

        return run_static(names, time_limit=args.time_limit, workers=args.workers, seed=args.seed,
                          method=args.method, on_row=on_row, progress=on_event, deterministic=args.deterministic)


def register(commands: Commands) -> None:
    """Add `alas bench static` and `alas bench report`."""
    commands.group("bench", "Benchmarks.")
    p = commands.add(
        "static", _static, group="bench", stoppable=True,
        help="Plan a suite and tabulate gaps to the best known makespans.",
        description="Plan every instance of SUITE (alas45, smoke, a family such as ta, or a comma-separated "
        "list), validate each schedule with the independent validator, and write static.csv and static.md. "
        "Exit 0 when every schedule is valid, 1 otherwise, 2 on bad input.")
    p.add_argument("--suite", default="alas45", help="suite, family or comma-separated names (default alas45)")
    p.add_argument("--time-limit", type=seconds, default=60.0, metavar="S", help="seconds per instance (60)")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=2, metavar="N", help="CP-SAT workers (default 2)")
    p.add_argument("--seed", type=seed_flag, default=0, metavar="K", help="random seed (default 0)")
    p.add_argument("--method", choices=[m.value for m in SolveMethod], default=SolveMethod.AUTO.value,
                   help="planner method (default auto)")
    p.add_argument("-o", "--out", metavar="DIR", help="output directory (default bench/results/static-<suite>-<time>)")
    p.add_argument("--deterministic", action="store_true",
                   help="limit each plan by CP-SAT deterministic time on one worker, as alas run and alas solve do "
                   "by default (default here: wall time on --workers workers)")
    p.add_argument("--json", action="store_true", help="print the rows and summary as JSON")

    p = commands.add(
        "report", _report, group="bench",
        help="Tabulate a benchmark fan-out's cases (alas-bench on Argo, a suite PlanRun) from the execution log.",
        description="Read every case run of the fan-out RUN_ID from the store (RUN_ID.<instance>.<scenario>.<seed>, "
        "one per case pod) and write cases.csv and cases.md: per case its status, makespan before and after the "
        "disruption, gap to the best known, operations the repair moved and the independent validator's verdict "
        "on the current plan, as `alas log show` reads them; per scenario a summary and, in cases.png, the gaps "
        "and moves as box plots. Nothing is run or written "
        "to the log. Exit 0 when every case succeeded with a valid plan, 1 otherwise, 2 on bad input (no such "
        "cases in the store).")
    p.add_argument("run", metavar="RUN_ID", help="the fan-out's run id (alas-bench's run-id parameter; a suite "
                   "PlanRun's status.runId)")
    add_store_arguments(p)
    p.add_argument("-o", "--out", metavar="DIR", help="output directory (default bench/results/fanout-<run>-<time>)")
    p.add_argument("--json", action="store_true", help="print the summaries and rows as JSON")


def _report(args: argparse.Namespace) -> int:
    from alas_argo.benchmarks import fanout
    from alas_argo.cli.logs import plain_columns, store_from_args

    store = store_from_args(args)
    ids = fanout.case_run_ids(store, args.run)
    directory = check_output_dir(Path(args.out) if args.out else default_directory(args.run, kind="fanout"))
    rows = []
    # Each case is a few store reads and one validation: 8 at a time overlap the S3 round trips (not measured).
    with (ProgressLines("alas bench report", total=len(ids), every=2.0) as lines,
          ThreadPoolExecutor(max_workers=8) as pool):
        for row in pool.map(lambda case_id: fanout.case_row(ExecutionLog(store, case_id)), ids):
            rows.append(row)
            lines.done(f"{row.run_id} {row.status}" + ("" if row.final_valid else " (no valid plan)"))
    summaries = fanout.summarize(rows)
    csv_path, md_path, png_path = fanout.write_tables(args.run, rows, summaries, directory)
    bad = [r for r in rows if r.status != "succeeded" or not r.final_valid]
    if args.json:
        print_json({"run_id": args.run, "summary": [asdict(s) for s in summaries], "rows": [asdict(r) for r in rows],
                    "csv": str(csv_path), "markdown": str(md_path), "chart": str(png_path)})
        return 1 if bad else 0
    header = ("scenario", "cases", "succeeded", "valid", "mean gap %", "median moved", "median repair s",
              "median s")
    print(plain_columns(header, [[_text(v) for v in asdict(s).values()] for s in summaries]), end="")
    for r in bad[:20]:
        print(f"{r.run_id}: {r.status}, {'valid plan' if r.final_valid else 'no valid plan'}"
              + (f" ({r.problem})" if r.problem else ""))
    if len(bad) > 20:
        print(f"... and {len(bad) - 20} more (cases.csv lists them all)")
    print(f"tables: {csv_path} {md_path}; chart: {png_path}")
    return 1 if bad else 0


def _text(value: object) -> str:
    return "-" if value is None else str(value)
