"""Edges of the steps that are not pipeline stages (alas_argo.step_handlers), left open by mutation testing:
the exit handler's and a compensation step's log records and metrics, compensations that share those records
(another node's, another workflow's, an older image's wording, a pod killed mid-undo), the benchmark's case
list, case run and summary, and the choice and parallel nodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo import step_handlers
from alas_argo.errors import InputError, PermanentError, TransientError
from alas_argo.ir import Condition
from alas_argo.log import Event, EventType, ExecutionLog, FsStore
from alas_argo.metrics import REGISTRY
from alas_argo.runtime.policies import evaluate
from alas_argo.step_context import StepContext
from alas_argo.steps import StepInput, StepOutput, output_key, run_step

PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}
COMPS = {n: {"node": f"undo-{n}", "role": "retract", "params": {}} for n in ("commit-a", "commit-b")}


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def _committed(tmp_path: Path, nodes: tuple[str, ...] = ("commit-a", "commit-b"), scope: str = "wf") -> FsStore:
    """A run whose workflow ``scope`` committed one plan version per saga step, in this order."""
    store = FsStore(tmp_path)
    log = ExecutionLog(store, "r")
    for node in nodes:
        version = log.commit_plan(PLAN, node_id=node)
        key = output_key(scope, node)
        log.idempotency_put(key, {"doc": {"version": version}, "params": {}})
        log.append(EventType.NODE_SUCCEEDED, node_id=node, payload={"key": key, "scope": scope})
    return store


def _exit_handler(store: FsStore, status: str = "Failed", *, node: str = "compensate", scope: str = "wf",
                  compensations: dict[str, Any] | None = None) -> StepOutput:
    return run_step(StepInput(kind="compensate", node=node, run_id="r", scope=scope, status=status,
                              compensations=COMPS if compensations is None else compensations), store)


def _events(store: FsStore, *types: EventType) -> list[Event]:
    return [e for e in ExecutionLog(store, "r").events() if e.type in types]


def test_the_exit_handler_logs_each_undo_under_its_compensation_node(tmp_path: Path) -> None:
    store = _committed(tmp_path)
    _exit_handler(store)
    records = [(e.type, e.node_id, e.payload) for e in _events(
        store, EventType.COMPENSATION_STARTED, EventType.COMPENSATION_FINISHED)]
    assert records == [
        (EventType.COMPENSATION_STARTED, "undo-commit-b", {"compensates": "commit-b", "scope": "wf"}),
        (EventType.COMPENSATION_FINISHED, "undo-commit-b", {
            "compensates": "commit-b", "ok": True, "result": {"retracted": 2, "restored": 1}, "scope": "wf"}),
        (EventType.COMPENSATION_STARTED, "undo-commit-a", {"compensates": "commit-a", "scope": "wf"}),
        (EventType.COMPENSATION_FINISHED, "undo-commit-a", {
            "compensates": "commit-a", "ok": True, "result": {"retracted": 1, "restored": None}, "scope": "wf"})]


@pytest.mark.parametrize(("status", "committed", "outcome", "undone"), [
    ("Succeeded", ("commit-a", "commit-b"), "succeeded", 0),
    ("Failed", ("commit-a", "commit-b"), "compensated", 2),
    ("Failed", (), "failed", 0)])
def test_the_exit_handler_counts_the_run_outcome_and_each_compensation(
        tmp_path: Path, status: str, committed: tuple[str, ...], outcome: str, undone: int) -> None:
    store = _committed(tmp_path, committed)
    runs = {o: _sample("alas_runs_total", outcome=o) for o in ("succeeded", "compensated", "failed")}
    policy = _sample("alas_policy_events_total", event="compensation")
    out = _exit_handler(store, status)
    assert len(out.doc["compensated"]) == undone
    assert {o: _sample("alas_runs_total", outcome=o) - v for o, v in runs.items()} == {
        o: float(o == outcome) for o in runs}
    assert _sample("alas_policy_events_total", event="compensation") == policy + undone


def test_another_nodes_or_another_workflows_compensation_does_not_stop_this_one(tmp_path: Path) -> None:
    store = _committed(tmp_path, ("commit-a",), scope="wf-0")  # an earlier workflow of the run, compensated
    assert _exit_handler(store, scope="wf-0").doc["compensated"][0]["node"] == "commit-a"
    log = ExecutionLog(store, "r")
    for node in ("commit-a", "commit-b"):  # this workflow's commits
        version = log.commit_plan(PLAN, node_id=node)
        log.idempotency_put(output_key("wf", node), {"doc": {"version": version}, "params": {}})
        log.append(EventType.NODE_SUCCEEDED, node_id=node, payload={"key": output_key("wf", node), "scope": "wf"})
    # commit-b undone by its own compensation step: the exit handler still undoes commit-a.
    step = run_step(StepInput(kind="retract", node="undo-commit-b", run_id="r", scope="wf",
                              compensates=["commit-b"]), store)
    assert step.doc == {"compensated": [{"node": "commit-b", "retracted": 3, "restored": 2}]}
    assert _exit_handler(store).doc == {"compensated": [{"node": "commit-a", "retracted": 2, "restored": None}]}
    assert log.retracted() == [1, 2, 3]


def test_a_compensation_an_older_image_recorded_as_node_is_not_done_twice(tmp_path: Path) -> None:
    store = _committed(tmp_path)
    log = ExecutionLog(store, "r")
    log.retract(2, node_id="undo-commit-b", reason="compensation of v2")
    # Before the one wording, the finished record named the compensated step "node".
    log.append(EventType.COMPENSATION_FINISHED, node_id="undo-commit-b",
               payload={"node": "commit-b", "ok": True, "result": {"retracted": 2}, "scope": "wf"})
    assert _exit_handler(store).doc == {"compensated": [{"node": "commit-a", "retracted": 1, "restored": None}]}
    assert [e.payload["compensates"] for e in _events(store, EventType.COMPENSATION_STARTED)] == ["commit-a"]


def test_a_compensation_whose_pod_died_after_it_started_is_done_on_the_next_attempt(tmp_path: Path) -> None:
    store = _committed(tmp_path, ("commit-a",))
    ExecutionLog(store, "r").append(EventType.COMPENSATION_STARTED, node_id="undo-commit-a",
                                    payload={"compensates": "commit-a", "scope": "wf"})  # then killed
    assert _exit_handler(store).doc == {"compensated": [{"node": "commit-a", "retracted": 1, "restored": None}]}
    assert _exit_handler(store, node="compensate-again").doc == {"compensated": []}


def _failing(calls: list[str], error: Exception) -> Any:
    def undo(ctx: StepContext, committed: dict[str, Any], *, node: str) -> dict[str, Any]:
        calls.append(node)
        raise error
    return undo


def test_each_compensation_keeps_to_its_own_policy_across_the_pods_retries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Argo retries the one compensate pod as a whole; as the local saga runs each compensation under its own
    policy, one allowed a single attempt is tried once and one allowed three is tried three times, and the pod
    fails as retryable while one still may be retried, then for good."""
    store = _committed(tmp_path)
    calls: list[str] = []
    monkeypatch.setitem(step_handlers.COMPENSATORS, "failing", _failing(calls, TransientError("store busy")))
    comps = {"commit-a": {"node": "undo-a", "role": "failing", "retry": {"max_attempts": 3,
                                                                         "retry_on": ["TransientError"]}},
             "commit-b": {"node": "undo-b", "role": "failing", "retry": {"max_attempts": 1,
                                                                         "retry_on": ["TransientError"]}}}
    for _ in range(2):  # b's one attempt, then its failure stands; a has attempts left: the pod is retried
        with pytest.raises(TransientError, match="store busy"):
            _exit_handler(store, compensations=comps)
    with pytest.raises(PermanentError) as spent:  # a's third attempt fails too: nothing left to retry
        _exit_handler(store, compensations=comps)
    assert spent.value.message == ("the compensation of commit-b is not tried again: 1 of 1 attempts failed, "
                                   "the last with TransientError: store busy")
    assert calls == ["undo-b", "undo-a", "undo-a", "undo-a"]
    with pytest.raises(PermanentError) as again:  # a pod retried once too often tries neither
        _exit_handler(store, compensations=comps)
    assert (again.value.where, calls) == ("node undo-b", ["undo-b", "undo-a", "undo-a", "undo-a"])
    failed = [(e.node_id, e.payload["error_names"]) for e in _events(store, EventType.COMPENSATION_FINISHED)]
    assert failed == [("undo-b", ["AlasError", "Exception", "TransientError"])] + [
        ("undo-a", ["AlasError", "Exception", "TransientError"])] * 3


