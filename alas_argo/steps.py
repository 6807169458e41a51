"""Container entrypoints: what every Argo template runs, as ``alas step <kind> ...``.

A step reads its inputs from the execution log (S3 in the cluster, a directory locally), runs one role,
writes its output back to the log as an idempotency record keyed by ``(scope, node, item)``, and writes the
Argo output parameters (log keys and short lists, never plans) as files. A retried pod finds its earlier
record and returns it instead of acting twice. Exit codes (via the CLI): 0 ok, 75 transient (Argo's
retryStrategy retries it), 2 / 1 permanent.

The types a step shares with its handlers (input, output, context) live in :mod:`alas_argo.step_context`
and are re-exported here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import jsonschema

from alas_argo.errors import AlasError, ContractError, InputError, LoopGuardTripped, PermanentError
from alas_argo.log import EventType, ExecutionLog, Store
from alas_argo.step_context import (
    Handler,
    StepContext,
    StepInput,
    StepOutput,
    holds,
    item_value,
    output_key,
    param_value,
)

__all__ = ["Handler", "StepContext", "StepInput", "StepOutput", "holds", "item_value", "output_key", "run_step",
           "write_outputs"]


def _check_contract(inp: StepInput, doc: dict[str, Any]) -> None:
    if inp.output_contract is None:
        return
    # By the dialect its $schema names, as the local runtime's ContractChecker does (always 2020-12 here, a
    # draft-07 contract's list form of `items` crashed the pod with an AttributeError, exit 1).
    validator = jsonschema.validators.validator_for(inp.output_contract)(inp.output_contract)
    error = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "output"
        raise ContractError(f"output breaks the node's contract at {where}: {error.message}", where=f"node {inp.node}")


def _exported(inp: StepInput, out: StepOutput) -> StepOutput:
    """``out`` with each field the workflow reads from this node (``inp.exports``: a gate's or a map's) as an
    output parameter (:func:`param_value`), unless the role wrote it.

    Raises:
        ContractError: The output has no such field: Argo cannot decide a gate on a missing parameter (the local
            runtime reads it as missing: the gate is false), so the producer says which field it lacks.
    """
    params = dict(out.params)
    for name in inp.exports:
        if name in params:
            continue
        if not isinstance(out.doc, dict) or name not in out.doc:
            raise ContractError(f"the output has no field {name!r}, which the workflow reads from this node (a gate "
                                "or a map)", where=f"node {inp.node}")
        params[name] = param_value(out.doc[name])
    return StepOutput(out.doc, params)


def _failed(log: ExecutionLog, inp: StepInput, e: AlasError) -> None:
    log.append(EventType.NODE_FAILED, node_id=inp.node, payload={
        "scope": inp.scope, "error": type(e).__name__, "message": str(e), "transient": e.transient})


def _ladder(inp: StepInput) -> list[tuple[str, str, int]]:
    """(level, role, tries) of the node's repair spec after the retry level: patch, then replan."""
    spec = inp.repair or {}
    out = [("patch", spec.get("patch"), int(spec.get("maxPatches", 1))),
           ("replan", spec.get("replan"), int(spec.get("maxReplans", 1)))]
    return [(level, str(role), tries) for level, role, tries in out if role]


def _level(inp: StepInput, table: dict[str, Handler], ctx: StepContext, level: str, role: str, tries: int, *,
           previous: str, error: AlasError, why: str) -> StepOutput:
    """Climb to ``level`` (logged as ``recovery.escalated`` from ``previous``, citing ``why``) and run its role
    up to ``tries`` times, as the local runtime's recovery does.

    Raises:
        AlasError: Every try failed (the last error), or one failed transiently (Argo retries the pod).
    """
    events = ctx.log.events()
    # A retried pod of a rung finds its escalation already logged: the event says the level was reached, once.
    # (Not so for the in-pod ladder: the items of a map share the node, and each climbs its own.)
    if inp.rung is None or not any(
            e.type is EventType.RECOVERY_ESCALATED and e.node_id == inp.node and e.payload.get("to") == level
            and e.payload.get("scope") == inp.scope for e in events):
        ctx.log.append(EventType.RECOVERY_ESCALATED, node_id=inp.node, payload={
            "from": previous, "to": level, "error": why, "scope": inp.scope})
    kind = role.replace("_", "-")
    if kind not in table:
        raise InputError(f"no step kind {kind!r} for the {level} level", where=f"node {inp.node}")
    for _ in range(tries):
        ctx.level, ctx.failure, ctx.previous = level, error, None
        try:
            out = table[kind](ctx)
            _check_contract(inp, out.doc)
        except AlasError as e:
            if e.transient:
                raise  # Argo retries the pod: the ladder starts again from the recorded state
            error = e
            continue
        if level == "replan":
            # As the local runtime numbers them: the workflow's plan is version 1, each replan the next one.
            replans = [e for e in events if e.type is EventType.PLAN_PROPOSED and e.payload.get("reason") == "replan"
                       and e.payload.get("scope") == inp.scope]
            ctx.log.append(EventType.PLAN_PROPOSED, node_id=inp.node, payload={
                "version": len(replans) + 2, "reason": "replan", "scope": inp.scope})
        return out
    raise error


