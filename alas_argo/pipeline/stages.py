"""Layers 2-5 as handlers of the blueprint's nodes: agents, execution, revalidation, supervision.

The same handlers serve both engines: the local runtime calls them in process (``alas run``), and on a
cluster every pod of ``alas-plan`` / ``alas-repair`` calls one of them through
:mod:`alas_argo.pipeline.stepping`. Data flows through node outputs (JSON documents); plans that matter are
committed to the execution log as immutable versions. Validation and repair events carry what replay needs
to re-run them (see :mod:`alas_argo.log.replay`).
"""

from __future__ import annotations

import threading
from typing import Any

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import JobProposal
from alas_argo.agents.heuristic import HeuristicPlanner
from alas_argo.agents.registry import AgentRegistry, Instantiated, Role, default_registry
from alas_argo.errors import ContractError, InputError
from alas_argo.jssp.disruption import Disruption, carry_forward, generate_disruption
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.execution import ExecutionState, OpStatus
from alas_argo.jssp.faults import inject_faults
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import EventType, ExecutionLog
from alas_argo.metrics import RunOutcome, count_plan_committed, count_run_outcome, observe_repair_record
from alas_argo.pipeline.config import RunConfig, Variant
from alas_argo.runtime.context import Handler, NodeContext

__all__ = ["Stages", "instance_ref", "retract_committed"]

_OPTIMIZER_FOR = {"heuristic": "heuristic", "cpsat": "cpsat", "llm": "cpsat", "simulated": "cpsat"}
_LLM_PLANNERS = ("llm", "simulated")


def instance_ref(instance: Instance, config: RunConfig) -> dict[str, Any]:
    """How events refer to the instance: by bundled name when it is one, else the whole document."""
    from alas_argo.jssp.catalog import get_instance

    try:
        if get_instance(config.instance) == instance:
            return {"name": instance.name}
    except InputError:  # not a bundled name: the instance came from a file
        pass
    return instance.to_json()


def _plan(doc: dict[str, Any]) -> Schedule:
    return Schedule.model_validate(doc)


def _plan_out(schedule: Schedule, **extra: Any) -> dict[str, Any]:
    return {"plan": schedule.to_json(), "makespan": schedule.makespan, **extra}