def test_a_compensation_failing_with_an_error_its_policy_does_not_retry_fails_for_good(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _committed(tmp_path, ("commit-a",))
    calls: list[str] = []
    monkeypatch.setitem(step_handlers.COMPENSATORS, "failing", _failing(calls, TransientError("store busy")))
    comps = {"commit-a": {"node": "undo-a", "role": "failing", "retry": {"max_attempts": 5, "retry_on": ["Timeout"]}}}
    with pytest.raises(PermanentError) as caught:
        _exit_handler(store, compensations=comps)
    assert str(caught.value) == "node undo-a: the compensation of commit-a failed for good: TransientError: store busy"
    assert isinstance(caught.value.__cause__, TransientError)
    with pytest.raises(PermanentError, match="its policy does not retry TransientError: store busy"):
        _exit_handler(store, compensations=comps)
    assert calls == ["undo-a"]


def test_a_failure_an_older_image_recorded_counts_as_an_attempt_and_an_old_render_retries_every_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An older image recorded a failed compensation without the error's names: it counts against the attempts
    and its error is not judged. A workflow rendered before compensations carried their policy tries again on
    every attempt of the pod, as it always did."""
    store = _committed(tmp_path, ("commit-a",))
    ExecutionLog(store, "r").append(EventType.COMPENSATION_FINISHED, node_id="undo-a", payload={
        "compensates": "commit-a", "ok": False, "error": "TransientError: gone", "scope": "wf"})
    calls: list[str] = []
    monkeypatch.setitem(step_handlers.COMPENSATORS, "failing", _failing(calls, TransientError("store busy")))
    old = {"commit-a": {"node": "undo-a", "role": "failing", "params": {}}}
    judged = {"commit-a": {**old["commit-a"], "retry": {"max_attempts": 3, "retry_on": ["Timeout"]}}}
    with pytest.raises(PermanentError, match="failed for good"):  # tried: only its own error is judged
        _exit_handler(store, compensations=judged)
    with pytest.raises(TransientError):  # the old render tries once more
        _exit_handler(store, compensations=old)
    spent = {"commit-a": {**old["commit-a"], "retry": {"max_attempts": 3, "retry_on": ["TransientError"]}}}
    with pytest.raises(PermanentError, match="3 of 3 attempts failed"):
        _exit_handler(store, compensations=spent)
    assert calls == ["undo-a", "undo-a"]


def test_a_compensation_step_undoes_its_nodes_latest_first_and_shares_the_records(tmp_path: Path) -> None:
    store = _committed(tmp_path)
    inp = StepInput(kind="retract", node="retract-all", run_id="r", scope="wf", compensates=["commit-a", "commit-b"])
    out = run_step(inp, store)
    assert out.doc == {"compensated": [{"node": "commit-b", "retracted": 2, "restored": 1},
                                       {"node": "commit-a", "retracted": 1, "restored": None}]}
    assert [(e.node_id, e.payload["compensates"]) for e in _events(store, EventType.COMPENSATION_FINISHED)] == [
        ("retract-all", "commit-b"), ("retract-all", "commit-a")]
    assert [(e.node_id, e.payload["reason"]) for e in _events(store, EventType.PLAN_RETRACTED)] == [
        ("retract-all", "compensation of v2"), ("retract-all", "compensation of v1")]
    again = run_step(inp.model_copy(update={"node": "retract-all-2"}), store)
    assert again.doc == {"compensated": []}
    assert _exit_handler(store).doc == {"compensated": []}  # the exit handler finds them done


def test_a_compensation_step_in_another_workflow_undoes_nothing_of_this_one(tmp_path: Path) -> None:
    store = _committed(tmp_path)
    out = run_step(StepInput(kind="retract", node="retract-all", run_id="r", scope="wf-other",
                             compensates=["commit-a", "commit-b"]), store)
    assert out.doc == {"compensated": []} and ExecutionLog(store, "r").retracted() == []


def test_a_compensation_with_no_handler_is_refused_naming_its_role_and_node(tmp_path: Path) -> None:
    store = _committed(tmp_path, ("commit-a",))
    comps = {"commit-a": {"node": "undo-a", "role": "teleport", "params": {}}}
    with pytest.raises(InputError) as caught:
        _exit_handler(store, compensations=comps)
    assert caught.value.message == "no compensation handler 'teleport'" and caught.value.where == "node undo-a"
    assert _events(store, EventType.COMPENSATION_STARTED) == []


def test_the_bench_cases_parameter_is_the_case_list_as_compact_sorted_json(tmp_path: Path) -> None:
    out = run_step(StepInput(kind="bench-plan", node="cases", run_id="r", scope="wf",
                             run_inputs={"suite": "ft06", "scenarios": '["none", "breakdown"]', "seeds": "[3]"}),
                   FsStore(tmp_path))
    cases = [{"instance": "ft06", "scenario": s, "seed": 3} for s in ("none", "breakdown")]
    assert out.doc == {"cases": cases}
    assert out.params["cases"] == json.dumps(cases, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize(("item", "disrupt"), [
    ({"instance": "ft06", "scenario": "none", "seed": 3}, None),
    # As text: an {{item}} the pod was handed unparsed.
    ('{"instance": "ft06", "scenario": "breakdown", "seed": "4"}', "breakdown")])
def test_a_bench_case_runs_the_pipeline_in_its_own_run_and_keeps_its_summary(
        tmp_path: Path, item: dict[str, Any] | str, disrupt: str | None) -> None:
    store = FsStore(tmp_path)
    out = run_step(StepInput(kind="bench-case", node="run-case", run_id="b", scope="wf", item=item,
                             run_inputs={"time-limit": "0.5", "method": "right-shift"}), store)
    case = item if isinstance(item, dict) else json.loads(item)
    sub = f"b.ft06.{case['scenario']}.{case['seed']}"
    assert set(out.doc) == {"run_id", "scenario", "seed", "instance", "status", "makespan_before", "makespan_after",
                            "upper_bound", "final_valid", "moved_operations", "repair_method", "seconds"}
    assert (out.doc["run_id"], out.doc["scenario"], out.doc["seed"]) == (sub, case["scenario"], case["seed"])
    assert (out.doc["instance"], out.doc["status"], out.doc["final_valid"], out.doc["upper_bound"]) == (
        "ft06", "succeeded", True, 55)
    assert out.doc["makespan_before"] >= 55 and out.doc["makespan_after"] >= 55
    assert (out.doc["repair_method"] is None) == (out.doc["moved_operations"] is None) == (disrupt is None)
    # The method the workflow names repairs (this test named "right_shift", no method, until RunConfig refused
    # unknown names: the repair failed and the run escalated to a patch unseen).
    assert out.doc["repair_method"] == (None if disrupt is None else "right-shift")
    # The case's own run, configured from the workflow's parameters and the case.
    inputs = ExecutionLog(store, sub).events()[0].payload["inputs"]
    assert (inputs["instance"]["name"], inputs["seed"], inputs["disrupt"], inputs["time_limit"],
            inputs["repair_method"]) == ("ft06", int(case["seed"]), disrupt, 0.5, "right-shift")


def _cases(store: FsStore, rows: list[dict[str, Any]]) -> list[str]:
    log = ExecutionLog(store, "r")
    keys = [output_key("wf", "run-case", i) for i in range(len(rows))]
    for key, row in zip(keys, rows, strict=True):
        log.idempotency_put(key, {"doc": row, "params": {}})
    return keys


def test_aggregate_summarises_the_valid_cases_and_names_the_failed_ones(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    rows = [{"run_id": "ok-1", "final_valid": True, "makespan_after": 55},
            {"run_id": "ok-2", "final_valid": True, "makespan_after": 56},
            {"run_id": "bad-1", "final_valid": False, "makespan_after": 1},
            {"run_id": "ok-3", "final_valid": True, "makespan_after": 58},
            {"run_id": "bad-2", "makespan_after": 2}]  # no verdict: not valid
    out = run_step(StepInput(kind="aggregate", node="agg", run_id="r", scope="wf",
                             inputs={"run-case": _cases(store, rows)}), store)
    summary = {"cases": 5, "valid": 3, "mean_makespan": 56.33, "failed": ["bad-1", "bad-2"]}
    assert out.doc == {"summary": summary, "rows": rows}
    assert out.params["summary"] == json.dumps(summary, sort_keys=True, separators=(",", ":"))


def test_aggregate_of_no_valid_case_has_no_mean_and_names_at_most_20_failures(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    rows = [{"run_id": f"bad-{i}", "final_valid": False, "makespan_after": 9} for i in range(22)]
    out = run_step(StepInput(kind="aggregate", node="agg", run_id="r", scope="wf",
                             inputs={"run-case": _cases(store, rows)}), store)
    assert out.doc["summary"] == {"cases": 22, "valid": 0, "mean_makespan": None,
                                  "failed": [f"bad-{i}" for i in range(20)]}


def test_aggregate_without_a_map_dependency_is_refused_naming_the_node(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    with pytest.raises(InputError) as caught:
        run_step(StepInput(kind="aggregate", node="agg", run_id="r", scope="wf",
                           inputs={"one": _cases(store, [{"run_id": "x"}])[0]}), store)
    assert caught.value.message == "aggregate needs a map dependency (the cases)"
    assert caught.value.where == "node agg"


@pytest.fixture
def counted(tmp_path: Path) -> tuple[FsStore, str]:
    store = FsStore(tmp_path)
    key = output_key("wf", "count")
    ExecutionLog(store, "r").idempotency_put(key, {"doc": {"n": 5}, "params": {}})
    return store, key


def test_choose_records_the_branch_it_takes(counted: tuple[FsStore, str]) -> None:
    store, key = counted
    spec = {"choices": [{"when": {"path": "count.n", "op": "ge", "value": 5}, "next": "big"}], "default": "small"}
    out = run_step(StepInput(kind="choose", node="route", run_id="r", scope="wf", choices=spec,
                             inputs={"count": key}), store)
    assert (out.doc, out.params["branch"]) == ({"branch": "big"}, "big")


@pytest.mark.parametrize("when", [
    {"path": "count.n.deeper", "op": "eq", "value": None},  # through a number: missing, not null
    {"path": "count.gone", "op": "eq", "value": None},
    {"path": "count.gone", "op": "exists"},
    {"path": "count.gone", "op": "exists", "negate": True},
    {"path": "count.n", "op": "exists"},
    {"path": "count", "op": "truthy"},
    {"path": "count.xs.1", "op": "eq", "value": "b"},  # a list index, as the runtime reads it
    {"path": "count.xs.2", "op": "exists"},
    {"path": "inputs.instance", "op": "eq", "value": "ft06"},
    {"path": "inputs.gone", "op": "exists"},
])
def test_choose_takes_the_turn_the_local_runtime_takes(tmp_path: Path, when: dict[str, Any]) -> None:
    # The local runtime decides a choice with `evaluate` over the run's inputs and the nodes' outputs; the Argo
    # step must take the same branch on the same documents (it read a missing key as null before).
    store = FsStore(tmp_path)
    key = output_key("wf", "count")
    doc = {"n": 5, "xs": ["a", "b"]}
    ExecutionLog(store, "r").idempotency_put(key, {"doc": doc, "params": {}})
    spec = {"choices": [{"when": when, "next": "yes"}], "default": "no"}
    out = run_step(StepInput(kind="choose", node="route", run_id="r", scope="wf", choices=spec,
                             inputs={"count": key}, run_inputs={"instance": "ft06"}), store)
    local = evaluate(Condition.model_validate(when), {"inputs": {"instance": "ft06"}, "count": doc})
    assert out.doc == {"branch": "yes" if local else "no"}


@pytest.mark.parametrize(("spec", "doc", "param"), [
    ({"default": "small"}, {"branch": "small"}, "small"),  # no choices at all: the default
    ({"choices": [{"when": {"path": "count.n", "op": "gt", "value": 9}, "next": "big"}]}, {"branch": None}, "")])
def test_choose_falls_back_to_the_default_or_to_no_branch(
        counted: tuple[FsStore, str], spec: dict[str, Any], doc: dict[str, Any], param: str) -> None:
    store, key = counted
    out = run_step(StepInput(kind="choose", node="route", run_id="r", scope="wf", choices=spec,
                             inputs={"count": key}), store)
    assert (out.doc, out.params["branch"]) == (doc, param)


def test_gather_holds_each_branchs_output_as_the_local_runtime_does(counted: tuple[FsStore, str]) -> None:
    """A branch handed over, one only in the log (a gated branch is not handed over), one that never ran."""
    store, key = counted
    ExecutionLog(store, "r").idempotency_put(output_key("wf", "gated"), {"doc": {"m": 1}, "params": {}})
    out = run_step(StepInput(kind="gather", node="par", run_id="r", scope="wf",
                             branches=["count", "gated", "skipped"], inputs={"count": key}), store)
    assert out.doc == {"count": {"n": 5}, "gated": {"m": 1}, "skipped": None}


@pytest.mark.parametrize(("item", "where", "message"), [
    (None, "--item", 'a bench-case step needs its case: --item {"instance": ..., "scenario": ..., "seed": ...}'),
    ("not json", "--item", "a bench case is an object with instance, scenario and seed, got 'not json'"),
    ([1, 2], "--item", "a bench case is an object with instance, scenario and seed, got '[1, 2]'"),
    ({"scenario": "none", "seed": 1}, "--item instance", "the case's instance must be a non-empty string, got None"),
    ('{"instance": "ft06", "scenario": "", "seed": 1}', "--item scenario",
     "the case's scenario must be a non-empty string, got ''"),
    ({"instance": "ft06", "scenario": "none", "seed": True}, "--item seed",
     "the case's seed must be a whole number, got True"),
    ({"instance": "ft06", "scenario": "none", "seed": "-1"}, "--item seed",
     "the case's seed must be a whole number, got '-1'"),
    ({"instance": "ft06", "scenario": "none", "seed": 1.5}, "--item seed",
     "the case's seed must be a whole number, got 1.5")])
def test_a_bench_case_without_a_readable_case_is_refused_naming_the_item(
        tmp_path: Path, item: Any, where: str, message: str) -> None:
    # A pod handed no item, or one that is not a case, crashed with a JSONDecodeError or KeyError traceback.
    store = FsStore(tmp_path)
    with pytest.raises(InputError) as e:
        run_step(StepInput(kind="bench-case", node="run-case", run_id="b", scope="wf", item=item), store)
    assert (e.value.where, e.value.message) == (where, message)
    # The step records its failure in the workflow's run; no case run was started.
    assert {k.split("/")[1] for k in store.list(prefix="runs/")} == {"b"}
