"""The roles `alas step` runs in the cluster, one handler per step kind (see :mod:`alas_argo.steps`).

The pipeline's roles (blueprint, job-agent, supervisor, revalidate, optimizer, commit, disrupt, repairer, ...)
are the local pipeline's own handlers (:mod:`alas_argo.pipeline.stepping`). Here are the rest: compensation
(the exit handler and the compensation steps), the benchmark fan-out, and the IR's choice and parallel nodes.
The step kinds of the cluster workflow before the single definition (``supervise``, ``controller``) are gone:
no rendered template runs them, so a template rendered before the single definition needs an image of its time.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from alas_argo.errors import InputError, PermanentError
from alas_argo.jssp.catalog import suite
from alas_argo.log import Event, EventType
from alas_argo.metrics import PolicyEvent, RunOutcome, count_policy_event, count_run_outcome
from alas_argo.pipeline.stages import retract_committed
from alas_argo.pipeline.stepping import PIPELINE_STEPS
from alas_argo.runtime.policies import MISSING, error_names, primary_error_name
from alas_argo.step_context import Handler, StepContext, StepOutput, holds

__all__ = ["HANDLERS"]


def _compact(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def retract(ctx: StepContext, committed: dict[str, Any], *, node: str) -> dict[str, Any]:
    """Compensation of a commit, as compensation node ``node`` (the local saga's retraction: one wording)."""
    return retract_committed(ctx.log, committed, node_id=node)


COMPENSATORS = {"retract": retract}


def _finished(events: list[Event], node: str, scope: str, *, ok: bool) -> list[Event]:
    # "node": what images before the one wording wrote (a log they started may be compensated by a newer one).
    return [e for e in events if e.type is EventType.COMPENSATION_FINISHED
            and e.payload.get("compensates", e.payload.get("node")) == node and e.payload.get("scope") == scope
            and (e.payload.get("ok") is not False) is ok]


def _spent(tries: int, retry: dict[str, Any], names: Any) -> bool:
    """Whether a compensation failed ``tries`` times, the last with an error named ``names`` (None: not recorded,
    an older image), is not tried again: its policy's attempts are spent, or it does not retry that error."""
    if tries >= int(retry.get("max_attempts", 1)):
        return True
    return names is not None and not any(p == "*" or p in names for p in retry.get("retry_on") or [])


def _given_up(failed: list[Event], retry: dict[str, Any] | None) -> str | None:
    """Why a compensation that failed ``failed`` times in this workflow is not tried again, or None. Without a
    ``retry`` (a workflow rendered before compensations carried their policy) every attempt of the pod tries it
    again."""
    if retry is None or not failed:
        return None
    last = failed[-1].payload
    if not _spent(len(failed), retry, last.get("error_names")):
        return None
    if len(failed) >= int(retry.get("max_attempts", 1)):
        return f"{len(failed)} of {retry.get('max_attempts', 1)} attempts failed, the last with {last.get('error')}"
    return f"its policy does not retry {last.get('error')}"


def _compensate_node(ctx: StepContext, events: list[Event], node: str, comp: dict[str, Any]) -> dict[str, Any] | None:
    """Undo what saga step ``node`` committed in this workflow (``ctx.input.scope``), at most once: None when
    it committed nothing here or was compensated already (by the exit handler or a compensation step).

    One pod undoes every commit, and Argo retries the pod as a whole; each compensation keeps to its own
    policy (``comp["retry"]``), as the local saga runs it: its failures are counted in the log, and once its
    attempts are spent, or it failed with an error its policy does not retry, it fails as a PermanentError
    (not tried again, and not a reason to retry the pod)."""
    scope = ctx.input.scope
    # A finished compensation is done; one recorded as failed (ok false) is tried again by a retried pod.
    if _finished(events, node, scope, ok=True):
        return None
    done = [e for e in events if e.type is EventType.NODE_SUCCEEDED and e.node_id == node
            and e.payload.get("scope") == scope]
    if not done:
        return None
    handler = COMPENSATORS.get(str(comp.get("role")))
    if handler is None:
        raise InputError(f"no compensation handler {comp.get('role')!r}", where=f"node {comp.get('node')}")
    failed, retry = _finished(events, node, scope, ok=False), comp.get("retry")
    if (why := _given_up(failed, retry)) is not None:
        raise PermanentError(f"the compensation of {node} is not tried again: {why}", where=f"node {comp['node']}")
    # The payloads are the local saga's (alas_argo.runtime.saga), plus the workflow object (scope).
    ctx.log.append(EventType.COMPENSATION_STARTED, node_id=comp["node"], payload={"compensates": node, "scope": scope})
    try:
        result = handler(ctx, ctx.read(str(done[-1].payload["key"]))["doc"], node=str(comp["node"]))
    except Exception as e:
        error = f"{primary_error_name(e)}: {e}"
        with contextlib.suppress(Exception):  # recorded where the log answers; the error is what the step reports
            ctx.log.append(EventType.COMPENSATION_FINISHED, node_id=comp["node"],
                           payload={"compensates": node, "ok": False, "error": error,
                                    "error_names": sorted(error_names(e)), "scope": scope})
        if retry is not None and _spent(len(failed) + 1, retry, error_names(e)):
            raise PermanentError(f"the compensation of {node} failed for good: {error}",
                                 where=f"node {comp['node']}") from e
        raise
    ctx.log.append(EventType.COMPENSATION_FINISHED, node_id=comp["node"],
                   payload={"compensates": node, "ok": True, "result": result, "scope": scope})
    return {"node": node, **result}


def compensate(ctx: StepContext) -> StepOutput:
    """Exit handler: compensate this workflow's committed saga steps in reverse order, each at most once."""
    if ctx.input.status == "Succeeded":
        count_run_outcome(RunOutcome.SUCCEEDED)
        return StepOutput({"compensated": []})
    out = _compensate_all(ctx)
    for _ in out:
        count_policy_event(PolicyEvent.COMPENSATION)
    count_run_outcome(RunOutcome.COMPENSATED if out else RunOutcome.FAILED)
    return StepOutput({"compensated": out})


def _compensate_all(ctx: StepContext) -> list[dict[str, Any]]:
    events = ctx.log.events()
    committed = [e for e in events if e.type is EventType.NODE_SUCCEEDED and e.node_id in ctx.input.compensations
                 and e.payload.get("scope") == ctx.input.scope]
    return _undo_each(ctx, events, [(node, ctx.input.compensations[node])
                                    for node in dict.fromkeys(str(e.node_id) for e in reversed(committed))])


def _undo_each(ctx: StepContext, events: list[Event], undo: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Compensate each ``(node, compensation)`` in order. As the local saga does, a failing compensation is
    recorded and the rest still run; then the step fails with the first failure a compensation may still retry
    (so the pod is retried: what finished is not undone twice), else with the first failure."""
    out: list[dict[str, Any]] = []
    failures: list[Exception] = []
    for node, comp in undo:
        try:
            result = _compensate_node(ctx, events, node, comp)
        except Exception as e:
            failures.append(e)
            continue
        if result is not None:
            out.append(result)
    if failures:
        raise next((e for e in failures if not isinstance(e, PermanentError)), failures[0])
    return out


def compensation_step(ctx: StepContext) -> StepOutput:
    """A compensation node run as its own step (``alas step retract --compensates commit-plan``): undo what
    the nodes it compensates committed in this workflow, latest first, each at most once (the exit handler
    and this step share the log's compensation records)."""
    events = ctx.log.events()
    comp = {"node": ctx.input.node, "role": ctx.input.kind}
    undo = [(node, comp) for node in reversed(ctx.input.compensates)]
    return StepOutput({"compensated": _undo_each(ctx, events, undo)})


def bench_plan(ctx: StepContext) -> StepOutput:
    """The benchmark cases: suite x scenarios x seeds, as a short list Argo fans out over."""
    from alas_argo.pipeline.parameters import bench_cases

    cases = bench_cases(ctx.input.run_inputs, suite(ctx.run_input("suite")))
    return StepOutput({"cases": cases}, {"cases": _compact(cases)})


def _bench_case_item(item: Any) -> dict[str, Any]:
    """The case a bench-case pod was handed (an object, or its JSON text when Argo passed ``{{item}}`` unparsed):
    ``instance`` and ``scenario`` names and an integer ``seed``. Anything else is refused naming ``--item`` (a
    missing or mistyped item was a JSONDecodeError or KeyError traceback)."""
    if item is None:
        raise InputError("a bench-case step needs its case: --item {\"instance\": ..., \"scenario\": ..., "
                         "\"seed\": ...}", where="--item")
    if isinstance(item, str):
        with contextlib.suppress(json.JSONDecodeError):
            item = json.loads(item)
    if not isinstance(item, dict):
        raise InputError(f"a bench case is an object with instance, scenario and seed, got {str(item)[:80]!r}",
                         where="--item")
    for name in ("instance", "scenario"):
        if not isinstance(item.get(name), str) or not item[name]:
            raise InputError(f"the case's {name} must be a non-empty string, got {item.get(name)!r:.80}",
                             where=f"--item {name}")
    seed = item.get("seed")
    # bench_cases writes int seeds; a seed handed over as text ("4") is the same case.
    if isinstance(seed, bool) or not (isinstance(seed, int) or (isinstance(seed, str) and seed.isdecimal())):
        raise InputError(f"the case's seed must be a whole number, got {seed!r:.80}", where="--item seed")
    return item


def bench_case(ctx: StepContext) -> StepOutput:
    """One benchmark case: the whole local pipeline for one instance, scenario and seed, in its own run."""
    from alas_argo.log import ExecutionLog
    from alas_argo.pipeline import run_pipeline
    from alas_argo.pipeline.parameters import config_from_parameters

    case = _bench_case_item(ctx.input.item)
    # The workflow's parameters, as alas-plan reads them, with the case's instance, scenario and seed.
    config, _ = config_from_parameters(ctx.input.run_inputs, instance=case["instance"], seed=int(case["seed"]),
                                       disrupt=None if case["scenario"] == "none" else case["scenario"])
    sub = f"{ctx.log.run_id}.{case['instance']}.{case['scenario']}.{case['seed']}"
    summary = run_pipeline(config, ExecutionLog(ctx.store, sub)).summary()
    keep = ("instance", "status", "makespan_before", "makespan_after", "upper_bound", "final_valid",
            "moved_operations", "repair_method", "seconds")
    return StepOutput({"run_id": sub, "scenario": case["scenario"], "seed": case["seed"],
                       **{k: summary.get(k) for k in keep}})


def aggregate(ctx: StepContext) -> StepOutput:
    """Aggregate the benchmark cases into the summary the PlanRun status mirrors."""
    maps = ctx.map_deps()
    if not maps:
        raise InputError("aggregate needs a map dependency (the cases)", where=f"node {ctx.input.node}")
    name = maps[0]
    rows = [r["doc"] for r in ctx.dep(name)]
    valid = [r for r in rows if r.get("final_valid")]
    summary = {"cases": len(rows), "valid": len(valid),
               "mean_makespan": round(sum(r["makespan_after"] for r in valid) / len(valid), 2) if valid else None,
               "failed": [r["run_id"] for r in rows if not r.get("final_valid")][:20]}
    return StepOutput({"summary": summary, "rows": rows}, {"summary": _compact(summary)})


def choose(ctx: StepContext) -> StepOutput:
    """A choice node: the first branch whose condition holds on the dependency outputs (or run inputs)."""
    spec = ctx.input.choices or {}

    def decided(cond: dict[str, Any]) -> bool:
        # The rest of the path is resolved by `holds` (the runtime's own resolution): a missing key is missing,
        # not a null, so `exists` and `eq null` take the turn the local runtime takes.
        root, _, rest = str(cond.get("path", "")).partition(".")
        doc: Any = dict(ctx.input.run_inputs) if root == "inputs" else ctx.output(root)
        return holds({**cond, "path": f"output.{rest}" if rest else "output"}, doc)

    for branch in spec.get("choices", []):
        if decided(branch["when"]):
            return StepOutput({"branch": branch["next"]}, {"branch": branch["next"]})
    taken = spec.get("default") or ""
    return StepOutput({"branch": taken or None}, {"branch": taken})


def gather(ctx: StepContext) -> StepOutput:
    """A parallel node: its branches' outputs by branch id, None for a branch that did not run, as the local
    runtime gives them (a choice or a role reading ``<parallel>.<branch>...`` decides alike on both engines).
    A branch is read from the log, whether or not it was handed over: a gated one is not, and may have run."""
    return StepOutput({b: None if (o := ctx.output(b)) is MISSING else o for b in ctx.input.branches})


HANDLERS: dict[str, Handler] = {
    "choose": choose, "gather": gather, "compensate": compensate, "bench-plan": bench_plan, "bench-case": bench_case,
    "aggregate": aggregate,
    # Every compensation role is a step kind too: the compiler renders a template per compensation node.
    **{role: compensation_step for role in COMPENSATORS},
    **PIPELINE_STEPS,
}
