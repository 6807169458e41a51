"""`alas step`: outputs through the log, idempotent re-runs, exit codes the retry policy tells apart, the
loop guard, and saga compensation in reverse order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.errors import LoopGuardTripped
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.steps import StepContext, StepInput, StepOutput, item_value, output_key, run_step
from tests.s3server import free_port


def _step(tmp: Path, *args: str) -> int:
    return main(["step", *args, "--store", "fs", "--root", str(tmp / "log"), "--run-id", "r1", "--scope", "wf-1"])


def test_blueprint_then_job_agent_pass_keys_and_rerun_idempotently(tmp_path: Path) -> None:
    assert _step(tmp_path, "blueprint", "--run-input", "instance=ft06", "--outputs", str(tmp_path / "a")) == 0
    assert json.loads((tmp_path / "a" / "jobs").read_text()) == [0, 1, 2, 3, 4, 5]
    key = (tmp_path / "a" / "key").read_text()
    assert key == output_key("wf-1", "blueprint")
    argv = ["job-agent", "--node", "agents", "--item", "2", "--input", f"blueprint={key}", "--outputs"]
    assert _step(tmp_path, *argv, str(tmp_path / "b")) == 0
    assert _step(tmp_path, *argv, str(tmp_path / "c")) == 0  # a retried pod
    expected = output_key("wf-1", "agents", 2)
    assert (tmp_path / "b" / "key").read_text() == (tmp_path / "c" / "key").read_text() == expected
    log = ExecutionLog(FsStore(tmp_path / "log"), "r1")
    events = log.events()
    assert [e.type for e in events if e.node_id == "agents"] == [
        EventType.NODE_STARTED, EventType.NODE_SUCCEEDED, EventType.NODE_IDEMPOTENT_HIT]
    proposal = log.idempotency_get(output_key("wf-1", "agents", 2))
    assert proposal is not None and proposal["doc"]["job"] == 2
    assert len(proposal["doc"]["operations"]) == get_instance("ft06").num_machines


def test_bad_input_exits_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _step(tmp_path, "blueprint", "--run-input", "instance=nope99", "--outputs", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("alas: error:") and "\n" not in err and "nope99" in err
    assert not (tmp_path / "o" / "key").exists()  # nothing half-written
    assert _step(tmp_path, "teleport", "--outputs", str(tmp_path / "o")) == 2
    assert "unknown step kind 'teleport'" in capsys.readouterr().err
    assert _step(tmp_path, "blueprint", "--params", "{oops", "--outputs", str(tmp_path / "o")) == 2
    events = ExecutionLog(FsStore(tmp_path / "log"), "r1").events()
    assert [e.payload["error"] for e in events if e.type is EventType.NODE_FAILED] == ["InputError"]


def test_a_bench_listing_with_a_malformed_seed_exits_2_and_lists_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`seeds='["a"]'` ended the listing pod in a ValueError traceback (exit 1); a string of scenarios fanned
    out one case per letter."""
    for param in ('seeds=["a"]', 'scenarios="breakdown"'):
        assert _step(tmp_path, "bench-plan", "--run-input", "suite=ft06", "--run-input", param, "--outputs",
                     str(tmp_path / "o")) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("alas: error: parameter ") and "\n" not in err
        assert not (tmp_path / "o" / "cases").exists()


def test_nesting_json_cannot_decode_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # json raises RecursionError, not JSONDecodeError, on such text: exit 2 and one line, not a traceback (exit 1)
    # that Argo's retry strategy would take for a transient failure.
    deep = "[" * 5000
    assert _step(tmp_path, "blueprint", "--params", deep, "--outputs", str(tmp_path / "o")) == 2
    assert "--params: params is not JSON: nested too deep to decode" in capsys.readouterr().err
    assert _step(tmp_path, "blueprint", "--run-input", "instance=ft06", "--run-input", f"disruption={deep}",
                 "--outputs", str(tmp_path / "o")) == 2
    assert "workflow parameter 'disruption' is not JSON: nested too deep" in capsys.readouterr().err
    events = ExecutionLog(FsStore(tmp_path / "log"), "r1").events()
    assert [e.payload["error"] for e in events if e.type is EventType.NODE_FAILED] == ["InputError"]
    assert not (tmp_path / "o").exists()
    assert item_value(deep) == deep  # an item that is not JSON is its text, as Argo substituted it