def retract_committed(log: ExecutionLog, committed: Any, *, node_id: str) -> dict[str, Any]:
    """Compensation of a commit whose output is ``committed``, as node ``node_id``: a ``plan.retracted``
    transition worded alike on every engine (the local saga and the cluster's exit handler and compensation
    steps both call this). A commit that committed nothing (no integer version) retracts nothing."""
    version = committed.get("version") if isinstance(committed, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        return {"retracted": None}
    log.retract(version, node_id=node_id, reason=f"compensation of v{version}")
    return {"retracted": version, "restored": log.current_version()}


class Stages:
    """Handlers for every role of the ALAS workflow, bound to one run."""

    def __init__(self, config: RunConfig, instance: Instance, log: ExecutionLog, *,
                 disruptions: list[Disruption] | None = None, registry: AgentRegistry | None = None,
                 agent_spec: dict[str, Any] | None = None, scope: str | None = None) -> None:
        """Bind the handlers to one run.

        Args:
            config: The run's configuration.
            instance: The instance it plans.
            log: The run's execution log.
            disruptions: Disruptions given as documents (revealed in order), instead of generated ones.
            registry: The agent registry (default: the built-in one).
            agent_spec: Extra spec for the agent factory.
            scope: The workflow object a cluster step runs in (Argo's workflow name), or None locally: commits
                are once per run and node locally (a resumed run), once per workflow object on a cluster
                (every ``alas-repair`` of a run commits its own repair).
        """
        self.config = config
        self.scope = scope
        self.instance = instance
        self.log = log
        self.file_disruptions = disruptions or []
        self.registry = registry or default_registry()
        self.agent_spec = dict(agent_spec or {})
        self._agents: dict[Role, Instantiated] = {}
        self._lock = threading.Lock()
        self.contexts = build_job_contexts(instance)
        self.ref = instance_ref(instance, config)

    def _take_manual_plan(self) -> bool:
        """True once, for the first revalidation of a run resumed with a manual plan."""
        with self._lock:
            if "manual_plan" not in self.agent_spec or self.agent_spec.get("manual_plan_used"):
                return False
            self.agent_spec["manual_plan_used"] = True
            return True

    @property
    def llm_in_charge(self) -> bool:
        """LLM (or simulated) job agents and no optimizer: their merged proposals are the plan."""
        return self.config.planner in _LLM_PLANNERS and self.config.optimizer == "none"

    # -- the agent factory (layer 2) ---------------------------------------------------------------------

    def agent(self, role: Role) -> Any:
        """The agent of ``role``, instantiated on first use (so a resumed run gets them too)."""
        with self._lock:
            if role not in self._agents:
                backend = {Role.JOB_AGENT: self.config.planner, Role.SUPERVISOR: self.config.planner,
                           Role.VALIDATOR: "independent", Role.REPAIRER: "lcrp",
                           Role.OPTIMIZER: _OPTIMIZER_FOR.get(self.config.planner, self.config.planner)
                           if self.config.optimizer == "auto" else self.config.optimizer}[role]
                spec = {**self.agent_spec, "method": self.config.repair_method, "budget": self.config.repair_budget,
                        "effort": self.config.repair_effort, "tolerance": self.config.repair_tolerance,
                        "first_edit": self.config.repair_first_edit,
                        "seed": self.config.seed, "workers": self.config.workers,
                        "time_limit": self.config.time_limit, "deterministic": self.config.deterministic}
                self._agents[role] = self.registry.create(role, backend, spec)
            return self._agents[role].agent

    def handlers(self) -> dict[str, Handler]:
        """Role name -> handler, for the runtime."""
        return {"blueprint": self.blueprint, "agents": self.agents, "job_agent": self.job_agent,
                "supervisor": self.supervisor, "inject": self.inject, "revalidate": self.revalidate,
                "optimizer": self.optimizer, "commit": self.commit, "retract": self.retract,
                "disrupt": self.disrupt, "repairer": self.repairer, "repair_patch": self.repair_patch,
                "replan": self.replan, "finish": self.finish}

    # -- layer 1 and 2 -----------------------------------------------------------------------------------

    def blueprint(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """The problem: the instance's jobs (the fan-out list) and its size, and how many disruptions the run
        reveals (what the disruption segments' gates read)."""
        return {"instance": self.instance.name, "jobs": list(range(self.instance.num_jobs)),
                "operations": self.instance.num_operations, "size": self.instance.size, "revealed": self.revealed()}

    def agents(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Instantiate every role; report which backend each got and any fallback."""
        for role in Role:
            self.agent(role)
        return {str(r): inst.backend for r, inst in self._agents.items()} | {
            "notes": [n for inst in self._agents.values() for n in inst.notes]}

    # -- layer 3: execution ------------------------------------------------------------------------------

    def job_agent(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """One job agent proposes its operations from its bounded context."""
        job = int(ctx.item)
        if self.llm_in_charge:
            # The supervisor asks the agents in job order (feedback session): the map only lists them.
            return {"job": job, "operations": [], "deferred_to": "merge"}
        agent = self.agent(Role.JOB_AGENT)
        if self.config.planner not in _LLM_PLANNERS:
            proposal: JobProposal = agent.propose(self.contexts[job])
            return proposal.model_dump(mode="json")
        from alas_argo.agents.llm import is_unusable
        from alas_argo.agents.llm_client import LlmAuthError, LlmEndpointError

        try:
            proposal = agent.propose(self.contexts[job])
            if not is_unusable(proposal):
                return proposal.model_dump(mode="json")
            reason = "unusable answer: " + "; ".join(proposal.notes[:3])
        except LlmAuthError:
            raise  # a wrong key will not fix itself: fail the run with the endpoint's answer
        except LlmEndpointError as e:
            reason = f"no answer: {e}"
        # The configured fallback planner answers for this job; the log says why.
        fallback = HeuristicPlanner().propose(self.contexts[job])
        fallback.notes.append(f"llm fallback for job {job}: {reason}")
        self.log.record(EventType.PLAN_PROPOSED, node_id=ctx.node_id, attempt=ctx.attempt,
                        payload={"job": job, "fallback": "heuristic", "reason": reason})
        return fallback.model_dump(mode="json")

    def supervisor(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Merge the proposals into one plan."""
        if self.llm_in_charge:
            from alas_argo.pipeline.feedback_stage import run_feedback_session

            return run_feedback_session(self, ctx)
        proposals = [JobProposal.model_validate(p) for p in ctx.deps["propose"]]
        # One proposal per job, no more, no less: a merge over a partial set would silently plan the missing jobs
        # itself (an engine that lost the fan-out's outputs once did exactly that).
        jobs = sorted(p.job for p in proposals)
        if jobs != list(range(self.instance.num_jobs)):
            missing = sorted(set(range(self.instance.num_jobs)) - set(jobs))
            raise ContractError(f"{len(proposals)} job proposals for {self.instance.num_jobs} jobs (missing "
                                f"{missing[:10]}, duplicated {sorted({j for j in jobs if jobs.count(j) > 1})[:10]})",
                                where=f"node {ctx.node_id}")
        merged: Schedule = self.agent(Role.SUPERVISOR).merge(self.instance, proposals)
        self.log.record(EventType.PLAN_PROPOSED, node_id=ctx.node_id,
                        payload={"makespan": merged.makespan, "proposals": len(proposals)})
        return _plan_out(merged)

    def inject(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Ablation: corrupt the merged plan with labelled structural faults (a pass-through otherwise)."""
        plan = _plan(ctx.deps["optimize"]["plan"])
        if self.config.faults == 0:
            return _plan_out(plan, faults=[])
        injected = inject_faults(self.instance, plan, count=self.config.faults, seed=self.config.seed)
        return _plan_out(injected.schedule, faults=[f.model_dump(mode="json") for f in injected.faults])

    def optimizer(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Improve the valid plan; never worse."""
        plan = _plan(ctx.deps["check_plan"]["plan"])
        improved = self.agent(Role.OPTIMIZER).improve(self.instance, plan)
        # What makes the solve reproducible goes to the log with its result.
        self.log.record(EventType.PLAN_PROPOSED, node_id=ctx.node_id, attempt=ctx.attempt, payload={
            "role": "optimizer", "method": improved.method, "makespan": improved.schedule.makespan,
            "before": plan.makespan, "time_limit": self.config.time_limit, "seed": self.config.seed,
            "workers": self.config.workers, "limits": dict(improved.limits)})
        return _plan_out(improved.schedule, method=improved.method, seconds=improved.seconds,
                         before=plan.makespan)

    # -- layer 4: the revalidation loop --------------------------------------------------------------------

    def revalidate(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """One iteration of validate -> repair: validate the plan; if invalid, patch it for the next one."""
        source = ctx.deps[ctx.params["source"]]
        if source.get("skipped"):  # a segment past the run's last disruption: nothing was disrupted
            return {**source, "valid": True, "checked": False}
        plan = _plan(ctx.previous["plan"] if ctx.previous else source["plan"])
        if ctx.previous is None and self._take_manual_plan():
            # Human fallback (pipeline.handoff): the node that gave up checks the person's edit first.
            plan = _plan(self.agent_spec["manual_plan"])
            self.log.record(EventType.PLAN_PROPOSED, node_id=ctx.node_id, attempt=ctx.attempt,
                            payload={"role": "human", "manual": True, "makespan": plan.makespan})
        disruption = Disruption.model_validate(source["disruption"]) if "disruption" in source else None
        baseline = _plan(source["baseline"]) if "baseline" in source else None
        carried = {k: source[k] for k in ("disruption", "baseline", "metrics") if k in source}
        if self.config.variant is Variant.NO_VALIDATOR:
            return _plan_out(plan, valid=True, checked=False, **carried)
        report = self.agent(Role.VALIDATOR).check(self.instance, plan, disruption=disruption, baseline=baseline)
        payload = {"instance": self.ref, "plan": plan.to_json(), "baseline": baseline.to_json() if baseline else None,
                   "disruption": disruption.to_json() if disruption else None, "report": report.to_json(),
                   "iteration": ctx.iteration}
        self.log.record(EventType.VALIDATION_PASSED if report.valid else EventType.VALIDATION_FAILED,
                        node_id=ctx.node_id, attempt=ctx.attempt, payload=payload)
        if report.valid:
            return _plan_out(plan, valid=True, checked=True, **carried)
        codes = sorted({str(v.code) for v in report.violations})
        if self.config.variant is Variant.NO_REPAIR:
            return _plan_out(plan, valid=False, checked=True, violations=codes, **carried)
        patched = self._patch(plan, disruption, baseline)
        return _plan_out(patched, valid=False, checked=True, violations=codes, patched=True, **carried)

    def _patch(self, plan: Schedule, disruption: Disruption | None, baseline: Schedule | None) -> Schedule:
        """The repairer's patch, honouring the disruption's frozen past, downtimes and new durations."""
        repairer = self.agent(Role.REPAIRER)
        if disruption is None or baseline is None:
            return repairer.patch(self.instance, plan)
        state = ExecutionState.at(self.instance, baseline, disruption)
        base = baseline.by_key()
        fixed = {k: (base[k].start, base[k].start + state.durations[k]) for k in state.frozen}
        min_starts = {k: state.release[k] for k in state.keys(OpStatus.INTERRUPTED, OpStatus.PENDING)}
        return repairer.patch(self.instance, plan, release=disruption.time,
                              fixed=fixed, min_starts=min_starts, downtimes=state.downtimes,
                              durations=state.durations)

    # -- layer 5: supervision and commits ------------------------------------------------------------------

    def commit(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Commit the plan as a new immutable version."""
        source = ctx.deps[ctx.params["source"]]
        if source.get("skipped"):
            # The plan in force goes on to the next segment, which passes it through too.
            return {"version": None, "skipped": True, "plan": source["plan"]}
        plan = _plan(source["plan"])
        meta: dict[str, Any] = {"valid": bool(source.get("valid")), "checked": bool(source.get("checked", True)),
                                "makespan": plan.makespan}
        if "metrics" in source:  # the repair this plan came from, for the run's summary (read from the log)
            meta["repair"] = source["metrics"]
        # The key makes the commit exactly-once even if the process dies between the commit and the
        # runtime's idempotency record: a resumed run finds the version instead of committing it again.
        # On a cluster the key names the workflow object ("/" cannot occur in a run id, so it never meets the
        # local "<run>:<node>" keys): a pod retried after its commit finds the version.
        key = f"{self.log.run_id}:{ctx.node_id}" if self.scope is None else f"step/{self.scope}/{ctx.node_id}"
        version = self.log.commit_plan(plan.to_json(), node_id=ctx.node_id, reason=ctx.params["reason"], meta=meta,
                                       idempotency_key=key)
        count_plan_committed("repair" if "metrics" in source else "plan")
        carried = {k: source[k] for k in ("disruption", "metrics") if k in source}
        return _plan_out(plan, version=version, **carried)

    def retract(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Compensation of a commit: a ``plan.retracted`` transition, after which the latest version that is
        not retracted is in force again, or none (the log is never edited).

        Idempotent: a second call finds its earlier retraction and changes nothing.
        """
        output = ctx.failure.output if ctx.failure is not None else None
        return retract_committed(self.log, output, node_id=ctx.node_id)

    # -- disruptions and repair ----------------------------------------------------------------------------

    def revealed(self) -> int:
        """How many disruptions this run reveals: the given ones, else the generated sequence's length (none
        without a disruption kind)."""
        if self.file_disruptions:
            return len(self.file_disruptions)
        return 0 if self.config.disrupt is None else self.config.disruptions

    def disrupt(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Reveal disruption k against the plan in force (generated, or the k-th from the file)."""
        k = int(ctx.params.get("index", 1))
        if "plan_from" in ctx.params:
            in_force = ctx.deps[ctx.params["plan_from"]]
        else:  # alas-repair: the plan in force is the run's current version
            current = self.log.current_plan()
            if current is None:
                raise InputError("no committed plan to disrupt", where=f"run {self.log.run_id}")
            in_force = {"version": current[0], "plan": current[1]}
        baseline = _plan(in_force["plan"])
        base_version = in_force.get("version")
        previous = Disruption.model_validate(in_force["disruption"]) if in_force.get("disruption") else None
        if k > self.revealed():
            # A segment past the run's last disruption (the definition has a fixed number of them, the run's
            # inputs say how many reveal one): it passes the plan in force through and commits nothing.
            return {"disruption": None, "baseline": baseline.to_json(), "baseline_version": base_version,
                    "skipped": True}
        if self.file_disruptions:
            disruption = self.file_disruptions[k - 1]
        else:
            at = None
            if previous is not None:  # reveal times increase along a sequence
                at = min(0.95, previous.time / max(1, baseline.makespan) + 0.1)
            disruption = generate_disruption(self.instance, baseline, str(self.config.disrupt),
                                             seed=self.config.seed + k - 1, at=at)
        if previous is not None:
            disruption = carry_forward(previous, disruption)
        check_disruption(self.instance, baseline, disruption)
        self.log.record(EventType.DISRUPTION_OBSERVED, node_id=ctx.node_id,
                        payload={"index": k, "disruption": disruption.to_json(), "baseline_version": base_version})
        return {"disruption": disruption.to_json(), "baseline": baseline.to_json(), "baseline_version": base_version}

    def _repair(self, ctx: NodeContext, method: str | None = None) -> dict[str, Any]:
        d = ctx.deps[f"disrupt_{ctx.params['index']}"]
        if d.get("skipped"):
            return {**_plan_out(_plan(d["baseline"])), "skipped": True}
        baseline, disruption = _plan(d["baseline"]), Disruption.model_validate(d["disruption"])
        repairer = self.agent(Role.REPAIRER)
        if method is not None:
            from alas_argo.agents.roles import RepairerRole

            repairer = RepairerRole(method, budget=self.config.repair_budget, seed=self.config.seed,
                                    workers=self.config.workers, effort=self.config.repair_effort,
                                    tolerance=self.config.repair_tolerance, deterministic=self.config.deterministic,
                                    first_edit=self.config.repair_first_edit)
        self.log.record(EventType.REPAIR_STARTED, node_id=ctx.node_id, attempt=ctx.attempt,
                        payload={"method": repairer.method, "level": ctx.level})
        result = repairer.repair_disruption(self.instance, baseline, disruption)
        metrics = result.metrics()
        self.log.record(EventType.REPAIR_FINISHED, node_id=ctx.node_id, attempt=ctx.attempt, payload={
            "instance": self.ref, "baseline": baseline.to_json(), "disruption": disruption.to_json(),
            "method": repairer.method, "budget": repairer.budget, "seed": repairer.seed, "workers": repairer.workers,
            "effort": repairer.effort, "tolerance": repairer.tolerance, "first_edit": repairer.first_edit.value,
            "deterministic": repairer.deterministic,
            "limits": result.limits,
            "plan": result.schedule.to_json(), "metrics": metrics, "level": ctx.level})
        observe_repair_record(metrics)
        return _plan_out(result.schedule, metrics=metrics, baseline=baseline.to_json(),
                         disruption=disruption.to_json())

    def repairer(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Localized cascading repair of the plan in force."""
        return self._repair(ctx)

    def repair_patch(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Recovery level 2: a feasible plan by priority decode of the plan in force under the disruption."""
        d = ctx.deps[f"disrupt_{ctx.params['index']}"]
        if d.get("skipped"):
            return {**_plan_out(_plan(d["baseline"])), "skipped": True}
        baseline, disruption = _plan(d["baseline"]), Disruption.model_validate(d["disruption"])
        patched = self._patch(baseline, disruption, baseline)
        return _plan_out(patched, metrics={"method": "patch"}, baseline=baseline.to_json(),
                         disruption=disruption.to_json())

    def replan(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """Recovery level 3: a global re-solve of everything not started (a new plan)."""
        return self._repair(ctx, method="full")

    def finish(self, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        """The versions this run committed."""
        if self.scope is not None:
            # On a cluster the run ends here when it succeeds (its exit handler counts the other outcomes);
            # `alas run` counts its outcome once the runtime returns.
            count_run_outcome(RunOutcome.SUCCEEDED)
        return {"versions": self.log.versions()}