def _escalate(inp: StepInput, table: dict[str, Handler], ctx: StepContext, error: AlasError) -> StepOutput:
    """The IR's escalation ladder after the retry level, climbed in one pod (a map item's, or a template
    rendered before the ladder became DAG tasks): the repair spec's patch role, then its replan role.

    Raises:
        AlasError: The last level failed too.
    """
    previous = "retry"
    for level, role, tries in _ladder(inp):
        try:
            return _level(inp, table, ctx, level, role, tries, previous=previous, error=error,
                          why=f"{type(error).__name__}: {error}")
        except AlasError as e:
            if e.transient:
                raise
            error = e
        previous = level
    raise error


def _rung(inp: StepInput, table: dict[str, Handler], ctx: StepContext) -> StepOutput:
    """One rung of the ladder as its own Argo task (``--rung patch`` / ``--rung replan``): it runs because the
    rung below it failed, whose ``node.failed`` record in this workflow says why.

    Raises:
        AlasError: The rung failed (the next rung, if any, starts on it), or ``--rung`` names no level of the spec.
    """
    ladder = _ladder(inp)
    levels = [level for level, _, _ in ladder]
    if inp.rung not in levels:
        raise InputError(f"--rung {inp.rung!r} is not a level of the repair spec ({', '.join(levels) or 'none'})",
                         where=f"node {inp.node}")
    i = levels.index(inp.rung)
    level, role, tries = ladder[i]
    failed = [e for e in ctx.log.events() if e.type is EventType.NODE_FAILED and e.node_id == inp.node
              and e.payload.get("scope") == inp.scope]
    # A pod killed outright (SIGKILL, OOM) records no failure: the rung still climbs, saying so.
    why = (f"{failed[-1].payload.get('error')}: {failed[-1].payload.get('message')}" if failed
           else "unknown: the level below recorded no error (its pod was killed)")
    return _level(inp, table, ctx, level, role, tries, previous="retry" if i == 0 else levels[i - 1],
                  error=PermanentError(why, where=f"node {inp.node}"), why=why)


def run_step(inp: StepInput, store: Store, handlers: dict[str, Handler] | None = None) -> StepOutput:
    """Run one step: reuse its recorded output, or run its handler (looping under the guard) and record it.

    Raises:
        AlasError: The handler's failure (TransientError for retryable ones); it is logged as node.failed.
    """
    # Imported here: the handlers pull in the agents, the solver and the repair, which not every caller needs.
    from alas_argo.step_handlers import HANDLERS

    table = handlers if handlers is not None else HANDLERS
    if inp.kind not in table:
        raise InputError(f"unknown step kind {inp.kind!r} (known: {', '.join(sorted(table))})", where="alas step")
    log = ExecutionLog(store, inp.run_id, correlation_id=inp.scope)
    key = output_key(inp.scope, inp.node, inp.item)
    recorded = log.idempotency_get(key)
    if recorded is not None:
        log.append(EventType.NODE_IDEMPOTENT_HIT, node_id=inp.node, payload={"key": key, "scope": inp.scope})
        return _exported(inp, StepOutput(recorded["doc"], {**recorded["params"], "key": key}))
    idem = None if inp.idempotency_key is None else f"idempotency/{inp.idempotency_key}"
    if idem is not None and (done := log.idempotency_get(idem)) is not None:
        # The node already ran under this key (another workflow of the run): reuse its result, act never again.
        log.idempotency_put(key, done)
        log.append(EventType.NODE_IDEMPOTENT_HIT, node_id=inp.node, payload={"key": key, "scope": inp.scope,
                                                                         "idempotency_key": inp.idempotency_key})
        return _exported(inp, StepOutput(done["doc"], {**done["params"], "key": key}))
    ctx = StepContext(inp, store, log)
    started = time.monotonic()
    log.append(EventType.NODE_STARTED, node_id=inp.node, payload={"kind": inp.kind, "scope": inp.scope,
                                                                   "item": inp.item})
    try:
        out = _rung(inp, table, ctx) if inp.rung is not None else table[inp.kind](ctx)
        while inp.rung is None and inp.loop_until is not None and not holds(inp.loop_until, out.doc):
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
        out = _exported(inp, out)
    except AlasError as failed:
        try:
            if inp.repair is None or inp.rung is not None or failed.transient:
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
