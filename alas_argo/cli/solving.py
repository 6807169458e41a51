"""`alas solve`: plan one static instance and write its schedule JSON (docs/contracts.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from alas_argo.bounds import MAX_WORKERS
from alas_argo.cli.app import Commands, print_json, write_json_file
from alas_argo.cli.flag_values import seconds, whole
from alas_argo.cli.flag_values import seed as seed_flag
from alas_argo.cli.outputs import check_output_file
from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.cpsat import SolveResult
from alas_argo.jssp.dispatching import DispatchingRule
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.modeling import ProgressEvent
from alas_argo.jssp.planning import SolveMethod, plan

__all__ = ["gap_percent", "progress_display", "register", "summary"]


def gap_percent(makespan: int, upper_bound: int | None) -> float | None:
    """Gap of ``makespan`` to the best known makespan, in percent (None when it is unknown)."""
    if not upper_bound:
        return None
    return round(100.0 * (makespan - upper_bound) / upper_bound, 2)


def summary(instance: Instance, result: SolveResult, method: str) -> dict[str, Any]:
    """The machine-readable summary of a solve."""
    return {
        "instance": instance.name, "size": instance.size, "method": method, "status": result.status.value,
        "makespan": result.objective, "bound": result.bound, "upper_bound": instance.upper_bound,
        "gap_percent": gap_percent(result.objective, instance.upper_bound),
        "seconds": round(result.seconds, 3), "limits": dict(result.limits),
    }


@contextmanager
def progress_display(enabled: bool, title: str) -> Iterator[Callable[[ProgressEvent], None] | None]:
    """A live line on stderr (incumbent, bound, elapsed) while the block runs; None when disabled."""
    if not enabled:
        yield None
        return
    console = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True) as bar:
        task = bar.add_task(f"{title}: starting", total=None)

        def report(event: ProgressEvent) -> None:
            # Called from CP-SAT's threads: rich serializes updates under its own lock.
            bar.update(task, description=f"{title} ({event.phase}) incumbent {event.makespan}, "
                       f"bound {event.bound}")

        yield report


def _solve(args: argparse.Namespace) -> int:
    if args.out:
        check_output_file(args.out)
    instance = load_instance(args.instance)
    live = not args.json and sys.stderr.isatty()
    with progress_display(live, instance.name) as report:
        result = plan(instance, time_limit=args.time_limit, workers=args.workers, seed=args.seed,
                      method=args.method, rule=args.rule, progress=report, deterministic=not args.wall_clock)
    doc = summary(instance, result, args.method)
    if args.out:
        write_json_file(args.out, result.schedule.to_json())
        doc["out"] = str(args.out)
    if args.json:
        print_json({**doc, "schedule": result.schedule.to_json()} if not args.out else doc)
        return 0
    gap = doc["gap_percent"]
    print(f"{instance.name} ({instance.size}): makespan {result.objective}, bound {result.bound}, "
          f"upper bound {instance.upper_bound if instance.upper_bound is not None else '?'}, "
          f"gap {'?' if gap is None else f'{gap:+.2f}%'}, {result.status.value}, {result.seconds:.1f} s")
    if args.out:
        print(f"schedule written to {args.out}")
    return 0


def register(commands: Commands) -> None:
    """Add `alas solve`."""
    p = commands.add(
        "solve", _solve, stoppable=True, help="Plan a static instance (dispatching warm start, CP-SAT, LNS).",
        description="Plan INSTANCE (a bundled name such as ta01, or a Taillard / OR-Library / JSON file). "
        "The best dispatching rule gives a warm start; CP-SAT improves it, followed by large-neighbourhood "
        "search on large instances. --out writes the schedule JSON; --json prints a summary (with the "
        "schedule when --out is not given). The same seed gives the same schedule: the search is limited by "
        "CP-SAT deterministic time on one worker unless --wall-clock. Ctrl-C stops it (exit 130, nothing "
        "written).")
    p.add_argument("instance", metavar="INSTANCE", help="bundled instance name or instance file")
    p.add_argument("--time-limit", type=seconds, default=10.0, metavar="S",
                   help="nominal seconds of deterministic search (default 10; wall seconds with --wall-clock)")
    p.add_argument("--workers", type=whole(1, MAX_WORKERS), default=2, metavar="N",
                   help="CP-SAT workers with --wall-clock (default 2)")
    p.add_argument("--wall-clock", action="store_true",
                   help="limit the search by wall time on --workers workers instead of deterministic time on one: "
                   "often a better plan in the same time on an idle machine, but not reproducible")
    p.add_argument("--seed", type=seed_flag, default=0, metavar="K", help="random seed (default 0)")
    p.add_argument("--rule", choices=[r.value for r in DispatchingRule], default=None,
                   help="warm-start dispatching rule (default: the best of all deterministic rules)")
    p.add_argument("--method", choices=[m.value for m in SolveMethod], default=SolveMethod.AUTO.value,
                   help="auto (CP-SAT, then LNS on large instances), cpsat, lns or dispatch")
    p.add_argument("-o", "--out", metavar="FILE", help="write the schedule JSON here")
    p.add_argument("--json", action="store_true", help="print a JSON summary for scripts")
