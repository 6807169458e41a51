"""Edges of `alas step` (alas_argo.steps) left open by mutation testing: what each step records in the log (its
start, a reused output, its failure, the winning record, the workflow as correlation id), the in-pod escalation
ladder (tries per level, the escalation and replan records, a transient error stops the climb), the loop
guard's deadline on an injected clock, the one-line refusals naming their node, the Argo output files, and the
exit codes the retry policy tells apart (75 transient, 2 permanent)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from alas_argo import steps
from alas_argo.cli import main
from alas_argo.errors import (
    AlasError,
    ContractError,
    InfeasibleError,
    InputError,
    LoopGuardTripped,
    PermanentError,
    TransientError,
)
from alas_argo.log import Event, EventType, ExecutionLog, FsStore
from alas_argo.step_handlers import HANDLERS
from alas_argo.steps import Handler, StepContext, StepInput, StepOutput, output_key, run_step, write_outputs


def _events(store: FsStore, run: str = "r", *types: EventType) -> list[Event]:
    return [e for e in ExecutionLog(store, run).events() if not types or e.type in types]


def _ok(ctx: StepContext) -> StepOutput:
    return StepOutput({"ok": True, "scope": ctx.input.scope}, {"answer": "42"})


def test_a_step_logs_its_start_and_success_under_the_workflow_as_correlation_id(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    inp = StepInput(kind="ok", node="n", run_id="r", scope="wf", item={"job": 3})
    out = run_step(inp, store, {"ok": _ok})
    key = output_key("wf", "n", {"job": 3})
    assert out.doc == {"ok": True, "scope": "wf"} and out.params == {"answer": "42", "key": key}
    started, succeeded = _events(store)
    assert (started.type, started.node_id, started.payload) == (
        EventType.NODE_STARTED, "n", {"kind": "ok", "scope": "wf", "item": {"job": 3}})
    assert (succeeded.type, succeeded.node_id) == (EventType.NODE_SUCCEEDED, "n")
    assert {k: succeeded.payload[k] for k in ("key", "scope", "item")} == {"key": key, "scope": "wf",
                                                                            "item": {"job": 3}}
    assert {started.correlation_id, succeeded.correlation_id} == {"wf"}


def test_a_retried_pod_logs_the_hit_naming_the_record_it_reuses(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    inp = StepInput(kind="ok", node="n", run_id="r", scope="wf")
    run_step(inp, store, {"ok": _ok})
    def never(ctx: StepContext) -> StepOutput:
        raise AssertionError("a recorded step acted twice")

    again = run_step(inp, store, {"ok": never})  # the recorded output is the answer
    assert again.params == {"answer": "42", "key": output_key("wf", "n")}
    hit = _events(store)[-1]
    assert (hit.type, hit.node_id, hit.payload) == (
        EventType.NODE_IDEMPOTENT_HIT, "n", {"key": output_key("wf", "n"), "scope": "wf"})


def test_a_node_run_under_its_key_by_another_workflow_logs_the_hit_naming_the_key(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    first = StepInput(kind="ok", node="commit", run_id="r", scope="wf-a", idempotency_key="r-commit")
    run_step(first, store, {"ok": _ok})
    out = run_step(first.model_copy(update={"scope": "wf-b"}), store, {"ok": _ok})
    assert out.doc == {"ok": True, "scope": "wf-a"}
    hit = _events(store)[-1]
    assert (hit.type, hit.node_id, hit.payload) == (EventType.NODE_IDEMPOTENT_HIT, "commit", {
        "key": output_key("wf-b", "commit"), "scope": "wf-b", "idempotency_key": "r-commit"})


def test_a_pod_that_lost_the_race_returns_the_winners_output_and_names_its_record(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    key = output_key("wf", "n")

    def raced(ctx: StepContext) -> StepOutput:
        # Another pod of the same node finishes first while this one works.
        ctx.log.idempotency_put(key, {"doc": {"pod": "first"}, "params": {"who": "first"}})
        return StepOutput({"pod": "second"}, {"who": "second"})

    out = run_step(StepInput(kind="raced", node="n", run_id="r", scope="wf", idempotency_key="k"), store,
                   {"raced": raced})
    assert out.doc == {"pod": "first"} and out.params == {"who": "first", "key": key}
    log = ExecutionLog(store, "r")
    spanning = log.idempotency_get("idempotency/k")  # what another workflow of the run will reuse: the winner
    assert spanning is not None and spanning["doc"] == {"pod": "first"}
    succeeded = _events(store, "r", EventType.NODE_SUCCEEDED)[-1]
    assert isinstance(succeeded.payload["record_hash"], str) and log.verify().ok


def test_an_unknown_kind_is_refused_listing_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        run_step(StepInput(kind="teleport", node="n", run_id="r", scope="wf"), FsStore(tmp_path),
                 {"b": _ok, "a": _ok})
    assert caught.value.message == "unknown step kind 'teleport' (known: a, b)"
    assert caught.value.where == "alas step"


@pytest.mark.parametrize("error", [TransientError("the store blinked"), InfeasibleError("nothing fits")])
def test_a_failure_is_logged_with_its_type_message_and_whether_it_is_transient(
        tmp_path: Path, error: AlasError) -> None:
    def fail(ctx: StepContext) -> StepOutput:
        raise error

    store = FsStore(tmp_path)
    with pytest.raises(type(error)):
        run_step(StepInput(kind="fail", node="n", run_id="r", scope="wf"), store, {"fail": fail})
    failed = _events(store)[-1]
    assert (failed.type, failed.node_id, failed.payload) == (EventType.NODE_FAILED, "n", {
        "scope": "wf", "error": type(error).__name__, "message": str(error), "transient": error.transient})


@pytest.mark.parametrize(("contract", "where"), [
    ({"type": "array"}, "output"),  # the document as a whole
    ({"type": "object", "properties": {"ok": {"type": "string"}}}, "ok")])
def test_a_contract_violation_names_where_in_the_output_and_the_node(
        tmp_path: Path, contract: dict[str, Any], where: str) -> None:
    with pytest.raises(ContractError) as caught:
        run_step(StepInput(kind="ok", node="n", run_id="r", scope="wf", output_contract=contract),
                 FsStore(tmp_path), {"ok": _ok})
    assert caught.value.message.startswith(f"output breaks the node's contract at {where}: ")
    assert caught.value.where == "node n"


class Clock:
    """A monotonic clock the test moves (the loop guard's deadline never reads the wall clock here)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


def test_the_loop_guard_counts_iterations_and_logs_them_under_the_node(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    inp = StepInput(kind="spin", node="spin", run_id="r", scope="wf", max_iters=3,
                    loop_until={"path": "output.done", "op": "truthy"})
    with pytest.raises(LoopGuardTripped) as caught:
        run_step(inp, store, {"spin": lambda ctx: StepOutput({"done": False})})
    assert (caught.value.message, caught.value.where) == ("loop did not finish in 3 iterations", "node spin")
    tripped = _events(store, "r", EventType.LOOP_GUARD_TRIPPED)
    assert [(e.node_id, e.payload) for e in tripped] == [("spin", {"iterations": 3})]


def test_the_loop_guard_trips_once_the_deadline_is_passed_not_when_reached(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock(100.0)
    monkeypatch.setattr(steps, "time", SimpleNamespace(monotonic=clock.monotonic))

    def slow(ctx: StepContext) -> StepOutput:
        clock.now += 10  # each iteration takes 10 s
        return StepOutput({"done": False})

    inp = StepInput(kind="slow", node="spin", run_id="r", scope="wf", max_iters=10, loop_deadline=20,
                    loop_until={"path": "output.done", "op": "truthy"})
    with pytest.raises(LoopGuardTripped) as caught:
        run_step(inp, FsStore(tmp_path), {"slow": slow})
    # 10 s and 20 s in: within the deadline; 30 s in: past it, after the third iteration.
    assert caught.value.message == "loop did not finish in 3 iterations (deadline)"
    assert clock.now == 130.0


def _table(calls: list[str], **behaviour: Any) -> dict[str, Handler]:
    """Handlers by kind that note each call (kind, level, the error being recovered from) and then raise the
    error ``behaviour`` gives the kind, or return their level."""

    def handler(kind: str) -> Handler:
        def run(ctx: StepContext) -> StepOutput:
            calls.append(f"{kind}@{ctx.level}<{ctx.failure}>")
            outcome = behaviour.get(kind.replace("-", "_"))
            if isinstance(outcome, BaseException):
                raise outcome
            return StepOutput({"level": ctx.level, "kind": kind})
        return run

    return {kind: handler(kind) for kind in ("solve", "fix-it", "redo")}


def _escalations(store: FsStore) -> list[tuple[str | None, str, str, str]]:
    return [(e.node_id, e.payload["from"], e.payload["to"], e.payload["error"])
            for e in _events(store, "r", EventType.RECOVERY_ESCALATED)]


def test_the_in_pod_ladder_tries_each_level_as_often_as_the_spec_says(tmp_path: Path) -> None:
    calls: list[str] = []
    table = _table(calls, solve=InfeasibleError("no plan"), fix_it=PermanentError("patch failed"))
    store = FsStore(tmp_path)
    spec = {"patch": "fix_it", "replan": "redo", "maxPatches": 2}
    out = run_step(StepInput(kind="solve", node="n", run_id="r", scope="wf", repair=spec), store, table)
    assert out.doc == {"level": "replan", "kind": "redo"} and out.params == {"key": output_key("wf", "n")}
    # Each try sees the error it recovers from: the node's, then the patch's own.
    assert calls == ["solve@run<None>", "fix-it@patch<no plan>", "fix-it@patch<patch failed>",
                     "redo@replan<patch failed>"]
    assert _escalations(store) == [("n", "retry", "patch", "InfeasibleError: no plan"),
                                   ("n", "patch", "replan", "PermanentError: patch failed")]
    proposed = _events(store, "r", EventType.PLAN_PROPOSED)
    assert [(e.node_id, e.payload) for e in proposed] == [("n", {"version": 2, "reason": "replan", "scope": "wf"})]


def test_a_ladder_whose_every_level_fails_fails_with_the_last_error(tmp_path: Path) -> None:
    calls: list[str] = []
    table = _table(calls, solve=InfeasibleError("no plan"), fix_it=PermanentError("patch failed"),
                   redo=InputError("replan failed"))
    store = FsStore(tmp_path)
    with pytest.raises(InputError, match="replan failed"):
        run_step(StepInput(kind="solve", node="n", run_id="r", scope="wf",
                           repair={"patch": "fix_it", "replan": "redo"}), store, table)
    assert calls == ["solve@run<None>", "fix-it@patch<no plan>", "redo@replan<patch failed>"]  # once each
    assert _events(store)[-1].payload["error"] == "InputError"
    assert ExecutionLog(store, "r").idempotency_get(output_key("wf", "n")) is None


def test_the_replan_level_is_tried_as_often_as_the_spec_says(tmp_path: Path) -> None:
    calls: list[str] = []
    table = _table(calls, solve=InfeasibleError("no plan"), redo=InputError("replan failed"))
    with pytest.raises(InputError, match="replan failed"):
        run_step(StepInput(kind="solve", node="n", run_id="r", scope="wf", repair={"replan": "redo", "maxReplans": 2}),
                 FsStore(tmp_path), table)
    assert calls == ["solve@run<None>", "redo@replan<no plan>", "redo@replan<replan failed>"]


def test_a_transient_error_on_the_ladder_stops_the_climb_for_argo_to_retry(tmp_path: Path) -> None:
    calls: list[str] = []
    table = _table(calls, solve=InfeasibleError("no plan"), fix_it=TransientError("the store blinked"))
    store = FsStore(tmp_path)
    with pytest.raises(TransientError):
        run_step(StepInput(kind="solve", node="n", run_id="r", scope="wf",
                           repair={"patch": "fix_it", "replan": "redo", "maxPatches": 3}), store, table)
    assert calls == ["solve@run<None>", "fix-it@patch<no plan>"]
    assert _events(store)[-1].payload["transient"] is True


def test_a_patch_breaking_the_contract_counts_as_a_failed_try(tmp_path: Path) -> None:
    calls: list[str] = []
    store = FsStore(tmp_path)
    contract = {"type": "object", "properties": {"level": {"const": "replan"}}}
    table = _table(calls, solve=InfeasibleError("no plan"))
    out = run_step(StepInput(kind="solve", node="n", run_id="r", scope="wf", output_contract=contract,
                             repair={"patch": "fix_it", "replan": "redo"}), store, table)
    assert out.doc["level"] == "replan" and calls[-1].startswith(
        "redo@replan<node n: output breaks the node's contract at level: ")


def test_each_item_of_a_map_climbs_its_own_ladder_and_replans_are_numbered_per_workflow(tmp_path: Path) -> None:
    calls: list[str] = []
    store = FsStore(tmp_path)
    table = _table(calls, solve=InfeasibleError("no plan"), fix_it=PermanentError("patch failed"))
    ExecutionLog(store, "r").append(EventType.PLAN_PROPOSED, node_id="n", payload={
        "version": 2, "reason": "replan", "scope": "wf-other"})  # another workflow's replan
    ExecutionLog(store, "r").append(EventType.PLAN_PROPOSED, node_id="n", payload={
        "version": 1, "reason": "plan", "scope": "wf"})  # not a replan
    inp = StepInput(kind="solve", node="n", run_id="r", scope="wf", repair={"patch": "fix_it", "replan": "redo"})
    for item in (1, 2):
        run_step(inp.model_copy(update={"item": item}), store, table)
    assert [(f, t) for _, f, t, _ in _escalations(store)] == [("retry", "patch"), ("patch", "replan")] * 2
    replans = [e.payload["version"] for e in _events(store, "r", EventType.PLAN_PROPOSED)
               if e.payload["scope"] == "wf" and e.payload["reason"] == "replan"]
    assert replans == [2, 3]


def test_a_level_whose_role_has_no_step_kind_is_refused_naming_it(tmp_path: Path) -> None:
    table = _table([], solve=InfeasibleError("no plan"))
    with pytest.raises(InputError) as caught:
        run_step(StepInput(kind="solve", node="n", run_id="r", scope="wf", repair={"patch": "glue"}),
                 FsStore(tmp_path), table)
    assert (caught.value.message, caught.value.where) == ("no step kind 'glue' for the patch level", "node n")


def test_a_rung_is_refused_naming_the_levels_there_are(tmp_path: Path) -> None:
    table = _table([])
    base = StepInput(kind="fix-it", node="n", run_id="r", scope="wf", rung="replan")
    for spec, levels in (({}, "none"), ({"patch": "fix_it", "maxPatches": 2}, "patch")):
        with pytest.raises(InputError) as caught:
            run_step(base.model_copy(update={"repair": spec}), FsStore(tmp_path), table)
        assert caught.value.message == f"--rung 'replan' is not a level of the repair spec ({levels})"
        assert caught.value.where == "node n"
    with pytest.raises(InputError, match=r"\(patch, replan\)"):
        run_step(base.model_copy(update={"rung": "other", "repair": {"patch": "a", "replan": "b"}}),
                 FsStore(tmp_path), table)


def test_a_rung_recovers_from_the_failure_below_as_an_error_about_its_node(tmp_path: Path) -> None:
    seen: list[AlasError | None] = []

    def fix(ctx: StepContext) -> StepOutput:
        seen.append(ctx.failure)
        return StepOutput({})

    run_step(StepInput(kind="fix", node="n", run_id="r", scope="wf", rung="patch", repair={"patch": "fix"}),
             FsStore(tmp_path), {"fix": fix})
    assert isinstance(seen[0], PermanentError) and seen[0].where == "node n"


def test_write_outputs_writes_each_parameter_whole_into_a_new_or_existing_directory(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    write_outputs(root, StepOutput({}, {"branch": "débit", "cases": "[1]"}))
    write_outputs(root, StepOutput({}, {"branch": "again"}))  # a retried pod, the directory there already
    assert sorted(p.name for p in root.iterdir()) == ["branch", "cases"]  # no temporary file left
    assert (root / "branch").read_text(encoding="utf-8") == "again"
    assert (root / "cases").read_bytes() == b"[1]"


@pytest.mark.parametrize(("error", "code"), [(TransientError("the store blinked"), 75),
                                             (InfeasibleError("nothing fits"), 2)])
def test_the_step_command_exits_75_on_a_transient_failure_and_2_on_a_permanent_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: AlasError,
        code: int) -> None:
    def fail(ctx: StepContext) -> StepOutput:
        raise error

    monkeypatch.setitem(HANDLERS, "flaky", fail)
    out = tmp_path / "out"
    assert main(["step", "flaky", "--run-id", "r", "--scope", "wf", "--store", "fs", "--root", str(tmp_path / "log"),
                 "--outputs", str(out)]) == code
    assert str(error) in capsys.readouterr().err
    assert not out.exists()  # Argo is handed no output
    failed = _events(FsStore(tmp_path / "log"))[-1]
    assert (failed.type, failed.payload["transient"]) == (EventType.NODE_FAILED, code == 75)
    monkeypatch.setitem(HANDLERS, "flaky", _ok)  # Argo's retry of the transient failure, or a fixed rerun
    assert main(["step", "flaky", "--run-id", "r", "--scope", "wf", "--store", "fs", "--root", str(tmp_path / "log"),
                 "--outputs", str(out)]) == 0
    assert (out / "answer").read_text() == "42" and (out / "key").read_text() == output_key("wf", "flaky")


def test_the_fields_a_gate_or_a_map_reads_are_written_as_output_parameters(tmp_path: Path) -> None:
    """Argo reads a gate's field and a map's list from the producer's output parameters, whatever its role wrote:
    a string as itself (the gate quotes it), anything else as compact JSON; what the role wrote stays, a retried
    pod exports as the first did, and a missing field is named at its producer (a gate on Argo cannot read it as
    missing, as the local runtime does)."""
    store = FsStore(tmp_path)

    def role(ctx: StepContext) -> StepOutput:
        return StepOutput({"name": "ft06", "n": 3, "jobs": [2, 1], "answer": {"b": 1, "a": 2}}, {"answer": "mine"})

    inp = StepInput(kind="role", node="n", run_id="r", scope="wf", exports=["name", "n", "jobs", "answer"])
    first = run_step(inp, store, {"role": role})
    assert first.params == {"name": "ft06", "n": "3", "jobs": "[2,1]", "answer": "mine", "key": output_key("wf", "n")}
    assert run_step(inp, store, {"role": role}).params == first.params
    # A record made by a pod that exported less (an older template): its retry exports what it is asked now.
    older = inp.model_copy(update={"node": "o", "exports": []})
    assert run_step(older, store, {"role": role}).params == {"answer": "mine", "key": output_key("wf", "o")}
    retried = run_step(older.model_copy(update={"exports": ["name"]}), store, {"role": role})
    assert retried.params == {"answer": "mine", "name": "ft06", "key": output_key("wf", "o")}
    with pytest.raises(ContractError) as missing:
        run_step(inp.model_copy(update={"node": "m", "exports": ["gone"]}), store, {"role": role})
    assert (missing.value.message, missing.value.where) == (
        "the output has no field 'gone', which the workflow reads from this node (a gate or a map)", "node m")
