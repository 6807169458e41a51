"""The pipeline's roles as cluster steps: ``alas step <role>`` runs the same :class:`Stages` handler the
local runtime calls, with its dependencies' outputs read from the execution log instead of memory.

A step gets the run's configuration from the workflow parameters (:mod:`alas_argo.pipeline.parameters`),
the instance from the run's log (the blueprint step records it in the first ``run.started`` event), and its
dependencies as log keys (``--input``; a map's as the list of its items' keys). What the handler returns is
the step's output document; the fields a map fans out over (the blueprint's ``jobs``) also become Argo
output parameters.
"""

from __future__ import annotations

from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.instance import Instance
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.instances import named_instance
from alas_argo.pipeline.parameters import config_from_parameters
from alas_argo.pipeline.stages import Stages
from alas_argo.runtime.context import Failure, NodeContext
from alas_argo.step_context import Handler, StepContext, StepOutput, param_value

__all__ = ["PIPELINE_STEPS", "recorded_instance"]

#: Output fields a map node fans out over or a gate reads, by role: written as Argo output parameters too. A
#: workflow rendered now names them itself (`alas step --export`); this keeps templates rendered before it working.
_FAN_OUT = {"blueprint": ("jobs", "revealed")}


def recorded_instance(log: ExecutionLog) -> Instance:
    """The run's instance, as its blueprint step recorded it in the run's first ``run.started`` event (found
    by the log's index in one read; a run whose first ``run.started`` lacks it is searched in full); for a run
    no blueprint step started (planned by `alas run`), as the events that name it say
    (:func:`alas_argo.log.instances.named_instance`).

    Raises:
        InputError: The run has no blueprint and no event names its instance, or names no bundled one.
    """
    started = log.first(EventType.RUN_STARTED)
    if started is not None and "instance" not in started.payload:
        started = next((e for e in log.events() if e.type is EventType.RUN_STARTED and "instance" in e.payload),
                       None)
    if started is not None:
        return Instance.model_validate(started.payload["instance"])
    # A run planned elsewhere (`alas run --store s3`, then `alas-repair` on the cluster): its instance as the
    # controller finds it, from the events that name it (an unknown name says so itself).
    return named_instance(log, missing="the run has no blueprint (no run.started event with an instance) and no "
                                       "event names its instance")


def _stages(ctx: StepContext, instance: Instance) -> Stages:
    config, given = config_from_parameters(ctx.input.run_inputs)
    return Stages(config, instance, ctx.log, disruptions=given, scope=ctx.input.scope)


def _node_context(ctx: StepContext) -> NodeContext:
    deps = {name: ctx.output(name) for name in ctx.dep_names()}
    inp = ctx.input
    failure = None if ctx.failure is None else Failure(error=type(ctx.failure).__name__,
                                                       error_type=type(ctx.failure).__name__, message=str(ctx.failure))
    return NodeContext(node_id=inp.node, role=inp.kind.replace("-", "_"), attempt=1, run_id=ctx.log.run_id,
                       workflow=inp.scope, deps=deps, params=inp.params, item=inp.item,
                       iteration=ctx.iteration + 1 if inp.loop_until is not None else None, previous=ctx.previous,
                       failure=failure, level=ctx.level)


def _step(role: str) -> Handler:
    def run(ctx: StepContext) -> StepOutput:
        if role == "blueprint":
            instance = load_instance(ctx.run_input("instance"))
            if ctx.log.first(EventType.RUN_STARTED) is None:  # later steps read the instance from here
                ctx.log.append(EventType.RUN_STARTED, node_id=ctx.input.node, payload={
                    "instance": instance.to_json(), "planner": ctx.run_input("planner", "heuristic"),
                    "scope": ctx.input.scope})
        else:
            instance = recorded_instance(ctx.log)
        handler = _stages(ctx, instance).handlers()[role]
        doc = handler(_node_context(ctx), {})
        params = {f: param_value(doc[f]) for f in _FAN_OUT.get(role, ())}
        return StepOutput(doc, params)

    run.__doc__ = f"The pipeline's {role} role as a cluster step (the same handler `alas run` calls)."
    return run


#: Step kind (the IR role, as Argo names it) -> handler, for every role of the pipeline but its compensation
#: (``retract``: the cluster's exit handler and compensation steps, :mod:`alas_argo.step_handlers`).
PIPELINE_STEPS: dict[str, Handler] = {
    role.replace("_", "-"): _step(role) for role in (
        "blueprint", "agents", "job_agent", "supervisor", "revalidate", "optimizer", "inject", "commit",
        "disrupt", "repairer", "repair_patch", "replan", "finish")}