def test_unreachable_store_exits_75(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    for var, value in {"ALAS_STORE__KIND": "s3", "ALAS_STORE__S3_ENDPOINT": f"http://127.0.0.1:{free_port()}",
                       "ALAS_STORE__MAX_RETRIES": "0", "ALAS_STORE__CONNECT_TIMEOUT": "0.5",
                       "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}.items():
        monkeypatch.setenv(var, value)
    code = main(["step", "blueprint", "--run-id", "r1", "--run-input", "instance=ft06", "--outputs",
                 str(tmp_path / "o")])
    assert code == 75  # TransientError: Argo's retryStrategy expression retries exactly this code
    assert "alas: error:" in capsys.readouterr().err


def test_loop_guard_trips_and_is_logged(tmp_path: Path) -> None:
    calls = []

    def never_valid(ctx: StepContext) -> StepOutput:
        calls.append(ctx.previous)
        return StepOutput({"valid": False, "n": len(calls)})

    inp = StepInput(kind="spin", node="spin", run_id="r2", scope="wf", max_iters=3,
                    loop_until={"path": "output.valid", "op": "truthy"})
    store = FsStore(tmp_path)
    with pytest.raises(LoopGuardTripped):
        run_step(inp, store, {"spin": never_valid})
    assert len(calls) == 3 and calls[1] == {"valid": False, "n": 1}
    types = [e.type for e in ExecutionLog(store, "r2").events()]
    assert EventType.LOOP_GUARD_TRIPPED in types and types[-1] is EventType.NODE_FAILED

    def valid_second_time(ctx: StepContext) -> StepOutput:
        return StepOutput({"valid": ctx.previous is not None}, {"extra": "x"})

    out = run_step(inp.model_copy(update={"kind": "ok", "node": "ok"}), store, {"ok": valid_second_time})
    assert out.doc == {"valid": True} and out.params == {"extra": "x", "key": output_key("wf", "ok")}


def test_a_failing_compensation_is_recorded_the_others_still_run_and_a_retry_does_only_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As the local saga: the exit handler goes on past a compensation that fails (recorded ok false), then fails
    with its error; the pod's retry undoes only what is still committed."""
    import alas_argo.step_handlers as step_handlers
    from alas_argo.errors import TransientError

    store = FsStore(tmp_path)
    log = ExecutionLog(store, "r4")
    plan = dispatch(get_instance("ft06")).to_json()
    for node in ("commit-a", "commit-b"):
        version = log.commit_plan(plan, node_id=node, reason=node)
        key = output_key("wf", node)
        log.idempotency_put(key, {"doc": {"version": version}, "params": {}})
        log.append(EventType.NODE_SUCCEEDED, node_id=node, payload={"key": key, "scope": "wf"})
    calls: list[str] = []

    def flaky(ctx: StepContext, committed: dict[str, object], *, node: str) -> dict[str, object]:
        calls.append(node)
        if len(calls) == 1:
            raise TransientError("store busy")
        return step_handlers.retract(ctx, committed, node=node)

    monkeypatch.setitem(step_handlers.COMPENSATORS, "flaky", flaky)
    comps = {"commit-a": {"node": "undo-a", "role": "retract", "params": {}},
             "commit-b": {"node": "undo-b", "role": "flaky", "params": {}}}
    inp = StepInput(kind="compensate", node="compensate", run_id="r4", scope="wf", compensations=comps,
                    status="Failed")
    with pytest.raises(TransientError, match="store busy"):
        run_step(inp, store)
    assert log.retracted() == [1]  # commit-b's undo failed, commit-a's still ran
    done = [(e.node_id, e.payload["compensates"], e.payload["ok"], e.payload.get("error"), e.payload["scope"])
            for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]
    assert done == [("undo-b", "commit-b", False, "TransientError: store busy", "wf"),
                    ("undo-a", "commit-a", True, None, "wf")]
    out = run_step(inp.model_copy(update={"node": "compensate-retry"}), store)
    assert [c["node"] for c in out.doc["compensated"]] == ["commit-b"] and calls == ["undo-b", "undo-b"]
    assert sorted(log.retracted()) == [1, 2] and log.current_plan() is None


def test_a_failed_compensation_the_log_cannot_record_still_fails_with_its_own_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import alas_argo.step_handlers as step_handlers
    from alas_argo.errors import StoreUnavailable, TransientError

    store = FsStore(tmp_path)
    log = ExecutionLog(store, "r5")
    version = log.commit_plan(dispatch(get_instance("ft06")).to_json(), node_id="commit-a", reason="a")
    log.idempotency_put(output_key("wf", "commit-a"), {"doc": {"version": version}, "params": {}})
    log.append(EventType.NODE_SUCCEEDED, node_id="commit-a", payload={"key": output_key("wf", "commit-a"),
                                                                      "scope": "wf"})

    def broken(ctx: StepContext, committed: dict[str, object], *, node: str) -> dict[str, object]:
        raise TransientError("store busy")

    real = ExecutionLog.append

    def append(self: ExecutionLog, type: EventType, **kw: object) -> object:
        if type is EventType.COMPENSATION_FINISHED:
            raise StoreUnavailable("the store went away too")
        return real(self, type, **kw)  # type: ignore[arg-type]

    monkeypatch.setitem(step_handlers.COMPENSATORS, "broken", broken)
    monkeypatch.setattr(ExecutionLog, "append", append)
    inp = StepInput(kind="compensate", node="compensate", run_id="r5", scope="wf", status="Failed",
                    compensations={"commit-a": {"node": "undo-a", "role": "broken", "params": {}}})
    with pytest.raises(TransientError, match="store busy"):
        run_step(inp, store)


def test_compensate_reverses_committed_steps_once(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    log = ExecutionLog(store, "r3")
    inst = get_instance("ft06")
    plan = dispatch(inst).to_json()
    for node in ("commit-a", "commit-b"):  # two saga steps, committed in this order by workflow "wf"
        version = log.commit_plan(plan, node_id=node, reason=node)
        key = output_key("wf", node)
        log.idempotency_put(key, {"doc": {"version": version}, "params": {}})
        log.append(EventType.NODE_SUCCEEDED, node_id=node, payload={"key": key, "scope": "wf"})
    comps = {n: {"node": f"undo-{n}", "role": "retract", "params": {}} for n in ("commit-a", "commit-b")}
    inp = StepInput(kind="compensate", node="compensate", run_id="r3", scope="wf", compensations=comps,
                    status="Succeeded")
    assert run_step(inp, store).doc == {"compensated": []}
    failed = inp.model_copy(update={"status": "Failed", "scope": "wf"})
    out = run_step(failed.model_copy(update={"node": "compensate-1"}), store)
    assert [c["node"] for c in out.doc["compensated"]] == ["commit-b", "commit-a"]  # reverse commit order
    # Each retraction is a logged transition: v2 withdrawn puts v1 back in force, v1 withdrawn leaves none.
    assert out.doc["compensated"] == [{"node": "commit-b", "retracted": 2, "restored": 1},
                                      {"node": "commit-a", "retracted": 1, "restored": None}]
    again = run_step(failed.model_copy(update={"node": "compensate-2"}), store)
    assert again.doc == {"compensated": []}
    assert log.versions() == [1, 2] and log.retracted() == [1, 2] and log.current_plan() is None
    assert [e.payload["version"] for e in log.events() if e.type is EventType.PLAN_RETRACTED] == [2, 1]
    finished = [e.payload["compensates"] for e in log.events() if e.type is EventType.COMPENSATION_FINISHED]
    assert finished == ["commit-b", "commit-a"]
    # Worded as the local saga words them: the compensation node retracts, "compensation of v<n>".
    assert [(e.node_id, e.payload["reason"]) for e in log.events() if e.type is EventType.PLAN_RETRACTED] == [
        ("undo-commit-b", "compensation of v2"), ("undo-commit-a", "compensation of v1")]


def test_choose_takes_the_first_branch_that_holds(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    log = ExecutionLog(store, "r4")
    log.idempotency_put(output_key("wf", "count"), {"doc": {"n": 5}, "params": {}})
    spec = {"choices": [{"when": {"path": "count.n", "op": "gt", "value": 9}, "next": "big"},
                        {"when": {"path": "inputs.mode", "op": "eq", "value": "fast"}, "next": "fast"}],
            "default": "slow"}
    inp = StepInput(kind="choose", node="route", run_id="r4", scope="wf", choices=spec,
                    inputs={"count": output_key("wf", "count")}, run_inputs={"mode": "fast"})
    assert run_step(inp, store).params["branch"] == "fast"
    slow = inp.model_copy(update={"node": "route2", "run_inputs": {"mode": "x"}})
    assert run_step(slow, store).params["branch"] == "slow"


def test_idempotency_key_spans_workflows_of_a_run(tmp_path: Path) -> None:
    calls = []

    def act(ctx: StepContext) -> StepOutput:
        calls.append(ctx.input.scope)
        return StepOutput({"version": len(calls)})

    store = FsStore(tmp_path)
    first = StepInput(kind="act", node="commit", run_id="r5", scope="wf-a", idempotency_key="r5-commit")
    assert run_step(first, store, {"act": act}).doc == {"version": 1}
    second = first.model_copy(update={"scope": "wf-b"})  # another workflow object of the same run
    out = run_step(second, store, {"act": act})
    assert out.doc == {"version": 1} and calls == ["wf-a"]
    assert out.params["key"] == output_key("wf-b", "commit")  # its dependents find it under their own scope
    third = first.model_copy(update={"scope": "wf-c", "idempotency_key": None})
    assert run_step(third, store, {"act": act}).doc == {"version": 2}


def test_output_breaking_the_contract_fails_permanently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = '{"type": "object", "required": ["plan"]}'
    code = _step(tmp_path, "blueprint", "--run-input", "instance=ft06", "--output-contract", contract, "--outputs",
                 str(tmp_path / "o"))
    assert code == 2
    assert "contract" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    events = ExecutionLog(FsStore(tmp_path / "log"), "r1").events()
    assert [e.payload["error"] for e in events if e.type is EventType.NODE_FAILED] == ["ContractError"]


@pytest.mark.parametrize(("first", "code"), [("object", 0), ("string", 2)])
def test_a_contract_is_checked_by_the_dialect_its_schema_names(first: str, code: int, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A draft-07 contract's list form of `items` (each position its own schema) crashed the pod with an
    AttributeError (exit 1, retried) under the 2020-12 validator the step always used; the local runtime reads
    the contract's $schema, and so does the step now."""
    contract = json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                           "properties": {"cases": {"type": "array", "items": [{"type": first}]}}})
    got = _step(tmp_path, "bench-plan", "--run-input", "suite=ft06", "--output-contract", contract, "--outputs",
                str(tmp_path / "o"))
    err = capsys.readouterr().err
    assert got == code, err
    if code:
        assert "output breaks the node's contract at cases/0: " in err and "is not of type 'string'" in err


def test_a_rung_climbs_one_level_citing_the_failure_below_and_records_under_the_node(tmp_path: Path) -> None:
    from alas_argo.errors import InfeasibleError, InputError
    from alas_argo.steps import Handler

    def broken(ctx: StepContext) -> StepOutput:
        raise InfeasibleError("nothing fits", where={"machine": 2})

    def fix(ctx: StepContext) -> StepOutput:
        return StepOutput({"level": ctx.level, "because": str(ctx.failure)})

    table: dict[str, Handler] = {"solve": broken, "fix": fix, "redo": fix}
    spec = {"patch": "fix", "replan": "redo", "maxPatches": 1, "maxReplans": 1}
    store = FsStore(tmp_path)
    base = StepInput(kind="solve", node="work", run_id="r3", scope="wf")
    with pytest.raises(InfeasibleError):
        run_step(base, store, table)  # the node's own task: no spec, so it fails (Argo starts the patch rung)
    rung = base.model_copy(update={"kind": "fix", "rung": "patch", "repair": spec})
    out = run_step(rung, store, table)
    # Recorded under the node, where the consumer's --recorded finds it whichever rung wrote it.
    assert out.params["key"] == output_key("wf", "work")
    assert out.doc["level"] == "patch" and "nothing fits" in out.doc["because"]
    assert run_step(rung, store, table).doc == out.doc  # a retried rung pod: its record, no second climb
    log = ExecutionLog(store, "r3")
    climbed = [e.payload for e in log.events() if e.type is EventType.RECOVERY_ESCALATED]
    assert [(p["from"], p["to"], p["error"]) for p in climbed] == [
        ("retry", "patch", "InfeasibleError: nothing fits (machine 2)")]
    # The replan rung of a node whose pods recorded no failure (killed outright) climbs, saying so.
    replan = rung.model_copy(update={"node": "other", "kind": "redo", "rung": "replan"})
    assert run_step(replan, store, table).doc["level"] == "replan"
    last = [e for e in log.events() if e.type is EventType.RECOVERY_ESCALATED][-1]
    assert (last.node_id, last.payload["from"], last.payload["error"].split(":")[0]) == ("other", "patch", "unknown")
    proposed = [e.payload for e in log.events() if e.type is EventType.PLAN_PROPOSED]
    assert [(p["version"], p["reason"]) for p in proposed] == [(2, "replan")]  # as the local runtime numbers it
    with pytest.raises(InputError, match="not a level"):
        run_step(replan.model_copy(update={"node": "third", "repair": {"patch": "fix"}}), store, table)


def test_a_maps_consumer_derives_the_item_keys_from_the_list_it_fanned_out_over(tmp_path: Path) -> None:
    assert _step(tmp_path, "blueprint", "--run-input", "instance=ft06", "--outputs", str(tmp_path / "a")) == 0
    key = (tmp_path / "a" / "key").read_text()
    jobs = json.loads((tmp_path / "a" / "jobs").read_text())
    for job in jobs:  # {{item}} as Argo substitutes a number
        assert _step(tmp_path, "job-agent", "--node", "propose", "--item", str(job), "--input", f"blueprint={key}",
                     "--outputs", str(tmp_path / f"j{job}")) == 0
    keys = [(tmp_path / f"j{job}" / "key").read_text() for job in jobs]
    # The supervisor given the map's list of keys (as workflows rendered before --mapped did), then given only
    # where the list came from: the same plan.
    assert _step(tmp_path, "supervisor", "--node", "s1", "--input", f"blueprint={key}", "--input",
                 f"propose={json.dumps(keys)}", "--outputs", str(tmp_path / "s1")) == 0
    assert _step(tmp_path, "supervisor", "--node", "s2", "--input", f"blueprint={key}", "--mapped",
                 "propose=blueprint.jobs", "--outputs", str(tmp_path / "s2")) == 0
    log = ExecutionLog(FsStore(tmp_path / "log"), "r1")
    docs = [log.idempotency_get(output_key("wf-1", s)) for s in ("s1", "s2")]
    assert docs[0] is not None and docs[1] is not None
    assert docs[0]["doc"]["plan"] == docs[1]["doc"]["plan"]
    assert docs[1]["doc"]["makespan"] > 0


def test_aggregate_reads_more_cases_than_one_argument_could_name(tmp_path: Path) -> None:
    """2,000 bench cases: their keys as one JSON argument would pass Linux's 128 KiB for one string (the pod could
    not start); derived from the cases list, the aggregate's command line does not grow with them."""
    store = FsStore(tmp_path / "log")
    log = ExecutionLog(store, "r1")
    cases = [{"instance": f"la{i % 40 + 1:02d}", "scenario": ("none", "breakdown")[i // 40 % 2], "seed": i // 80}
             for i in range(2000)]
    log.idempotency_put(output_key("wf-1", "cases"), {"doc": {"cases": cases},
                                                      "params": {"cases": json.dumps(cases)}})
    keys = []
    for i, case in enumerate(cases):
        # The key the case's pod records: its item as Argo substitutes {{item}} (compact JSON), parsed back.
        keys.append(output_key("wf-1", "run-case", json.loads(json.dumps(case, separators=(",", ":")))))
        log.idempotency_put(keys[-1], {"doc": {"run_id": f"r1.{i}", "final_valid": i != 7,
                                               "makespan_after": 100 + i}, "params": {}})
    assert len(set(keys)) == 2000 and len(json.dumps(keys)) > 128 * 1024
    assert _step(tmp_path, "aggregate", "--mapped", "run-case=cases.cases", "--outputs", str(tmp_path / "o")) == 0
    summary = json.loads((tmp_path / "o" / "summary").read_text())
    assert summary["cases"] == 2000 and summary["valid"] == 1999 and summary["failed"] == ["r1.7"]
    assert summary["mean_makespan"] == round((sum(range(100, 2100)) - 107) / 1999, 2)


@pytest.mark.parametrize("items", [["la01", "true", "1"], [1, 2.5, True], [{"b": 1, "a": [1, 2]}, [3, "x"]]])
def test_derived_item_keys_are_the_ones_the_item_pods_recorded(tmp_path: Path, items: list[object]) -> None:
    """Whatever JSON the list holds, the key derived for an item is the one its pod, given Argo's substitution of
    {{item}} (bare text for a string, number or bool, compact JSON otherwise), recorded."""
    store = FsStore(tmp_path / "log")
    log = ExecutionLog(store, "r1")
    given = []
    for item in items:
        # What the pod's --item is: Argo's {{item}}, bare text or compact JSON (the derivation dumps with spaces).
        given.append(item_value(item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))))
        run_step(StepInput(kind="echo", node="fan", run_id="r1", scope="wf", item=given[-1]), store,
                 {"echo": lambda ctx: StepOutput({"item": ctx.input.item})})
    # Each derived key finds a record (a miss is an InputError), and it is that item pod's, in item order.
    recorded = [doc["doc"]["item"] for doc in StepContext(
        StepInput(kind="x", node="x", run_id="r1", scope="wf", run_inputs={"items": json.dumps(items)},
                  mapped={"fan": "inputs.items"}), store, log).dep("fan")]
    assert recorded == given and len(recorded) == len(items)


@pytest.mark.parametrize(("record", "message"), [
    (None, "is not recorded"), ({"doc": {}, "params": {"cases": "[1,"}}, "is not JSON"),
    ({"doc": {}, "params": {"cases": '{"a": 1}'}}, "fanned out over a dict, not a list")])
def test_a_map_list_that_is_missing_or_not_a_list_is_a_one_line_input_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], record: dict[str, object] | None, message: str) -> None:
    if record is not None:
        ExecutionLog(FsStore(tmp_path / "log"), "r1").idempotency_put(output_key("wf-1", "cases"), record)
    assert _step(tmp_path, "aggregate", "--mapped", "run-case=cases.cases", "--outputs", str(tmp_path / "o")) == 2
    err = capsys.readouterr().err
    assert message in err and "map run-case, items 'cases.cases'" in err
    assert not (tmp_path / "o").exists()
