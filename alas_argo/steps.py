"""Container entrypoints: what every Argo template runs, as ``alas step <kind> ...``.

A step reads its inputs from the execution log (S3 in the cluster, a directory locally), runs one role,
writes its output back to the log as an idempotency record keyed by ``(scope, node, item)``, and writes the
Argo output parameters (log keys and short lists, never plans) as files. A retried pod finds its earlier
record and returns it instead of acting twice. Exit codes (via the CLI): 0 ok, 75 transient (Argo's
retryStrategy retries it), 2 / 1 permanent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import AlasError, ContractError, InputError, LoopGuardTripped
from alas_argo.log import EventType, ExecutionLog, Store

__all__ = ["Handler", "StepContext", "StepInput", "StepOutput", "holds", "output_key", "run_step", "write_outputs"]


class StepInput(BaseModel):
    """Everything a step is told on its command line."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="Step kind (the IR role): blueprint, job-agent, supervise, controller, ...")
    node: str = Field(description="IR node id.")
    run_id: str = Field(description="Run whose log the step reads and writes.")
    scope: str = Field(description="The workflow object (Argo's workflow.name): output records are keyed by it.")
    params: dict[str, Any] = Field(default_factory=dict, description="The node's static params.")
    run_inputs: dict[str, str] = Field(default_factory=dict, description="Workflow parameters.")
    inputs: dict[str, Any] = Field(default_factory=dict, description="Dependency id -> log key (or list).")
    candidates: list[str] = Field(default_factory=list, description="any_of candidates (found in the log).")
    item: Any = Field(None, description="The map item this pod handles.")
    loop_until: dict[str, Any] | None = Field(None, description="Loop condition on the output.")
    max_iters: int = Field(1, ge=1, description="Loop guard: iterations.")
    loop_deadline: float | None = Field(None, gt=0, description="Loop guard: seconds from the first iteration.")
    choices: dict[str, Any] | None = Field(None, description="A choice node's branches and default.")
    branches: list[str] = Field(default_factory=list, description="A parallel node's branches.")
    compensations: dict[str, Any] = Field(default_factory=dict, description="Node -> its compensation.")
    compensates: list[str] = Field(default_factory=list,
                                   description="Saga steps a compensation node undoes (compensation steps).")
    status: str | None = Field(None, description="Workflow status (exit handler).")
    idempotency_key: str | None = Field(None, description="Rendered idempotency key of the node.")
    output_contract: dict[str, Any] | None = Field(None, description="JSON Schema the output must satisfy.")
    repair: dict[str, Any] | None = Field(None, description="The node's repair spec (IR RepairSpec): after a "
                                          "permanent failure the step escalates to its patch role, then its replan "
                                          "role.")


@dataclass
class StepOutput:
    """The output document (stored in the log) and the Argo output parameters (written as files)."""

    doc: dict[str, Any]
    params: dict[str, str] = field(default_factory=dict)


def output_key(scope: str, node: str, item: Any = None) -> str:
    """The log key of a node's (or a map item's) output record."""
    suffix = "" if item is None else f"/{json.dumps(item, sort_keys=True, separators=(',', ':'))}"
    return f"output/{scope}/{node}{suffix}"


