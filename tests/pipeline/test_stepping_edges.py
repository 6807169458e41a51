"""`alas step <role>` for the pipeline's roles (alas_argo/pipeline/stepping.py) at its edges: the instance a
later step reads back from the run's log (the first ``run.started`` that carries one, else a one-line error
naming the run), what the blueprint step records there once per run, the fan-out fields as compact JSON
output parameters, and the call a step hands the same :class:`Stages` handler the local runtime calls (node,
role, attempt, run, workflow, dependencies' documents, params, item, loop iteration, previous output, the
failure and level of a ladder rung; the run's configuration, given disruptions and scope).

`PIPELINE_STEPS` is built when the module is imported, so these tests take each role's step from the module's
factory ``_step`` (the very function `PIPELINE_STEPS` was built with) where they check what a step does, and
check `PIPELINE_STEPS` itself for the roles it serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.pipeline import stepping
from alas_argo.pipeline.parameters import config_from_parameters
from alas_argo.pipeline.stages import Stages
from alas_argo.pipeline.stepping import PIPELINE_STEPS, recorded_instance
from alas_argo.runtime.context import Failure, NodeContext
from alas_argo.step_context import StepContext, StepInput
from alas_argo.steps import output_key, run_step

FT06 = get_instance("ft06")
LA01 = get_instance("la01")
#: What each call of a recording handler saw: the Stages it is bound to, its context and its inputs.
Calls = list[tuple[Stages, NodeContext, dict[str, Any]]]


def _log(tmp: Path, run: str = "r1") -> ExecutionLog:
    return ExecutionLog(FsStore(tmp / "log"), run)


def _run(tmp: Path, kind: str, **fields: Any) -> Any:
    """Run one pipeline role as `alas step` does, in run r1 of the filesystem store under ``tmp``."""
    inp = StepInput(kind=kind, node=fields.pop("node", kind), run_id="r1", scope=fields.pop("scope", "wf-1"),
                    **fields)
    return run_step(inp, FsStore(tmp / "log"), {kind: stepping._step(kind.replace("-", "_"))})


def _recording(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Replace every Stages handler by one that records the Stages it is bound to and the call it gets."""
    calls: Calls = []

    def handlers(self: Stages) -> dict[str, Any]:
        def record(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
            calls.append((self, ctx, inputs))
            return {"jobs": [2, 0], "revealed": 0, "role": ctx.role}
        return dict.fromkeys(("blueprint", "job_agent", "supervisor", "repair_patch"), record)

    monkeypatch.setattr(Stages, "handlers", handlers)
    return calls


# -- recorded_instance -------------------------------------------------------------------------------------


def test_a_run_without_a_blueprint_is_a_one_line_input_error_naming_the_run(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        recorded_instance(_log(tmp_path, "r7"))
    assert (caught.value.message, caught.value.where) == (
        "the run has no blueprint (no run.started event with an instance) and no event names its instance", "run r7")


def test_a_first_run_started_without_an_instance_is_passed_over_for_the_first_that_has_one(tmp_path: Path) -> None:
    """The local runtime's run.started names the workflow, not the instance; the blueprint's comes later."""
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"workflow": "alas-plan", "version": 1})
    log.append(EventType.NODE_STARTED, node_id="x", payload={"instance": LA01.to_json()})  # not a run.started
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": FT06.to_json()})
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": LA01.to_json()})
    assert recorded_instance(log) == FT06


def test_a_run_whose_every_run_started_lacks_an_instance_has_no_blueprint(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"workflow": "alas-plan", "version": 1})
    log.append(EventType.NODE_STARTED, node_id="x", payload={"instance": FT06.to_json()})
    with pytest.raises(InputError, match="the run has no blueprint"):
        recorded_instance(log)


def test_a_run_planned_by_alas_run_is_read_from_the_events_that_name_its_instance(tmp_path: Path) -> None:
    """No blueprint step started it: the validator's event names the bundled instance (as the controller reads
    it), so the cluster's repair steps serve a run planned locally into the same store."""
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"workflow": "alas-plan", "version": 1})
    log.append(EventType.VALIDATION_PASSED, node_id="validate", payload={"instance": {"name": "la01"}})
    assert recorded_instance(log) == LA01


