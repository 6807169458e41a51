"""`alas instance list|show`: the bundled benchmarks and user instance files."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from alas_argo.cli.app import Commands, print_json
from alas_argo.jssp.catalog import FAMILIES, SUITES, get_instance, load_instance, suite

__all__ = ["register"]


def _list(args: argparse.Namespace) -> int:
    names = suite(args.suite)
    rows: list[dict[str, Any]] = []
    for name in names:
        inst = get_instance(name)
        rows.append({"name": inst.name, "jobs": inst.num_jobs, "machines": inst.num_machines,
                     "lower_bound": inst.lower_bound, "upper_bound": inst.upper_bound})
    if args.json:
        print_json(rows)
        return 0
    table = Table(title=f"{len(rows)} instances ({args.suite})")
    for col in ("name", "size", "lower bound", "upper bound", "optimal"):
        table.add_column(col)
    for r in rows:
        optimal = "yes" if r["lower_bound"] is not None and r["lower_bound"] == r["upper_bound"] else "-"
        table.add_row(str(r["name"]), f"{r['jobs']}x{r['machines']}", str(r["lower_bound"] or "?"),
                      str(r["upper_bound"] or "?"), optimal)
    Console().print(table)
    return 0


def _show(args: argparse.Namespace) -> int:
    inst = load_instance(args.name)
    if args.json:
        print_json(inst.to_json())
        return 0
    print(f"{inst.name}: {inst.num_jobs} jobs x {inst.num_machines} machines, {inst.num_operations} operations")
    print(f"bounds: lower {inst.lower_bound}, upper {inst.upper_bound}")
    if inst.bounds_source:
        print(f"source: {inst.bounds_source}")
    for j, ops in enumerate(inst.jobs):
        print(f"  job {j:3d}: " + " ".join(f"m{m}:{d}" for m, d in ops))
    return 0


def register(commands: Commands) -> None:
    """Add `instance list` and `instance show`."""
    commands.group("instance", "Browse bundled benchmark instances and read instance files.")
    p = commands.add("list", _list, group="instance", help="List bundled instances with their bounds.",
                     description="List bundled instances. Suites: "
                     + ", ".join([*SUITES, *FAMILIES, "all"]) + ", or a comma-separated list of names.")
    p.add_argument("--suite", default="all", help="suite or family to list (default: all)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p = commands.add("show", _show, group="instance", help="Show one instance (a bundled name or a file).",
                     description="Show an instance. NAME is a bundled name (ta01, ft06, dmu19) or a path to a "
                     "Taillard, OR-Library or JSON instance file.")
    p.add_argument("name", metavar="NAME", help="bundled name (ta01, ft06, dmu19) or instance file")
    p.add_argument("--json", action="store_true", help="print the instance JSON of docs/contracts.md")
