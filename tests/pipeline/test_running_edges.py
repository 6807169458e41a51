"""Edges of :mod:`alas_argo.pipeline.running`: a disruption file is read whole or refused with one message naming
the file (missing, unreadable, empty, not objects, a bad field, reveal times going back), ``--disrupt`` is a kind or
a file, a resumed run records that it resumed (and an older run without recorded inputs gets them), the listener
sees every node change, and the run's retries, compensations and outcome are counted. The runtime is set up as
the module says: every disruption revealed (past alas-plan's maximum too), output contracts required, timed job
agents run in threads of this process (not forked children), the run's inputs in every node's context."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from alas_argo.errors import ContractError, InputError, TransientError, WorkflowError
from alas_argo.ir import Workflow
from alas_argo.log import EventType
from alas_argo.metrics import REGISTRY
from alas_argo.pipeline import RunConfig, Stages, Variant, build_workflow, load_disruptions, run_pipeline
from alas_argo.pipeline.inputs import run_inputs
from alas_argo.runtime import StateChange
from alas_argo.runtime.context import NodeContext
from alas_argo.workflows.plan import MAX_DISRUPTIONS
from tests.pipeline.pipeline_helpers import FT06, TWO_BREAKDOWNS, open_log

BREAKDOWN = {"kind": "machine_breakdown", "machine": 1, "start": 10, "duration": 5}


def _write(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _refusal(path: Path) -> tuple[str, object]:
    with pytest.raises(InputError) as refused:
        load_disruptions(path)
    return refused.value.message, refused.value.where


def _count(name: str, **labels: str) -> float:
    """A sample of the metrics registry (0 before its first count)."""
    return REGISTRY.get_sample_value(name, labels) or 0.0


# -- load_disruptions -------------------------------------------------------------------------------------------


def test_one_object_or_a_list_is_read_in_order_and_equal_reveal_times_are_allowed(tmp_path: Path) -> None:
    one = load_disruptions(_write(tmp_path / "one.json", {"time": 10, "events": [BREAKDOWN]}))
    assert [(d.time, [e.kind for e in d.events]) for d in one] == [(10, ["machine_breakdown"])]
    change = {"kind": "duration_change", "job": 0, "step": 1, "duration": 3}
    both = load_disruptions(_write(tmp_path / "two.json", [{"time": 10, "events": [BREAKDOWN]},
                                                          {"time": 10, "events": [change]}]))
    assert [(d.time, d.events[0].kind) for d in both] == [(10, "machine_breakdown"), (10, "duration_change")]


def test_reveal_times_that_go_back_are_refused_naming_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "back.json", [{"time": 10, "events": [BREAKDOWN]}, {"time": 9, "events": [BREAKDOWN]}])
    assert _refusal(path) == ("disruption reveal times must not decrease", str(path))


def test_a_missing_or_unreadable_file_is_one_input_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    assert _refusal(missing) == ("disruption file not found", str(missing))
    # A directory is there but cannot be read as a file: the OS's reason, not a traceback.
    assert _refusal(tmp_path) == ("cannot read disruption file: Is a directory", str(tmp_path))


def test_a_file_that_is_not_json_is_named_with_the_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"time": 10,\n "events": [}')
    assert _refusal(path) == ("invalid JSON: Expecting value", f"{path} line 2 column 13")


@pytest.mark.parametrize("doc", [[], [1], [{"time": 10, "events": [BREAKDOWN]}, "later"], "breakdown", 3])
def test_anything_but_objects_is_refused(tmp_path: Path, doc: object) -> None:
    path = _write(tmp_path / "d.json", doc)
    assert _refusal(path) == ("expected a disruption object or a non-empty list of them", str(path))


def test_a_bad_field_is_named_by_its_place_and_pydantics_message(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.json", [{"time": 10, "events": [BREAKDOWN]}, {"time": "soon", "events": []}])
    assert _refusal(path) == ("1.time: Input should be a valid integer", str(path))



def test_one_object_is_read_as_a_list_of_one_so_its_place_counts_in_the_list(tmp_path: Path) -> None:
    """As for the workflow parameter (tests/pipeline/test_parameters_edges.py): the place is counted in the list
    either way, so a one-object file's field is item 0's."""
    path = _write(tmp_path / "d.json", {"time": "soon", "events": [BREAKDOWN]})
    assert _refusal(path) == ("0.time: Input should be a valid integer", str(path))

# -- --disrupt: a kind or a file ----------------------------------------------------------------------------------


def test_disrupt_is_a_generated_kind_or_a_file_and_a_missing_json_file_is_named(tmp_path: Path) -> None:
    config = RunConfig(instance="ft06", planner="heuristic", repair_budget=1)
    with pytest.raises(InputError) as unknown:
        run_pipeline(config.model_copy(update={"disrupt": "earthquake"}), open_log(tmp_path))
    assert (unknown.value.message, unknown.value.where) == (
        "--disrupt must be one of breakdown, shock, mixed or a disruption JSON file", "earthquake")
    # A name ending in .json is a file, so a missing one is named as a missing file, not as an unknown kind.
    missing = str(tmp_path / "gone.json")
    with pytest.raises(InputError) as gone:
        run_pipeline(config.model_copy(update={"disrupt": missing}), open_log(tmp_path))
    assert (gone.value.message, gone.value.where) == ("disruption file not found", missing)
    assert not (tmp_path / "store").exists()  # refused before the run's lease or any record
    # A file that exists is read whatever its name ends in.
    plain = _write(tmp_path / "disruption.txt", {"time": 10, "events": [BREAKDOWN]})
    result = run_pipeline(config.model_copy(update={"disrupt": str(plain)}), open_log(tmp_path, "f"))
    assert result.succeeded and result.versions == [1, 2] and len(result.disruptions) == 1


# -- resuming ----------------------------------------------------------------------------------------------------


def _stop_first_commit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    """commit_2 fails for good once: the run fails after commit_v1 (its rollback compensates that commit)."""
    original = Stages.commit

    def failing(self: Stages, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.node_id == "commit_2":
            raise ContractError("the store refused the version")
        return dict(original(self, ctx, inputs))

    monkeypatch.setattr(Stages, "commit", failing)


def test_a_failed_run_is_compensated_counted_and_its_resume_is_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compensations = _count("alas_policy_events_total", event="compensation")
    compensated = _count("alas_runs_total", outcome="compensated")
    succeeded = _count("alas_runs_total", outcome="succeeded")
    with pytest.MonkeyPatch.context() as patch:
        _stop_first_commit_2(patch)
        failed = run_pipeline(TWO_BREAKDOWNS, open_log(tmp_path))
    assert not failed.succeeded and failed.compensated
    assert _count("alas_policy_events_total", event="compensation") == compensations + len(failed.compensated)
    assert _count("alas_runs_total", outcome="compensated") == compensated + 1
    assert _count("alas_runs_total", outcome="succeeded") == succeeded
    resumed = run_pipeline(TWO_BREAKDOWNS, open_log(tmp_path))
    assert resumed.succeeded and resumed.resumed
    assert _count("alas_runs_total", outcome="succeeded") == succeeded + 1
    events = open_log(tmp_path).events()
    digest = run_inputs(TWO_BREAKDOWNS, FT06, [])["digest"]
    # The inputs once, at the start; the resume noted with the same digest, before the second run.started.
    assert [e.payload for e in events if e.type is EventType.RUN_INPUTS] == [
        next(e for e in events if e.type is EventType.RUN_INPUTS).payload]
    assert [e.payload for e in events if e.type is EventType.RUN_RESUMED] == [{"digest": digest}]
    types = [e.type for e in events]
    assert types.index(EventType.RUN_RESUMED) < len(types) - types[::-1].index(EventType.RUN_STARTED) - 1



def test_a_failed_run_with_nothing_to_compensate_is_counted_failed(tmp_path: Path) -> None:
    failed, compensated = _count("alas_runs_total", outcome="failed"), _count("alas_runs_total", outcome="compensated")
    config = RunConfig(instance="ft06", planner="heuristic", faults=3, seed=2, variant=Variant.NO_REPAIR,
                       max_revalidations=2)
    result = run_pipeline(config, open_log(tmp_path))
    assert (result.succeeded, result.compensated) == (False, [])
    assert _count("alas_runs_total", outcome="failed") == failed + 1
    assert _count("alas_runs_total", outcome="compensated") == compensated


def test_a_run_older_than_the_inputs_record_gets_it_when_resumed(tmp_path: Path) -> None:
    """A log with history but no ``run.inputs`` (written before inputs were recorded) records them now, once,
    rather than a ``run.resumed`` against inputs it never had."""
    log = open_log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"workflow": "alas-plan", "version": "1"})
    log.append(EventType.RUN_FAILED, payload={"failed_node": "optimize", "compensated": []})
    result = run_pipeline(TWO_BREAKDOWNS, open_log(tmp_path))
    assert result.succeeded and result.resumed
    events = open_log(tmp_path).events()
    assert [e.payload["digest"] for e in events if e.type is EventType.RUN_INPUTS] == [
        run_inputs(TWO_BREAKDOWNS, FT06, [])["digest"]]
    assert [e for e in events if e.type is EventType.RUN_RESUMED] == []


# -- the listener and the retry count -----------------------------------------------------------------------------


def test_the_listener_sees_every_change_and_a_retry_is_counted(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    original = Stages.blueprint
    calls = [0]

    def flaky(self: Stages, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        calls[0] += 1
        if calls[0] == 1:
            raise TransientError("the instance store hiccupped")
        return dict(original(self, ctx, inputs))

    monkeypatch.setattr(Stages, "blueprint", flaky)
    retries = _count("alas_policy_events_total", event="retry")
    seen: list[StateChange] = []
    result = run_pipeline(RunConfig(instance="ft06", planner="heuristic", repair_budget=1), open_log(tmp_path),
                          listener=seen.append)
    assert result.succeeded and calls[0] == 2
    assert _count("alas_policy_events_total", event="retry") == retries + 1
    assert result.run is not None
    assert [c.new for c in seen if c.node_id == "blueprint"] == ["ready", "running", "failed_retryable", "running",
                                                                  "executed"]
    # Every change of the run reached the listener, in order, and nothing else did.
    assert seen == result.run.changes


# -- how the runtime is set up -------------------------------------------------------------------------------------


def test_job_agents_run_in_this_process_and_see_the_runs_inputs(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Job agents have a timeout (``agent_timeout``): in the runtime's default ``process`` mode each would run in
    a forked child whose in-memory effects (an LLM recorder's usage, a cache) the run never sees. The pipeline runs
    them in threads, so what a handler does in memory stays."""
    original = Stages.job_agent
    seen: list[tuple[int, dict[str, Any]]] = []

    def spying(self: Stages, ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        seen.append((int(ctx.item), dict(ctx.inputs)))
        return dict(original(self, ctx, inputs))

    monkeypatch.setattr(Stages, "job_agent", spying)
    config = RunConfig(instance="ft06", planner="heuristic", repair_budget=1, seed=2)
    assert run_pipeline(config, open_log(tmp_path)).succeeded
    assert sorted(job for job, _ in seen) == list(range(FT06.num_jobs))
    assert all(inputs == {"instance": "ft06", "config": config.model_dump(mode="json")} for _, inputs in seen)
    # JSON values, as a workflow's parameters are (the variant a plain string, not the Variant enum).
    assert all(_json_only(inputs) for _, inputs in seen)


def _json_only(value: object) -> bool:
    if isinstance(value, dict):
        return all(type(k) is str and _json_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_only(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def test_a_blueprint_node_without_an_output_contract_is_refused_before_anything_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def uncontracted(config: RunConfig, *, disruptions: int = 0) -> Workflow:
        wf = build_workflow(config, disruptions=disruptions)
        nodes = [n.model_copy(update={"output": None}) if n.id == "merge" else n for n in wf.nodes]
        return wf.model_copy(update={"nodes": nodes})

    monkeypatch.setattr("alas_argo.pipeline.running.build_workflow", uncontracted)
    with pytest.raises(WorkflowError, match="merge"):
        run_pipeline(RunConfig(instance="ft06", planner="heuristic"), open_log(tmp_path))
    assert [e.type for e in open_log(tmp_path).events()] == [EventType.RUN_INPUTS]  # no node ran


def test_more_disruptions_than_alas_plans_maximum_are_all_revealed_and_repaired(tmp_path: Path) -> None:
    count = MAX_DISRUPTIONS + 1
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="breakdown", disruptions=count, seed=1,
                       repair_budget=1)
    result = run_pipeline(config, open_log(tmp_path))
    assert result.succeeded and len(result.disruptions) == count
    assert result.versions == list(range(1, count + 2)) and len(result.repairs) == count


def test_the_seconds_reported_are_the_calls_own(tmp_path: Path) -> None:
    """A run's seconds are measured from the start of the call, whether it ran or returned a finished run."""
    for ran in (True, False):
        before = time.perf_counter()
        result = run_pipeline(TWO_BREAKDOWNS, open_log(tmp_path))
        assert (result.run is not None) is ran
        assert 0 <= result.seconds <= time.perf_counter() - before