def test_the_first_run_started_wins_over_later_ones(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": LA01.to_json()})
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": FT06.to_json()})
    assert recorded_instance(log) == LA01


# -- the blueprint step and the steps after it ---------------------------------------------------------------


def test_the_blueprint_records_the_instance_planner_and_scope_once_per_run(tmp_path: Path) -> None:
    out = _run(tmp_path, "blueprint", run_inputs={"instance": "ft06", "planner": "cpsat"})
    # The fields a map fans out over or a gate reads, as compact JSON output parameters, besides the key.
    assert out.params == {"jobs": "[0,1,2,3,4,5]", "revealed": json.dumps(out.doc["revealed"]),
                          "key": output_key("wf-1", "blueprint")}
    assert out.doc["jobs"] == [0, 1, 2, 3, 4, 5] and out.doc["instance"] == "ft06"
    # Another workflow of the run (its own scope) runs its blueprint: the run's record is not written again.
    _run(tmp_path, "blueprint", scope="wf-2", run_inputs={"instance": "la01"})
    started = [e for e in _log(tmp_path).events() if e.type is EventType.RUN_STARTED]
    assert [(e.node_id, e.payload) for e in started] == [
        ("blueprint", {"instance": FT06.to_json(), "planner": "cpsat", "scope": "wf-1"})]
    assert recorded_instance(_log(tmp_path)) == FT06


def test_the_blueprint_records_the_heuristic_planner_when_none_is_given(tmp_path: Path) -> None:
    _run(tmp_path, "blueprint", run_inputs={"instance": "ft06"})
    started = _log(tmp_path).first(EventType.RUN_STARTED)
    assert started is not None and started.payload["planner"] == "heuristic"


def test_a_later_step_plans_the_recorded_instance_not_a_workflow_parameter(tmp_path: Path) -> None:
    """The job agent reads ft06 (6 machines) from the log although its parameters name la01 (5 machines);
    a role that fans nothing out has only its key as an output parameter."""
    blueprint = _run(tmp_path, "blueprint", run_inputs={"instance": "ft06"})
    out = _run(tmp_path, "job-agent", node="agents", item=2, run_inputs={"instance": "la01"},
               inputs={"blueprint": blueprint.params["key"]})
    assert out.doc["job"] == 2 and len(out.doc["operations"]) == FT06.num_machines == 6
    assert out.params == {"key": output_key("wf-1", "agents", 2)}


def test_a_later_step_of_a_run_without_a_blueprint_fails_naming_the_run(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _run(tmp_path, "supervisor")
    assert caught.value.where == "run r1"
    assert not _log(tmp_path).idempotency_get(output_key("wf-1", "supervisor"))


# -- the call the Stages handler gets ------------------------------------------------------------------------


def test_a_step_hands_its_handler_the_run_scope_and_the_dependencies_documents(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": FT06.to_json()})
    log.idempotency_put("k-bp", {"doc": {"jobs": [0, 1]}, "other": 1})
    log.idempotency_put("k-a0", {"doc": {"job": 0}})
    log.idempotency_put("k-a1", {"doc": {"job": 1}})
    calls = _recording(monkeypatch)
    given = Disruption.model_validate({"time": 5, "events": [{"kind": "machine_breakdown", "machine": 1,
                                                               "start": 5, "duration": 4}]})
    run_inputs = {"instance": "ft06", "planner": "cpsat", "seeds": "[4]", "disruption": given.model_dump_json()}
    out = _run(tmp_path, "job-agent", node="supervise", scope="wf-9", params={"p": 1}, item={"job": 3},
               run_inputs=run_inputs, inputs={"blueprint": "k-bp", "agents": ["k-a0", "k-a1"]})
    assert out.doc == {"jobs": [2, 0], "revealed": 0, "role": "job_agent"}
    [(stages, ctx, inputs)] = calls
    assert inputs == {}
    assert ctx == NodeContext(node_id="supervise", role="job_agent", attempt=1, run_id="r1", workflow="wf-9",
                              deps={"blueprint": {"jobs": [0, 1]}, "agents": [{"job": 0}, {"job": 1}]},
                              params={"p": 1}, item={"job": 3}, iteration=None, previous=None, failure=None,
                              level="run")
    # The run's configuration from the workflow parameters, the given disruption, the instance from the log.
    assert stages.config == config_from_parameters(run_inputs)[0]
    assert (stages.config.planner, stages.config.seed) == ("cpsat", 4)
    assert stages.file_disruptions == [given]
    assert (stages.scope, stages.instance, stages.log.run_id) == ("wf-9", FT06, "r1")


def test_a_rung_hands_its_handler_the_failure_below_and_its_level(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A looping node's iteration is 1-based; the previous iteration's output and the ladder's level and
    failure pass as they are."""
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": FT06.to_json()})
    calls = _recording(monkeypatch)
    inp = StepInput(kind="repair-patch", node="repair-1", run_id="r1", scope="wf-1",
                    loop_until={"path": "output.done", "op": "exists"})
    ctx = StepContext(inp, FsStore(tmp_path / "log"), log)
    failure = InfeasibleError("no plan fits the window", where="node repair-1")
    ctx.failure, ctx.level, ctx.iteration, ctx.previous = failure, "patch", 2, {"round": 2}
    stepping._step("repair_patch")(ctx)
    node = calls[0][1]
    assert (node.role, node.iteration, node.previous, node.level) == ("repair_patch", 3, {"round": 2}, "patch")
    assert node.failure == Failure(error="InfeasibleError", error_type="InfeasibleError", message=str(failure))
    assert "no plan fits the window" in node.failure.message


def test_a_step_that_does_not_loop_has_no_iteration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, node_id="blueprint", payload={"instance": FT06.to_json()})
    calls = _recording(monkeypatch)
    ctx = StepContext(StepInput(kind="supervisor", node="supervisor", run_id="r1", scope="wf-1"),
                      FsStore(tmp_path / "log"), log)
    ctx.iteration = 2
    stepping._step("supervisor")(ctx)
    assert (calls[0][1].iteration, calls[0][1].failure) == (None, None)


def test_every_pipeline_role_but_its_compensation_is_a_step_kind_as_argo_names_it() -> None:
    assert set(PIPELINE_STEPS) == {
        "blueprint", "agents", "job-agent", "supervisor", "revalidate", "optimizer", "inject", "commit",
        "disrupt", "repairer", "repair-patch", "replan", "finish"}
    doc = "The pipeline's repair_patch role as a cluster step (the same handler `alas run` calls)."
    assert PIPELINE_STEPS["repair-patch"].__doc__ == stepping._step("repair_patch").__doc__ == doc


def test_a_name_that_is_no_bundled_instance_is_reported_as_itself(tmp_path: Path) -> None:
    """Not as "no blueprint": the event names an instance, the catalog has none of that name."""
    log = _log(tmp_path, "r8")
    log.append(EventType.VALIDATION_PASSED, node_id="validate", payload={"instance": {"name": "no-such-instance"}})
    with pytest.raises(InputError) as caught:
        recorded_instance(log)
    assert "no-such-instance" in str(caught.value) and "no blueprint" not in str(caught.value)
