"""`alas ir schema`, `alas ir validate FILE`, and `alas bench runtime`."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from alas_argo.cli.app import Commands, print_json
from alas_argo.cli.flag_values import MAX_REPEATS, seconds, whole
from alas_argo.cli.outputs import check_output_file
from alas_argo.errors import InputError, write_refused
from alas_argo.file_names import read_limited
from alas_argo.json_limits import MAX_DEPTH, check_document, load_json

__all__ = ["load_document", "load_yaml", "register"]

_BRACKETS = re.compile(r"[\[\]{}]")


def load_document(path: str) -> Any:
    """Read a JSON or YAML workflow document; any failure is an InputError naming the file (exit 2)."""
    p = Path(path)
    try:
        text = read_limited(p).decode("utf-8")
    except FileNotFoundError:
        raise InputError("workflow file not found", where=str(p)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read workflow file: {e}", where=str(p)) from None
    if p.suffix.lower() == ".json":
        return load_json(text, where=str(p))
    return load_yaml(text, where=str(p))


def load_yaml(text: str, *, where: str) -> Any:
    """Decode a YAML document within the limits of :mod:`alas_argo.json_limits` (depth, size, numbers).

    Raises:
        InputError: not YAML, or beyond the limits; naming ``where`` and, when known, the line.
    """
    import yaml

    # PyYAML parses deep flow nesting in quadratic time before its recursion gives up (seconds for 2,000
    # brackets): count the brackets first, a linear scan (brackets inside quoted strings count too, which no
    # real workflow holds 64 levels of).
    depth = deepest = 0
    for bracket in _BRACKETS.findall(text):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise InputError(f"invalid YAML: nested more than {MAX_DEPTH} levels deep", where=where)
    try:
        # The safe loader in C when PyYAML was built with libyaml (ten times faster), else in Python.
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        place = f"{where} line {mark.line + 1} column {mark.column + 1}" if mark is not None else where
        raise InputError(f"invalid YAML: {getattr(e, 'problem', None) or e}", where=place) from None
    except RecursionError:
        raise InputError(f"invalid YAML: nested more than {MAX_DEPTH} levels deep", where=where) from None
    except (ValueError, OverflowError) as e:  # an integer of thousands of digits, a date out of range
        raise InputError(f"invalid YAML: {str(e)[:120]}", where=where) from None
    check_document(doc, where=where)
    return doc


def _schema(args: argparse.Namespace) -> int:
    from alas_argo.ir.schema import workflow_schema

    print_json(workflow_schema())
    return 0


def _validate(args: argparse.Namespace) -> int:
    from alas_argo.ir.validation import validate_document

    doc = load_document(args.file)
    if not isinstance(doc, dict):
        raise InputError("a workflow document must be a mapping", where=args.file)
    problems = validate_document(doc, require_output_contracts=args.require_output_contracts)
    if args.json:
        print_json({"valid": not problems, "problems": [
            {"code": p.code, "node": p.node, "message": p.message} for p in problems]})
    elif problems:
        for p in problems:
            print(f"{args.file}: {p} [{p.code}]")
        print(f"{len(problems)} problem(s): invalid")
    else:
        print(f"{args.file}: valid workflow {doc.get('name')!r} ({len(doc.get('nodes', []))} nodes)")
    return 1 if problems else 0


def _export(args: argparse.Namespace) -> int:
    from alas_argo.engines.rendering import load_definitions

    out = check_output_file(args.out) if args.out else None
    builders = load_definitions(args.workflows)
    if args.name not in builders:
        raise InputError(f"unknown workflow {args.name!r} (shipped: {', '.join(sorted(builders))})",
                         where="alas ir export")
    doc = builders[args.name]().to_json()
    if args.format == "yaml":
        import yaml

        text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    else:
        text = json.dumps(doc, indent=2) + "\n"
    if out is None:
        print(text, end="")
        return 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as e:
        raise write_refused(e, "cannot write", str(out)) from None
    print(f"{args.name} -> {out}", file=sys.stderr)
    return 0


def _bench_runtime(args: argparse.Namespace) -> int:
    from alas_argo.benchmarks.runtime import report

    doc = report(args.nodes, args.tasks, args.seconds, args.repeats)
    if args.json:
        print_json(doc)
        return 0
    print(f"cpu count {doc['cpu_count']}, load average (1 min) {doc['load_average_1m']}")
    print("overhead (no-op nodes, thread pool):")
    for o in doc["overhead"]:
        print(f"  {o['shape']:<6} {o['nodes']:>6} nodes  run {o['run_ms']:>9.2f} ms  "
              f"{o['ms_per_node']:.4f} ms/node  (validation {o['validate_ms']:.2f} ms)")
    print(f"  target <= {doc['target_ms_per_node']} ms/node: {'met' if doc['overhead_target_met'] else 'MISSED'}")
    print("parallel speed-up (independent CPU-bound nodes):")
    for s in doc["speedup"]:
        print(f"  {s['pool']:<7} x{s['workers']}  {s['tasks']} tasks  wall {s['wall_s']:.3f} s  "
              f"cpu {s['cpu_s']:.3f} s  busy cores {s['busy_cores']:.2f}  processes {s['distinct_pids']}")
    print(f"  process pool speed-up 2 workers over 1: {doc['process_speedup_2_over_1']:.2f}x")
    return 0


def register(commands: Commands) -> None:
    """Add this module's commands."""
    commands.group("ir", help="The workflow IR: its JSON Schema, validation and the shipped workflows as IR documents.")
    commands.add("schema", _schema, group="ir", help="Print the JSON Schema of a workflow document.")
    v = commands.add("validate", _validate, group="ir",
                     help="Validate a workflow (JSON or YAML): exit 0 valid, 1 invalid, 2 unreadable.")
    v.add_argument("file", help="workflow document (.json, .yaml, .yml)")
    v.add_argument("--require-output-contracts", action="store_true",
                   help="also require an output contract on every task and map node")
    v.add_argument("--json", action="store_true", help="print the verdict as JSON")
    e = commands.add("export", _export, group="ir",
                     help="Print a shipped workflow (alas-plan, alas-repair, alas-bench) as an IR document.",
                     description="Export a shipped workflow definition as the IR document `alas ir validate` reads: "
                     "the canonical form the Argo and ASL compilers start from, to inspect, diff or edit.")
    e.add_argument("name", metavar="NAME", help="workflow name, e.g. alas-plan")
    e.add_argument("--format", choices=["json", "yaml"], default="json", help="document format (default json)")
    e.add_argument("-o", "--out", metavar="FILE", help="write the document here instead of printing it")
    e.add_argument("--workflows", metavar="DIR", help="directory of other IR definitions (default: the shipped ones)")
    b = commands.add("runtime", _bench_runtime, group="bench",
                     help="Local runtime overhead per node and parallel speed-up on a process pool.")
    b.add_argument("--nodes", type=whole(1, MAX_REPEATS), default=500,
                   help="no-op nodes per overhead workflow (default 500)")
    b.add_argument("--repeats", type=whole(1, MAX_REPEATS), default=3,
                   help="runs per configuration; the best is reported (default 3)")
    b.add_argument("--tasks", type=whole(1, MAX_REPEATS), default=4,
                   help="CPU-bound nodes in the speed-up run (default 4)")
    b.add_argument("--seconds", type=seconds, default=0.25,  # 1e20 ran until killed
                   help="CPU seconds per CPU-bound node (default 0.25)")
    b.add_argument("--json", action="store_true", help="print the figures as JSON")
