"""`alas engines matrix|lint`, `alas render`, `alas submit`: the engines from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import seconds
from alas_argo.cli.outputs import check_output_dir
from alas_argo.errors import InputError, IntegrityError, write_refused
from alas_argo.file_names import found

__all__ = ["register"]


def _matrix(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from alas_argo.engines.conformance import ENGINES, matrix_json, matrix_markdown

    rows = matrix_json()
    if args.markdown:
        print(matrix_markdown(), end="")
        return 0
    if args.json:
        print_json(rows)
        return 0
    table = Table(title="IR feature support per engine (native / approximated / unsupported)")
    table.add_column("feature")
    table.add_column("IR")
    for engine in ENGINES:
        table.add_column(engine)
    for r in rows:
        table.add_row(r["feature"], r["ir"], *(f"{r[e]['support']}: {r[e]['mapping']}" for e in ENGINES))
    Console(width=200).print(table)
    return 0


def _load(path: str) -> Any:
    from alas_argo.cli.ir_commands import load_document

    return load_document(path)


def _lint(args: argparse.Namespace) -> int:
    from statelint.config import Config
    from statelint.linter import Linter

    from alas_argo.engines.lint import lint_argo

    found: dict[str, list[str]] = {}
    for path in args.files:
        doc = _load(path)
        if isinstance(doc, dict) and "States" in doc:
            found[path] = [str(p) for p in Linter.validate(json.dumps(doc), Config([], False, False))]
        else:
            found[path] = [str(p) for p in lint_argo(doc if isinstance(doc, dict) else {})]
    bad = sum(bool(problems) for problems in found.values())
    if args.json:
        # Every file's problems (none: clean) and the count, for a CI step; the exit code says the same.
        print_json({"files": [{"path": k, "problems": v} for k, v in found.items()], "with_problems": bad})
        return 1 if bad else 0
    for path, problems in found.items():
        for p in problems:
            print(f"{path}: {p}")
    if bad:
        raise IntegrityError(f"{bad} of {len(args.files)} files have problems", where="alas engines lint")
    print(f"{len(args.files)} files clean")
    return 0


def _render(args: argparse.Namespace) -> int:
    from alas_argo.engines.rendering import (
        compare_tree,
        default_out,
        load_definitions,
        render_all,
        repo_root,
        write_tree,
    )

    out = Path(args.out) if args.out else default_out()
    beside = repo_root() / "charts/alas/workflows"
    chart: Path | None = Path(args.chart_dir) if args.chart_dir else beside
    # A chart directory given by name is written like --out (made if missing); the default one only where a
    # chart is (the checkout's charts/alas): never a charts/ tree made up beside an installed package.
    if args.no_chart or (not args.chart_dir and not found(beside.parent, directory=True)):
        chart = None
    if not args.check:
        check_output_dir(out)
        if chart is not None:
            check_output_dir(chart, "--chart-dir")
    files = render_all(load_definitions(args.workflows), image=args.image)
    templates = {Path(rel).name: text for rel, text in files.items() if rel.startswith("argo/")}
    if args.check:
        stale = compare_tree(files, out) + ([f"{chart}/{n}" for n in compare_tree(templates, chart)] if chart else [])
        if stale:
            raise IntegrityError(f"{len(stale)} rendered files are stale: {', '.join(stale)} (run alas render)",
                                 where=str(out))
        print(f"{len(files)} files up to date")
        return 0
    try:
        written = write_tree(files, out)
        if chart is not None:
            written += write_tree(templates, chart)
    except OSError as e:  # e.g. a file where a subdirectory (argo/, asl/) must go
        raise write_refused(e, "cannot write", str(e.filename or out)) from None
    for p in written:
        print(p)
    return 0


def _submit(args: argparse.Namespace) -> int:
    from alas_argo.engines.argo import to_argo
    from alas_argo.engines.submitting import as_submission, submit
    from alas_argo.settings import load_settings

    settings = load_settings(argo={"host": args.host, "token": args.token, "namespace": args.namespace,
                                   "image": args.image, "verify_ssl": False if args.insecure else None,
                                   "timeout": args.timeout})
    params = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"expected NAME=VALUE, got {item!r}", where="-p")
        params[name] = value
    is_file = Path(args.workflow).suffix in (".yaml", ".yml", ".json")
    if is_file:
        doc = _load(args.workflow)
        if not isinstance(doc, dict):
            raise InputError("a workflow document must be a mapping", where=args.workflow)
    else:
        from alas_argo.engines.rendering import load_definitions

        builders = load_definitions(args.workflows)
        if args.workflow not in builders:
            raise InputError(f"unknown workflow {args.workflow!r} (known: {', '.join(sorted(builders))})",
                             where="alas submit")
        doc = to_argo(builders[args.workflow](), image=settings.argo.image, namespace=settings.argo.namespace)
    try:
        workflow = as_submission(doc, params, namespace=settings.argo.namespace)
    except InputError as e:
        if e.where == "-p" or not is_file:
            raise
        raise InputError(e.message, where=args.workflow) from None  # the file, with the part in the message
    from alas_argo.pipeline.parameters import check_submission

    # The shipped workflow it is (rendered ones carry the label; a WorkflowTemplate file is named after it).
    meta = doc.get("metadata") or {}
    labels = meta.get("labels") or {}
    name = labels.get("alas-argo.dev/workflow") or meta.get("name") or ""
    check_submission(name, {p["name"]: p["value"] for p in workflow["spec"]["arguments"]["parameters"]})
    if args.dry_run:
        if args.json:
            print_json(workflow)
        else:
            import yaml

            # What `argo submit` and `kubectl apply` take; key order as built (apiVersion, kind, metadata, spec).
            print(yaml.safe_dump(workflow, sort_keys=False, default_flow_style=False), end="")
        return 0
    name = submit(workflow, settings.argo)
    print(f"submitted {name} in namespace {settings.argo.namespace}")
    return 0


def register(commands: Commands) -> None:
    """Add `engines matrix`, `engines lint`, `render` and `submit`."""
    commands.group("engines", "The IR compilers: conformance matrix and offline lint.")
    p = commands.add("matrix", _matrix, group="engines", help="Print the conformance matrix (IR feature x engine).")
    p.add_argument("--json", action="store_true", help="print JSON rows")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p = commands.add("lint", _lint, group="engines", help="Lint rendered Argo YAML (references) and ASL (statelint).")
    p.add_argument("files", nargs="+", metavar="FILE", help="rendered Argo YAML or ASL JSON files")
    p.add_argument("--json", action="store_true", help="print each file's problems as JSON (exit 1 when any)")
    p = commands.add("render", _render, help="Render every workflow to Argo YAML and ASL JSON (the goldens).",
                     description="Compile the shipped IR workflows (alas_argo.workflows) to Argo WorkflowTemplates "
                     "(argo/*.yaml) and ASL state machines (asl/*.asl.json) under --out, and copy the templates into "
                     "the Helm chart (the checkout's, when there is one, or --chart-dir).")
    p.add_argument("-o", "--out", help="output directory (default: workflows/ of the checkout, else ./workflows)")
    p.add_argument("--image", default="alas:0.1.0", help="image every template runs (default: alas:0.1.0)")
    p.add_argument("--workflows", help="directory of other IR definitions, a package with WORKFLOWS in its "
                   "__init__.py (default: the shipped ones)")
    p.add_argument("--chart-dir", help="where the chart picks templates up, made if missing (default: "
                   "charts/alas/workflows, where a chart is)")
    p.add_argument("--no-chart", action="store_true", help="do not copy templates into the chart")
    p.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 when stale")
    p = commands.add("submit", _submit, help="Submit a workflow to an Argo server (through Hera).",
                     description="Submit WORKFLOW (a shipped workflow, e.g. alas-plan, or a rendered YAML file) "
                     "to the Argo server in settings (ARGO_SERVER, ARGO_TOKEN, ARGO_NAMESPACE). alas-plan reveals "
                     "-p disruptions=N disruptions in sequence, N from 0 (plan only) to 3 (the segments it is "
                     "rendered with), default 1: the parameter carries its enum, so the Argo server refuses a larger "
                     "N before any pod runs (a bare `argo submit -p` drops the enum: there the first step refuses "
                     "it).")
    p.add_argument("workflow", metavar="WORKFLOW", help="a workflow name (alas-plan, alas-repair, alas-bench) or a "
                   "rendered .yaml/.json file")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE", help="a workflow parameter")
    p.add_argument("-k", "--insecure-skip-verify", dest="insecure", action="store_true",
                   help="do not verify the Argo server's TLS certificate (as argo's own flag; e.g. a kind cluster's "
                   "self-signed server; else ALAS_ARGO__VERIFY_SSL=false)")
    p.add_argument("--host", help="Argo server: https://host:port, or host:port as the `argo` CLI takes ARGO_SERVER "
                   "(https unless ARGO_SECURE=false)")
    p.add_argument("--token", help="bearer token")
    p.add_argument("--namespace", help="namespace")
    p.add_argument("--timeout", type=seconds, metavar="SECONDS", help="seconds to wait for the server's answer "
                   "(default 30; else ALAS_ARGO__TIMEOUT)")
    p.add_argument("--image", help="image (for a workflow compiled from its definition)")
    p.add_argument("--workflows", help="directory of other IR definitions (default: the shipped ones)")
    p.add_argument("--dry-run", action="store_true", help="print the Workflow (YAML) instead of submitting it")
    p.add_argument("--json", action="store_true", help="with --dry-run: print the Workflow as JSON instead of YAML")