class StepContext:
    """What a step handler sees: its input, the log, and readers for dependency outputs."""

    def __init__(self, inp: StepInput, store: Store, log: ExecutionLog) -> None:
        self.input, self.store, self.log = inp, store, log
        self.previous: dict[str, Any] | None = None
        self.iteration = 0
        #: "run", or the escalation level being tried ("patch", "replan").
        self.level = "run"
        #: The error being recovered from, at an escalation level.
        self.failure: AlasError | None = None

    def read(self, key: str) -> dict[str, Any]:
        """The output record stored under ``key``."""
        doc = self.log.idempotency_get(key)
        if doc is None:
            raise InputError(f"no output recorded under {key!r}", where=f"run {self.log.run_id}")
        return doc

    def dep(self, name: str) -> Any:
        """Output of dependency ``name``: one document, or a list for a map (Argo aggregates the keys)."""
        if name not in self.input.inputs:
            raise InputError(f"step {self.input.node} has no input {name!r}", where=f"node {self.input.node}")
        ref = self.input.inputs[name]
        if isinstance(ref, list):
            return [self.read(r["key"] if isinstance(r, dict) else r) for r in ref]
        return self.read(ref)

    def candidate(self) -> tuple[str, dict[str, Any]]:
        """(id, output) of the any_of candidate that ran, in declared order."""
        for c in self.input.candidates:
            doc = self.log.idempotency_get(output_key(self.input.scope, c))
            if doc is not None:
                return c, doc
        raise InputError("no any_of candidate has an output", where=f"node {self.input.node}")

    def run_input(self, name: str, default: str | None = None) -> str:
        """A workflow parameter (InputError when missing and no default)."""
        value = self.input.run_inputs.get(name, default)
        if value is None:
            raise InputError(f"missing workflow parameter {name!r}", where=f"node {self.input.node}")
        return value

    def json_input(self, name: str, default: Any) -> Any:
        """A workflow parameter holding JSON."""
        raw = self.input.run_inputs.get(name)
        if raw in (None, ""):
            return default
        try:
            return json.loads(str(raw))
        except json.JSONDecodeError as e:
            raise InputError(f"workflow parameter {name!r} is not JSON: {e.msg}", where=f"node {self.input.node}") \
                from None


Handler = Callable[[StepContext], StepOutput]


def holds(cond: dict[str, Any], doc: dict[str, Any]) -> bool:
    """An IR condition (path rooted at ``output``) on a step's output."""
    value: Any = {"output": doc}
    for part in str(cond["path"]).split("."):
        if not isinstance(value, dict) or part not in value:
            return bool(cond.get("negate"))  # a missing path is false for every op, exists included
        value = value[part]
    op, rhs = cond.get("op", "eq"), cond.get("value")
    ops: dict[str, Callable[[], bool]] = {
        "eq": lambda: value == rhs, "ne": lambda: value != rhs, "lt": lambda: value < rhs,
        "le": lambda: value <= rhs, "gt": lambda: value > rhs, "ge": lambda: value >= rhs,
        "in": lambda: value in (rhs or []), "exists": lambda: True, "truthy": lambda: bool(value)}
    return ops[op]() != bool(cond.get("negate"))


def _check_contract(inp: StepInput, doc: dict[str, Any]) -> None:
    if inp.output_contract is None:
        return
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(inp.output_contract).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "output"
        raise ContractError(f"output breaks the node's contract at {where}: {error.message}", where=f"node {inp.node}")


def _failed(log: ExecutionLog, inp: StepInput, e: AlasError) -> None:
    log.append(EventType.NODE_FAILED, node_id=inp.node, payload={
        "scope": inp.scope, "error": type(e).__name__, "message": str(e), "transient": e.transient})


def _escalate(inp: StepInput, table: dict[str, Handler], ctx: StepContext, error: AlasError) -> StepOutput:
    """The IR's escalation ladder after the retry level, as the local runtime climbs it: the repair spec's
    patch role, then its replan role, each logged as ``recovery.escalated``. Argo's retryStrategy is the
    retry level; it retries transient failures only (a permanent one fails the same way again), so a
    permanent failure escalates at once, inside the same pod.

    Raises:
        AlasError: The last level failed too.
    """
    spec = inp.repair or {}
    ladder = [("patch", spec.get("patch"), int(spec.get("maxPatches", 1))),
              ("replan", spec.get("replan"), int(spec.get("maxReplans", 1)))]
    previous = "retry"
    for level, role, tries in ladder:
        if not role:
            continue
        ctx.log.append(EventType.RECOVERY_ESCALATED, node_id=inp.node, payload={
            "from": previous, "to": level, "error": f"{type(error).__name__}: {error}", "scope": inp.scope})
        previous = level
        kind = str(role).replace("_", "-")
        if kind not in table:
            raise InputError(f"no step kind {kind!r} for the {level} level", where=f"node {inp.node}")
        for _ in range(tries):
            ctx.level, ctx.failure, ctx.previous = level, error, None
            try:
                out = table[kind](ctx)
                _check_contract(inp, out.doc)
                return out
            except AlasError as e:
                if e.transient:
                    raise  # Argo retries the pod: the ladder starts again from the recorded state
                error = e
    raise error


