"""The roles `alas step` runs in the cluster, one handler per step kind (see :mod:`alas_argo.steps`).

The pipeline's roles (blueprint, job-agent, supervisor, revalidate, optimizer, commit, disrupt, repairer, ...)
are the local pipeline's own handlers (:mod:`alas_argo.pipeline.stepping`). Here are the rest: compensation
(the exit handler and the compensation steps), the benchmark fan-out, the IR's choice and parallel nodes,
and ``supervise`` / ``controller``, the step kinds of the cluster workflow before the single definition
(kept so that templates rendered before it still run on a newer image).
"""

from __future__ import annotations

import json
from typing import Any

from alas_argo.agents.contracts import JobProposal
from alas_argo.agents.registry import Role, default_registry
from alas_argo.agents.roles import RepairerRole, ValidatorRole
from alas_argo.errors import ContractError, InputError
from alas_argo.jssp.catalog import suite
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.execution import ExecutionState, OpStatus
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import Event, EventType
from alas_argo.metrics import (
    PolicyEvent,
    RunOutcome,
    count_plan_committed,
    count_policy_event,
    count_run_outcome,
    observe_repair_record,
)
from alas_argo.pipeline.stepping import PIPELINE_STEPS, recorded_instance
from alas_argo.step_context import Handler, StepContext, StepOutput, holds

__all__ = ["HANDLERS"]


