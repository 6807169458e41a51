"""`alas step KIND ...`: the container entrypoint of every Argo template (see alas_argo.steps)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from alas_argo import json_limits
from alas_argo.cli.app import Commands
from alas_argo.errors import AlasError, InputError, TransientError, first_error, write_refused
from alas_argo.settings import load_settings

if TYPE_CHECKING:
    from alas_argo.log import Store

__all__ = ["register"]


#: StepInput fields whose flag is not the field's name.
_FLAGS = {"run_inputs": "run-input", "inputs": "input"}


def _json(text: str | None, what: str, default: Any) -> Any:
    if text in (None, ""):
        return default
    try:
        return json_limits.loads(str(text))
    except json.JSONDecodeError as e:
        raise InputError(f"{what} is not JSON: {e.msg}", where=f"--{what}") from None


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise InputError(f"expected NAME=VALUE, got {item!r}", where=f"--{what}")
        out[name] = value
    return out


def _step(args: argparse.Namespace) -> int:
    from alas_argo.log import open_store
    from alas_argo.steps import StepInput, item_value, output_key, run_step, write_outputs

    # A list of keys (JSON text) is what a workflow rendered before --mapped handed over a map's outputs.
    inputs: dict[str, Any] = {k: (item_value(v) if v.startswith("[") else v)
                              for k, v in _pairs(args.input, "input").items()}
    scope = args.scope or args.run_id
    # A repair ladder's output is recorded under its node by whichever rung succeeded: exactly one exists.
    inputs.update({node: output_key(scope, node) for node in args.recorded})
    # Validated from a mapping, so the bounds and the numbers' text are pydantic's to check: a bad value is one line
    # naming its flag (exit 2), not a traceback.
    fields = dict(
        kind=args.kind, node=args.node or args.kind, run_id=args.run_id, scope=scope,
        params=_json(args.params, "params", {}), run_inputs=_pairs(args.run_input, "run-input"), inputs=inputs,
        mapped=_pairs(args.mapped, "mapped"), maybe=list(dict.fromkeys(args.maybe)),
        exports=list(dict.fromkeys(args.export)),
        candidates=[c for c in (args.candidates or "").split(",") if c],
        item=None if args.item is None else item_value(args.item),
        loop_until=_json(args.loop_until, "loop-until", None), max_iters=args.max_iters or 1,
        loop_deadline=args.loop_deadline.rstrip("s") if args.loop_deadline else None,
        choices=_json(args.choices, "choices", None), branches=[b for b in (args.branches or "").split(",") if b],
        compensations=_json(args.compensations, "compensations", {}), status=args.status,
        compensates=[c for c in (args.compensates or "").split(",") if c],
        idempotency_key=args.idempotency_key, output_contract=_json(args.output_contract, "output-contract", None),
        repair=_json(args.repair, "repair", None), rung=args.rung)
    try:
        inp = StepInput.model_validate(fields)
    except ValidationError as e:
        loc, msg = first_error(e)
        name = loc.split(".")[0]
        raise InputError(msg, where=f"--{_FLAGS.get(name, name.replace('_', '-'))}") from None
    settings = load_settings(store={"kind": args.store, "root": args.root})
    store = open_store(settings)
    try:
        out = run_step(inp, store)
    finally:
        _hand_on_metrics(store, args.kind)
    try:
        write_outputs(args.outputs, out)
    except OSError as e:  # the step's work is in the log: a retry records nothing twice and writes these again
        raise write_refused(e, "cannot write the step's output parameters", args.outputs) from None
    return 0


def _hand_on_metrics(store: Store, kind: str) -> None:
    """Leave what this pod counted for the controller to fold (alas_argo.metrics_outbox); never changes
    how the step ends."""
    from alas_argo.metrics_outbox import write_report

    try:
        write_report(store, source=f"step {kind}")
    except AlasError as e:
        sys.stderr.write(f"alas step: metrics not handed on: {e}\n")


def register(commands: Commands) -> None:
    """Add `alas step`."""
    # A stop request (SIGTERM: Kubernetes deleting, evicting or draining the pod) is transient for a step: it
    # is idempotent against the log, so running it again is safe, and Argo's retry expression retries exit 75.
    # With 143 the deleted pod's step failed the workflow unless Argo saw the pod vanish first (Error phase),
    # a race it lost once on the real cluster (tests/cluster/test_failures.py).
    p = commands.add("step", _step, stoppable=True, interrupted_exit=TransientError.exit_code,
                     help="Run one workflow step (the entrypoint of every Argo template).",
                     description="Run one step of a workflow: read inputs from the execution log, run the role, "
                     "record the output in the log, and write Argo output parameters to --outputs. Exit codes: "
                     "0 ok, 75 transient (retry; also when SIGTERM or SIGINT stopped the step: the pod was "
                     "deleted, evicted or drained), 2 or 1 permanent.")
    p.add_argument("kind", help="step kind: a pipeline role (blueprint, job-agent, supervisor, revalidate, "
                   "optimizer, commit, disrupt, repairer, ...), compensate, retract, bench-plan, bench-case, "
                   "aggregate, choose, gather")
    p.add_argument("--node", help="IR node id (default: the kind)")
    # Not checked when parsed: a rendered template holds "{{workflow.name}}" here, which Argo resolves; the log
    # checks the resolved id (exit 2 naming it).
    p.add_argument("--run-id", required=True, help="run whose log the step reads and writes")
    p.add_argument("--scope", help="workflow object name (default: the run id)")
    p.add_argument("--outputs", default="/tmp/outputs", help="directory for Argo output parameters")
    p.add_argument("--params", help="the node's static params (JSON)")
    p.add_argument("--run-input", action="append", default=[], metavar="NAME=VALUE", help="a workflow parameter")
    p.add_argument("--input", action="append", default=[], metavar="NODE=KEY", help="log key of a dependency")
    p.add_argument("--candidates", help="any_of candidates, comma-separated")
    p.add_argument("--item", help="the map item (JSON or text)")
    p.add_argument("--choices", help="choice branches and default (JSON)")
    p.add_argument("--branches", help="parallel branches, comma-separated")
    p.add_argument("--loop-until", help="loop condition on the output (JSON)")
    p.add_argument("--max-iters", help="loop guard: iterations")
    p.add_argument("--loop-deadline", help="loop guard: seconds (e.g. 600s)")
    p.add_argument("--compensations", help="node -> compensation (JSON; compensate step)")
    p.add_argument("--status", help="workflow status (compensate step)")
    p.add_argument("--compensates", help="saga steps this compensation undoes, comma-separated (retract step)")
    p.add_argument("--idempotency-key", help="the node's rendered idempotency key")
    p.add_argument("--output-contract", help="JSON Schema the output must satisfy")
    p.add_argument("--repair", help="the node's repair spec (JSON): after a permanent failure, run its patch role, "
                   "then its replan role")
    p.add_argument("--rung", choices=["patch", "replan"], help="run this level of the repair ladder (--repair) as "
                   "its own step, because the level below failed")
    p.add_argument("--recorded", action="append", default=[], metavar="NODE",
                   help="a dependency whose output is read from its record in the log (a repair ladder's, written "
                   "by whichever rung succeeded)")
    p.add_argument("--export", action="append", default=[], metavar="FIELD",
                   help="an output field also written as an output parameter (a gate or a map of the workflow reads "
                   "it): a string as itself, any other value as compact JSON")
    p.add_argument("--maybe", action="append", default=[], metavar="NODE",
                   help="a dependency whose output exists only if it ran (a gated node, one skipped on failure): "
                   "read from the log when recorded, left out otherwise, as the local runtime hands it")
    p.add_argument("--mapped", action="append", default=[], metavar="NODE=ITEMS",
                   help="a map dependency and the path of the list it fanned out over (SOURCE.PARAM or "
                   "inputs.NAME): its items' output keys are derived from that list, in item order")
    p.add_argument("--store", choices=["fs", "s3"], help="log backend (default: settings / ALAS_STORE__KIND)")
    p.add_argument("--root", help="directory of the fs store")