def run_step(inp: StepInput, store: Store, handlers: dict[str, Handler] | None = None) -> StepOutput:
    """Run one step: reuse its recorded output, or run its handler (looping under the guard) and record it.

    Raises:
        AlasError: The handler's failure (TransientError for retryable ones); it is logged as node.failed.
    """
    from alas_argo.step_handlers import HANDLERS

    table = handlers if handlers is not None else HANDLERS
    if inp.kind not in table:
        raise InputError(f"unknown step kind {inp.kind!r} (known: {', '.join(sorted(table))})", where="alas step")
    log = ExecutionLog(store, inp.run_id, correlation_id=inp.scope)
    key = output_key(inp.scope, inp.node, inp.item)
    recorded = log.idempotency_get(key)
    if recorded is not None:
        log.append(EventType.NODE_IDEMPOTENT_HIT, node_id=inp.node, payload={"key": key, "scope": inp.scope})
        return StepOutput(recorded["doc"], {**recorded["params"], "key": key})
    idem = None if inp.idempotency_key is None else f"idempotency/{inp.idempotency_key}"
    if idem is not None and (done := log.idempotency_get(idem)) is not None:
        # The node already ran under this key (another workflow of the run): reuse its result, act never again.
        log.idempotency_put(key, done)
        log.append(EventType.NODE_IDEMPOTENT_HIT, node_id=inp.node, payload={"key": key, "scope": inp.scope,
                                                                         "idempotency_key": inp.idempotency_key})
        return StepOutput(done["doc"], {**done["params"], "key": key})
    ctx = StepContext(inp, store, log)
    started = time.monotonic()
    log.append(EventType.NODE_STARTED, node_id=inp.node, payload={"kind": inp.kind, "scope": inp.scope,
                                                                   "item": inp.item})
    try:
        out = table[inp.kind](ctx)
        while inp.loop_until is not None and not holds(inp.loop_until, out.doc):
            ctx.iteration += 1
            late = inp.loop_deadline is not None and time.monotonic() - started > inp.loop_deadline
            if ctx.iteration >= inp.max_iters or late:
                log.append(EventType.LOOP_GUARD_TRIPPED, node_id=inp.node, payload={"iterations": ctx.iteration})
                raise LoopGuardTripped(f"loop did not finish in {ctx.iteration} iterations"
                                       + (" (deadline)" if late else ""),
                                       where=f"node {inp.node}")
            ctx.previous = out.doc
            out = table[inp.kind](ctx)
        _check_contract(inp, out.doc)
    except AlasError as failed:
        try:
            if inp.repair is None or failed.transient:
                raise
            out = _escalate(inp, table, ctx, failed)
        except AlasError as e:
            _failed(log, inp, e)
            raise
    record = log.idempotency_claim(key, {"doc": out.doc, "params": out.params})
    won = record["result"]
    if idem is not None:
        log.idempotency_put(idem, won)
    # Naming the record's hash ties the output record into the hash chain: verify then detects a record
    # that was deleted or replaced, with or without a key.
    done = {"key": key, "scope": inp.scope, "item": inp.item}
    if isinstance(record.get("hash"), str):
        done["record_hash"] = record["hash"]
    log.append(EventType.NODE_SUCCEEDED, node_id=inp.node, payload=done)
    return StepOutput(won["doc"], {**won["params"], "key": key})


def write_outputs(directory: str | Path, out: StepOutput) -> None:
    """Write each output parameter to ``directory/<name>`` (temp file + rename, so Argo never reads half)."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    for name, value in out.params.items():
        tmp = root / f".{name}.tmp"
        tmp.write_text(value, encoding="utf-8")
        tmp.replace(root / name)