def _compact(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def _spec(ctx: StepContext) -> dict[str, Any]:
    limit = float(ctx.run_input("time-limit", "10"))
    return {"seed": 0, "workers": 1, "time_limit": limit, "method": ctx.input.params.get("method", "lcrp"),
            "budget": float(ctx.input.params.get("budget", limit))}


def _instance(ctx: StepContext) -> Instance:
    return recorded_instance(ctx.log)


def supervise(ctx: StepContext) -> StepOutput:
    """Merge every job agent's proposal into one plan."""
    inst = _instance(ctx)
    name = next(n for n, ref in ctx.input.inputs.items() if isinstance(ref, list))
    proposals = [JobProposal.model_validate(p["doc"]) for p in ctx.dep(name)]
    # One proposal per job, no more, no less: a merge over a partial set would silently plan the missing jobs
    # itself (an engine that lost the fan-out's outputs once did exactly that).
    jobs = sorted(p.job for p in proposals)
    if jobs != list(range(len(inst.jobs))):
        missing = sorted(set(range(len(inst.jobs))) - set(jobs))
        raise ContractError(f"{len(proposals)} job proposals for {len(inst.jobs)} jobs (missing {missing[:10]}, "
                            f"duplicated {sorted({j for j in jobs if jobs.count(j) > 1})[:10]})",
                            where=f"node {ctx.input.node}")
    merged: Schedule = default_registry().create(Role.SUPERVISOR, ctx.run_input("planner", "heuristic"),
                                                 _spec(ctx)).agent.merge(inst, proposals)
    ctx.log.append(EventType.PLAN_PROPOSED, node_id=ctx.input.node,
                   payload={"makespan": merged.makespan, "proposals": len(proposals)})
    return StepOutput({"plan": merged.to_json(), "makespan": merged.makespan})


def _commit(ctx: StepContext, plan: Schedule, reason: str, meta: dict[str, Any]) -> int:
    # A pod killed between commit and output record must not commit twice when retried: the commit's key
    # ("/" cannot occur in a run id, so it never meets the pipeline's "<run>:<node>" keys) makes it once-only.
    return ctx.log.commit_plan(plan.to_json(), node_id=ctx.input.node, reason=reason,
                               meta={**meta, "scope": ctx.input.scope, "node": ctx.input.node},
                               idempotency_key=f"step/{ctx.input.scope}/{ctx.input.node}")


def _patch(inst: Instance, plan: Schedule, disruption: Disruption | None, baseline: Schedule | None) -> Schedule:
    repairer = RepairerRole("lcrp")
    if disruption is None or baseline is None:
        return repairer.patch(inst, plan)
    state = ExecutionState.at(inst, baseline, disruption)
    base = baseline.by_key()
    fixed = {k: (base[k].start, base[k].start + state.durations[k]) for k in state.frozen}
    min_starts = {k: state.release[k] for k in state.keys(OpStatus.INTERRUPTED, OpStatus.PENDING)}
    return repairer.patch(inst, plan, release=disruption.time, fixed=fixed, min_starts=min_starts,
                          downtimes=state.downtimes, durations=state.durations)


def controller(ctx: StepContext) -> StepOutput:
    """Validate a plan against the log and repair it: patch on violations, LCRP for a disruption; commit
    it as a new version once valid. One call is one iteration of the validate -> repair loop."""
    inst, mode = _instance(ctx), ctx.input.params.get("mode", "commit")
    disruption = baseline = None
    metrics: dict[str, Any] = {}
    if mode == "repair":
        name = ctx.input.params.get("disruption_from", "disrupt")
        d = ctx.dep(name)["doc"]
        if d.get("disruption") is None:
            current = ctx.log.current_plan()
            return StepOutput({"valid": True, "skipped": True, "version": current[0] if current else None})
        disruption = Disruption.model_validate(d["disruption"])
        baseline = Schedule.model_validate(ctx.log.plan(int(d["baseline_version"])))
    if ctx.previous is not None:
        plan = Schedule.model_validate(ctx.previous["plan"])
        metrics = ctx.previous.get("metrics", {})
    elif mode == "repair":
        assert disruption is not None and baseline is not None
        repairer = RepairerRole(ctx.input.params.get("method", ctx.run_input("method", "lcrp")),
                                budget=float(ctx.run_input("time-limit", "10")), workers=1)
        ctx.log.append(EventType.REPAIR_STARTED, node_id=ctx.input.node, payload={"method": repairer.method})
        result = repairer.repair_disruption(inst, baseline, disruption)
        plan, metrics = result.schedule, result.metrics()
        ctx.log.append(EventType.REPAIR_FINISHED, node_id=ctx.input.node, payload={"metrics": metrics})
        observe_repair_record(metrics)
    else:
        plan = Schedule.model_validate(ctx.dep(ctx.input.params.get("source", "supervise"))["doc"]["plan"])
    report = ValidatorRole().check(inst, plan, disruption=disruption, baseline=baseline)
    ctx.log.append(EventType.VALIDATION_PASSED if report.valid else EventType.VALIDATION_FAILED,
                   node_id=ctx.input.node, payload={"report": report.to_json(), "iteration": ctx.iteration})
    if not report.valid:
        patched = _patch(inst, plan, disruption, baseline)
        return StepOutput({"valid": False, "plan": patched.to_json(), "metrics": metrics,
                           "violations": sorted({str(v.code) for v in report.violations})})
    version = _commit(ctx, plan, ctx.input.params.get("reason", mode), {"makespan": plan.makespan})
    count_plan_committed("repair" if mode == "repair" else "plan")
    return StepOutput({"valid": True, "version": version, "makespan": plan.makespan, "metrics": metrics})


def retract(ctx: StepContext, committed: dict[str, Any]) -> dict[str, Any]:
    """Compensation of a commit: a ``plan.retracted`` transition, after which the latest version that is not
    retracted is in force again, or none (the log is never edited; retracting twice changes nothing)."""
    version = committed.get("version")
    if not isinstance(version, int):
        return {"retracted": None}
    ctx.log.retract(version, node_id=ctx.input.node, reason=f"compensation of v{version} ({ctx.input.scope})")
    return {"retracted": version, "restored": ctx.log.current_version()}


COMPENSATORS = {"retract": retract}


def _compensate_node(ctx: StepContext, events: list[Event], node: str, comp: dict[str, Any]) -> dict[str, Any] | None:
    """Undo what saga step ``node`` committed in this workflow (``ctx.input.scope``), at most once: None when
    it committed nothing here or was compensated already (by the exit handler or a compensation step)."""
    scope = ctx.input.scope
    if any(e.type is EventType.COMPENSATION_FINISHED and e.payload.get("node") == node
           and e.payload.get("scope") == scope for e in events):
        return None
    done = [e for e in events if e.type is EventType.NODE_SUCCEEDED and e.node_id == node
            and e.payload.get("scope") == scope]
    if not done:
        return None
    handler = COMPENSATORS.get(str(comp.get("role")))
    if handler is None:
        raise InputError(f"no compensation handler {comp.get('role')!r}", where=f"node {comp.get('node')}")
    ctx.log.append(EventType.COMPENSATION_STARTED, node_id=comp["node"], payload={"node": node, "scope": scope})
    result = handler(ctx, ctx.read(str(done[-1].payload["key"]))["doc"])
    ctx.log.append(EventType.COMPENSATION_FINISHED, node_id=comp["node"],
                   payload={"node": node, "scope": scope, "result": result})
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
    out = []
    for node in dict.fromkeys(str(e.node_id) for e in reversed(committed)):
        result = _compensate_node(ctx, events, node, ctx.input.compensations[node])
        if result is not None:
            out.append(result)
    return out


def compensation_step(ctx: StepContext) -> StepOutput:
    """A compensation node run as its own step (``alas step retract --compensates commit-plan``): undo what
    the nodes it compensates committed in this workflow, latest first, each at most once (the exit handler
    and this step share the log's compensation records)."""
    events = ctx.log.events()
    comp = {"node": ctx.input.node, "role": ctx.input.kind}
    out = [r for node in reversed(ctx.input.compensates) if (r := _compensate_node(ctx, events, node, comp))]
    return StepOutput({"compensated": out})


def bench_plan(ctx: StepContext) -> StepOutput:
    """The benchmark cases: suite x scenarios x seeds, as a short list Argo fans out over."""
    names = suite(ctx.run_input("suite"))
    cases = [{"instance": n, "scenario": s, "seed": int(seed)} for n in names
             for s in ctx.json_input("scenarios", ["none"]) for seed in ctx.json_input("seeds", [0])]
    return StepOutput({"cases": cases}, {"cases": _compact(cases)})


def bench_case(ctx: StepContext) -> StepOutput:
    """One benchmark case: the whole local pipeline for one instance, scenario and seed, in its own run."""
    from alas_argo.log import ExecutionLog
    from alas_argo.pipeline import run_pipeline
    from alas_argo.pipeline.parameters import config_from_parameters

    case = ctx.input.item if isinstance(ctx.input.item, dict) else json.loads(str(ctx.input.item))
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
    name = next(n for n, ref in ctx.input.inputs.items() if isinstance(ref, list))
    rows = [r["doc"] for r in ctx.dep(name)]
    valid = [r for r in rows if r.get("final_valid")]
    summary = {"cases": len(rows), "valid": len(valid),
               "mean_makespan": round(sum(r["makespan_after"] for r in valid) / len(valid), 2) if valid else None,
               "failed": [r["run_id"] for r in rows if not r.get("final_valid")][:20]}
    return StepOutput({"summary": summary, "rows": rows}, {"summary": _compact(summary)})


def choose(ctx: StepContext) -> StepOutput:
    """A choice node: the first branch whose condition holds on the dependency outputs (or run inputs)."""
    spec = ctx.input.choices or {}

    def value(path: str) -> Any:
        root, *rest = path.split(".")
        doc: Any = dict(ctx.input.run_inputs) if root == "inputs" else ctx.dep(root)["doc"]
        for part in rest:
            doc = doc.get(part) if isinstance(doc, dict) else None
        return doc

    for branch in spec.get("choices", []):
        cond = branch["when"]
        if holds({**cond, "path": "output.v"}, {"v": value(cond["path"])}):
            return StepOutput({"branch": branch["next"]}, {"branch": branch["next"]})
    taken = spec.get("default") or ""
    return StepOutput({"branch": taken or None}, {"branch": taken})


def gather(ctx: StepContext) -> StepOutput:
    """A parallel node: its branches' output keys by branch id."""
    return StepOutput({"branches": {b: ctx.input.inputs.get(b) for b in ctx.input.branches}})


HANDLERS: dict[str, Handler] = {
    "choose": choose, "gather": gather,
    "supervise": supervise, "controller": controller, "compensate": compensate, "bench-plan": bench_plan,
    "bench-case": bench_case, "aggregate": aggregate,
    # Every compensation role is a step kind too: the compiler renders a template per compensation node.
    **{role: compensation_step for role in COMPENSATORS},
    **PIPELINE_STEPS,
}
