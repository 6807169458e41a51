"""Running the ALAS workflow end to end on the local runtime: a new run, a resumed one, or a finished one."""

from __future__ import annotations

import contextlib
import itertools
import time
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from alas_argo import metrics
from alas_argo.errors import ConflictError, InputError, first_error
from alas_argo.file_names import found, read_limited
from alas_argo.json_limits import load_json
from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.disruption import Disruption, DisruptionKind
from alas_argo.jssp.instance import Instance
from alas_argo.log import EventType, ExecutionLog
from alas_argo.pipeline.blueprint import build_workflow
from alas_argo.pipeline.config import RunConfig
from alas_argo.pipeline.inputs import check_same_inputs, recorded_inputs, run_inputs
from alas_argo.pipeline.outcome import PipelineResult, is_finished, read_result
from alas_argo.pipeline.stages import Stages
from alas_argo.runtime import Runtime, StateChange
from alas_argo.runtime.run_state import Listener

__all__ = ["PipelineResult", "disruption_file", "load_disruptions", "run_pipeline"]


def disruption_file(disrupt: str) -> Path:
    """The disruption JSON file ``--disrupt`` names when it names no kind: a path that exists, or any name
    ending ``.json`` (reading it then says what is wrong with it).

    Raises:
        InputError: Neither (a name too long to be a file's is no file either, not an OSError).
    """
    path = Path(disrupt)
    if not found(path) and path.suffix != ".json":
        kinds = ", ".join(k.value for k in DisruptionKind)
        raise InputError(f"--disrupt must be one of {kinds} or a disruption JSON file", where=disrupt[:200])
    return path


def load_disruptions(path: Path) -> list[Disruption]:
    """Read one disruption object, or a list of them, from a JSON file (reveal times must not decrease)."""
    try:
        doc = load_json(read_limited(path), where=str(path))
    except FileNotFoundError:
        raise InputError("disruption file not found", where=str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read disruption file: {e.strerror or e}", where=str(path)[:200]) from None
    items = doc if isinstance(doc, list) else [doc]
    if not items or not all(isinstance(d, dict) for d in items):
        raise InputError("expected a disruption object or a non-empty list of them", where=str(path))
    try:
        found = TypeAdapter(list[Disruption]).validate_python(items)
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(f"{loc}: {msg}", where=str(path)) from None
    if any(b.time < a.time for a, b in itertools.pairwise(found)):
        raise InputError("disruption reveal times must not decrease", where=str(path))
    return found


def _disruption_plan(config: RunConfig) -> tuple[list[Disruption], int]:
    if config.disrupt is None:
        return [], 0
    if config.disrupt in {k.value for k in DisruptionKind}:
        return [], config.disruptions
    found = load_disruptions(disruption_file(config.disrupt))
    return found, len(found)


def run_pipeline(config: RunConfig, log: ExecutionLog, *, listener: Listener | None = None,
                 agent_spec: dict[str, Any] | None = None) -> PipelineResult:
    """Run the five ALAS layers for ``config``, writing through ``log``; resume the run when it has history.

    A new run records its inputs first (:mod:`alas_argo.pipeline.inputs`). A run id with history must have
    been started with the same inputs. When its latest invocation succeeded, its stored result comes back at
    once (nothing runs); otherwise it continues: every node that finished returns its recorded output and
    only the rest runs. The result is read from the log either way (:mod:`alas_argo.pipeline.outcome`).

    Args:
        config: What to run.
        log: The run's execution log.
        listener: Called with every node state change (for a live view).
        agent_spec: Extra spec for the agent factory (settings, LLM recorder, replay events).

    Raises:
        InputError: Bad configuration, or the run id was started with other inputs (the message names them).
        Interrupted: SIGINT / SIGTERM stopped the run (the log records ``run.interrupted``; it can be resumed).
        ConflictError: Another process is running this run id on the same filesystem store right now.
    """
    started = time.perf_counter()
    instance = load_instance(config.instance)
    from_file, count = _disruption_plan(config)
    inputs = run_inputs(config, instance, from_file)
    with contextlib.ExitStack() as lease:
        try:
            lease.enter_context(log.store.hold(name=f"run-{log.run_id}"))
        except ConflictError as e:
            raise ConflictError(f"run {log.run_id} is being run by another process right now ({e.message}); run "
                                "this again once it has stopped, to resume it or read its result",
                                where=e.where) from None
        return _run(config, log, instance, from_file, count, inputs, started, listener, agent_spec)


def _run(config: RunConfig, log: ExecutionLog, instance: Instance, from_file: list[Disruption], count: int,
         inputs: dict[str, Any], started: float, listener: Listener | None,
         agent_spec: dict[str, Any] | None) -> PipelineResult:
    """:func:`run_pipeline` with its run's lease held."""
    resumed = log.exists()
    if resumed:
        check_same_inputs(log, inputs)
        if is_finished(log):
            return read_result(log, config, instance, disruptions=count, resumed=True,
                               seconds=time.perf_counter() - started)
    if recorded_inputs(log) is None:
        log.append(EventType.RUN_INPUTS, payload=inputs)
    elif resumed:
        log.append(EventType.RUN_RESUMED, payload={"digest": inputs["digest"]})
    workflow = build_workflow(config, disruptions=count)
    stages = Stages(config, instance, log, disruptions=from_file, agent_spec=agent_spec)

    def observe(change: StateChange) -> None:
        if change.new == "failed_retryable":
            metrics.count_policy_event(metrics.PolicyEvent.RETRY)
        if listener is not None:
            listener(change)

    runtime = Runtime(stages.handlers(), journal=log, max_workers=config.workers, timeout_mode="thread",
                      listener=observe, seed=config.seed, require_output_contracts=True)
    run = runtime.run(workflow, {"instance": instance.name, "config": config.model_dump(mode="json")},
                      run_id=log.run_id)
    result = read_result(log, config, instance, disruptions=count, run=run, resumed=resumed,
                         seconds=time.perf_counter() - started)
    _observe(result)
    return result


def _observe(result: PipelineResult) -> None:
    # Commits and repairs are counted by the stages that make them (on a cluster too); the run's outcome here.
    for _ in result.compensated:
        metrics.count_policy_event(metrics.PolicyEvent.COMPENSATION)
    outcome = metrics.RunOutcome.SUCCEEDED if result.succeeded else (
        metrics.RunOutcome.COMPENSATED if result.compensated else metrics.RunOutcome.FAILED)
    metrics.count_run_outcome(outcome)
