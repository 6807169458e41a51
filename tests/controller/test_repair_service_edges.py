"""The repair service's edges that the mutation run of ``controller/repair_service.py`` found untested
(bench/README, mutation testing): what a replay after a crash does, a key reused or raced by another replica,
the compare-and-swap retries, where the instance and the disruption in force come from, what the log and the
metrics record, and how many repairs run at once. All on a filesystem store with real repairs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alas_argo.controller import DisruptionRequest, RepairResponse, RepairService, RunNotFound
from alas_argo.errors import ConflictError, InfeasibleError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, carry_forward
from alas_argo.jssp.disruption_families import generate_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import FirstEdit, RepairResult, repair
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.log.replay import replay_log
from alas_argo.metrics import REGISTRY
from alas_argo.step_context import output_key
from tests.controller.conftest import greedy

REQUEST = DisruptionRequest.model_validate(
    {"time": 2, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3}],
     "method": "right-shift"})
#: Another request (another machine): what a concurrent client asks.
OTHER = DisruptionRequest.model_validate(
    {"time": 2, "events": [{"kind": "machine_breakdown", "machine": 1, "start": 3, "duration": 2}],
     "method": "right-shift"})
#: How long a test waits for a thread to reach a point before it fails (never reached when the code is right).
PATIENCE = 30.0


class Counting:
    """The real repair, counting its calls; ``before`` runs first on each call (what a concurrent actor does
    meanwhile)."""

    def __init__(self, before: Callable[[int], object] | None = None) -> None:
        self.calls = 0
        self.before = before

    def __call__(self, *args: Any, **kwargs: Any) -> RepairResult:
        self.calls += 1
        if self.before is not None:
            self.before(self.calls)
        return repair(*args, **kwargs)


def new_run(store: FsStore, run_id: str, instance: Instance, *, record: dict[str, Any] | None = None) -> ExecutionLog:
    """A run whose ``run.started`` records ``record`` (the whole instance by default; nothing when empty) and
    whose greedy plan is v1."""
    log = ExecutionLog(store, run_id)
    ref = instance.to_json() if record is None else record
    if ref:
        log.append(EventType.RUN_STARTED, payload={"instance": ref})
    assert log.commit_plan(greedy(instance).to_json(), reason="plan") == 1
    return log


def count(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


@pytest.fixture
def store(tmp_path: Path) -> FsStore:
    return FsStore(tmp_path / "log")


def lose_records(store: FsStore, run_id: str) -> None:
    """Delete the run's idempotency records, as if the process died right after its commit."""
    records = list((store.root / "runs" / run_id / "idempotency").glob("*.json"))
    assert records
    for record in records:
        record.unlink()


def wait_until(condition: Callable[[], bool]) -> None:
    """Poll until ``condition`` holds; fail after PATIENCE seconds."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


# ---- the log a controller repair leaves can be replayed ---------------------------------------------------------

@pytest.mark.parametrize("bundled", [False, True], ids=["custom-instance", "ft06"])
def test_a_controller_repair_replays_with_parity(store: FsStore, tiny: Instance, bundled: bool) -> None:
    """repair.finished must name an instance replay can rebuild: a custom one in full, a bundled one by name."""
    instance = get_instance("ft06") if bundled else tiny
    new_run(store, "r", instance)
    lcrp = REQUEST.model_copy(update={"method": "lcrp", "budget": 1.0})
    RepairService(store).handle("r", REQUEST, "k1")
    RepairService(store).handle("r", lcrp.model_copy(update={"time": 3}), "k2")
    log = ExecutionLog(store, "r")
    finished = [e for e in log.events() if e.type is EventType.REPAIR_FINISHED]
    expected = {"name": "ft06"} if bundled else tiny.to_json()
    assert [e.payload["instance"] for e in finished] == [expected, expected]
    report = replay_log(log)
    assert [(s.kind, s.parity) for s in report.steps] == [("repair", True), ("repair", True)], report.summary()


# ---- a retried request ----------------------------------------------------------------------------------------

def test_a_replay_after_a_lost_record_repairs_nothing_and_appends_nothing(store: FsStore, tiny: Instance) -> None:
    """A key whose record died with the process is answered from its commit, without a second repair."""
    new_run(store, "r", tiny)
    first = RepairService(store).handle("r", REQUEST, "k1")
    lose_records(store, "r")
    events = len(ExecutionLog(store, "r").events())
    counting = Counting()
    again = RepairService(store, repairer=counting).handle("r", REQUEST, "k1")
    assert again == first.model_copy(update={"idempotent_replay": True})
    assert counting.calls == 0
    assert len(ExecutionLog(store, "r").events()) == events


@pytest.mark.parametrize("record", ["kept", "lost"])
def test_a_key_reused_for_another_request_is_refused_and_changes_nothing(store: FsStore, tiny: Instance,
                                                                        record: str) -> None:
    """The fingerprint check, against the idempotency record or (record lost) against the commit's meta."""
    new_run(store, "r", tiny)
    RepairService(store).handle("r", REQUEST, "k1")
    if record == "lost":
        lose_records(store, "r")
    events = len(ExecutionLog(store, "r").events())
    counting = Counting()
    with pytest.raises(InputError) as refused:
        RepairService(store, repairer=counting).handle("r", OTHER, "k1")
    assert (refused.value.message, refused.value.where) == (
        "Idempotency-Key was already used for a different request", "Idempotency-Key")
    assert counting.calls == 0 and len(ExecutionLog(store, "r").events()) == events


def test_a_replica_that_loses_its_key_to_another_answers_that_commit_as_a_replay(store: FsStore,
                                                                                  tiny: Instance) -> None:
    """Two replicas repairing the same request under one key: the one whose commit finds the key taken
    answers the other's commit (200, a replay) and counts no commit of its own."""
    new_run(store, "r", tiny)
    other_replica, won = RepairService(store), []
    racing = Counting(before=lambda _: won.append(other_replica.handle("r", REQUEST, "k1")))
    committed = count("alas_plans_committed_total", {"source": "repair"})
    lost = RepairService(store, repairer=racing).handle("r", REQUEST, "k1")
    assert racing.calls == 1 and not won[0].idempotent_replay
    assert lost == won[0].model_copy(update={"idempotent_replay": True})
    assert ExecutionLog(store, "r").versions() == [1, 2]
    assert count("alas_plans_committed_total", {"source": "repair"}) == committed + 1


def test_a_replica_whose_key_is_taken_meanwhile_by_another_request_is_refused(store: FsStore,
                                                                              tiny: Instance) -> None:
    """The fingerprint check after the commit: the key's commit holds another request's repair."""
    new_run(store, "r", tiny)
    other_replica = RepairService(store)
    racing = Counting(before=lambda _: other_replica.handle("r", OTHER, "k1"))
    with pytest.raises(InputError) as refused:
        RepairService(store, repairer=racing).handle("r", REQUEST, "k1")
    assert (refused.value.message, refused.value.where) == (
        "Idempotency-Key was already used for a different request", "Idempotency-Key")
    log = ExecutionLog(store, "r")
    assert log.versions() == [1, 2]
    assert log.plan_event(2).payload["meta"]["disruption"] == OTHER.disruption().to_json()


@pytest.mark.parametrize("first", ["step", "controller"])
def test_a_key_shaped_like_a_step_record_stays_apart_from_it(store: FsStore, tiny: Instance, first: str) -> None:
    """The controller's idempotency records live under ``controller/<key>``, as its commit keys do: a client key
    spelled like a workflow step's output record (``output/<scope>/<node>``) neither is refused because the
    step recorded there, nor takes the place of the step's record."""
    new_run(store, "r", tiny)
    key = output_key("wf-1", "commit-plan")
    step = {"doc": {"version": 1}, "params": {"version": "1"}}
    if first == "step":
        ExecutionLog(store, "r").idempotency_claim(key, step)
    response = RepairService(store).handle("r", REQUEST, key)
    assert (response.version, response.idempotent_replay) == (2, False)
    recorded = ExecutionLog(store, "r").idempotency_get(key)
    assert recorded == (step if first == "step" else None)
    assert RepairService(store).handle("r", REQUEST, key) == response.model_copy(update={"idempotent_replay": True})


def test_a_record_kept_under_the_bare_key_by_the_previous_version_is_still_answered(store: FsStore,
                                                                                     tiny: Instance) -> None:
    """Records moved under ``controller/<key>`` (cd7aec2): a retry of a request answered before finds its commit by
    the key in the head, answers it without repairing, and still refuses the key for another request."""
    new_run(store, "r", tiny)
    first = RepairService(store).handle("r", REQUEST, "k1")
    log = ExecutionLog(store, "r")
    record = log.idempotency_get("controller/k1")
    assert record is not None
    lose_records(store, "r")
    log.idempotency_put("k1", record)  # where the previous version kept it
    events = len(log.events())
    assert RepairService(store).handle("r", REQUEST, "k1") == first.model_copy(update={"idempotent_replay": True})
    with pytest.raises(InputError, match="already used for a different request"):
        RepairService(store).handle("r", OTHER, "k1")
    assert len(ExecutionLog(store, "r").events()) == events


# ---- the compare-and-swap -------------------------------------------------------------------------------------

#: What another replica commits while ours repairs, one per attempt (later starts, so each fits its plan).
MEANWHILE = [DisruptionRequest.model_validate(
    {"time": 2, "events": [{"kind": "machine_breakdown", "machine": machine, "start": start, "duration": 1}],
     "method": "right-shift"}) for machine, start in ((1, 3), (2, 4), (1, 6))]


def test_a_plan_that_keeps_changing_is_a_conflict_after_three_repairs(store: FsStore, tiny: Instance) -> None:
    """By default three lost compare-and-swaps end the request with a ConflictError naming the run, each
    counted as a retry; the request commits nothing."""
    new_run(store, "r", tiny)
    other_replica = RepairService(store)
    racing = Counting(before=lambda n: other_replica.handle("r", MEANWHILE[n - 1], f"other-{n}"))
    retries = count("alas_policy_events_total", {"event": "retry"})
    with pytest.raises(ConflictError) as conflict:
        RepairService(store, repairer=racing).handle("r", REQUEST, "k1")
    assert (conflict.value.message, conflict.value.where) == (
        "the plan of run r kept changing during the repair; try again", "run r")
    assert racing.calls == 3
    assert count("alas_policy_events_total", {"event": "retry"}) == retries + 3
    log = ExecutionLog(store, "r")
    assert log.versions() == [1, 2, 3, 4]
    assert [log.plan_event(v).payload["meta"]["idempotency_key"] for v in (2, 3, 4)] == [
        "other-1", "other-2", "other-3"]


def test_a_lost_compare_and_swap_repairs_the_new_plan_and_carries_its_disruption(store: FsStore,
                                                                               tiny: Instance) -> None:
    """The retry starts from the version that won and keeps the disruption that version was repaired for."""
    new_run(store, "r", tiny)
    other_replica = RepairService(store)
    racing = Counting(before=lambda n: other_replica.handle("r", OTHER, "o") if n == 1 else None)
    response = RepairService(store, repairer=racing).handle("r", REQUEST, "k1")
    assert racing.calls == 2
    assert (response.version, response.parent_version, response.idempotent_replay) == (3, 2, False)
    meta = ExecutionLog(store, "r").plan_event(3).payload["meta"]
    assert meta["disruption"] == carry_forward(OTHER.disruption(), REQUEST.disruption()).to_json()


def test_a_plan_committed_without_its_disruption_takes_the_one_observed_before_it(store: FsStore,
                                                                                tiny: Instance) -> None:
    """A pipeline's repair commit records no disruption in its meta: the disruption observed before it is the
    one in force, and the controller carries it forward."""
    log = new_run(store, "r", tiny)
    earlier = Disruption.model_validate(
        {"time": 1, "events": [{"kind": "machine_breakdown", "machine": 2, "start": 1, "duration": 20}]})
    log.append(EventType.DISRUPTION_OBSERVED, node_id="disrupt_1",
               payload={"index": 1, "disruption": earlier.to_json(), "baseline_version": 1})
    repaired = repair(tiny, greedy(tiny), earlier, "right-shift")
    assert log.commit_plan(repaired.schedule.to_json(), node_id="commit_1", reason="repair of disruption 1",
                           meta={"valid": True}) == 2
    response = RepairService(store).handle("r", REQUEST, "k1")
    assert (response.version, response.parent_version) == (3, 2)
    in_force = carry_forward(earlier, REQUEST.disruption())
    assert len(in_force.events) == 2  # the downtime of machine 2 has not ended at 2
    assert ExecutionLog(store, "r").plan_event(3).payload["meta"]["disruption"] == in_force.to_json()



def test_a_request_beaten_by_a_commit_without_a_disruption_carries_its_own_only_once(store: FsStore,
                                                                                    tiny: Instance) -> None:
    """The first attempt's own `disruption.observed` was the latest before the restore that beat it, so the retry
    took it for the restored plan's disruption and carried it forward onto itself: the committed disruption
    listed the request's breakdown twice."""
    new_run(store, "r", tiny)
    racing = Counting(before=lambda n: ExecutionLog(store, "r").restore(1) if n == 1 else None)
    response = RepairService(store, repairer=racing).handle("r", REQUEST, "k1")
    assert racing.calls == 2 and (response.version, response.parent_version) == (3, 2)
    committed = ExecutionLog(store, "r").plan_event(3).payload["meta"]["disruption"]
    assert committed == REQUEST.disruption().to_json()  # once, as nothing else was in force


def test_a_failed_request_is_not_carried_into_the_next_ones_repair(store: FsStore, tiny: Instance) -> None:
    """A request whose repair failed leaves its observation as the latest before a later commit without a
    disruption (a restore): the next request used to carry that failed disruption into its own repair."""
    log = new_run(store, "r", tiny)

    def failing(*args: Any, **kwargs: Any) -> RepairResult:
        raise InfeasibleError("no plan", where="test")

    with pytest.raises(InfeasibleError):
        RepairService(store, repairer=failing).handle("r", OTHER, "bad")
    assert log.restore(1) == 2
    response = RepairService(store).handle("r", REQUEST, "k1")
    assert (response.version, response.parent_version) == (3, 2)
    assert ExecutionLog(store, "r").plan_event(3).payload["meta"]["disruption"] == REQUEST.disruption().to_json()


# ---- the run's instance -----------------------------------------------------------------------------------------

def test_a_run_that_names_its_bundled_instance_is_repaired_on_it(store: FsStore) -> None:
    """run.started holds only {"name": "ft06"} (no later event holds the instance)."""
    ft06 = get_instance("ft06")
    new_run(store, "r", ft06, record={"name": "ft06"})
    response = RepairService(store).handle("r", REQUEST, "k1")
    assert response.baseline_makespan == greedy(ft06).makespan and response.version == 2


def test_a_run_whose_log_names_no_instance_is_repaired_on_the_one_its_plan_names(store: FsStore) -> None:
    """No event holds the instance: the plan's ``instance`` field names it."""
    ft06 = get_instance("ft06")
    new_run(store, "r", ft06, record={})
    assert ExecutionLog(store, "r").first(EventType.RUN_STARTED) is None
    response = RepairService(store).handle("r", REQUEST, "k1")
    assert response.baseline_makespan == greedy(ft06).makespan and response.version == 2


def test_the_instance_the_log_names_outranks_the_plans_own_label(store: FsStore) -> None:
    """The plan's ``instance`` field is only the fallback: a log naming ft06 is repaired on ft06 even when the
    plan document carries another label."""
    ft06 = get_instance("ft06")
    log = ExecutionLog(store, "r")
    log.append(EventType.RUN_STARTED, payload={"instance": {"name": "ft06"}})
    log.commit_plan({**greedy(ft06).to_json(), "instance": "ft06 (dispatched)"})
    response = RepairService(store).handle("r", REQUEST, "k1")
    assert response.baseline_makespan == greedy(ft06).makespan and response.version == 2


# ---- what is recorded -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("retracted", "message"), [
    ((), "run r has no committed plan in force to repair"),
    ((2, 1), "run r has no committed plan in force to repair (retracted: v1, v2)"),
])
def test_a_run_without_a_plan_in_force_is_not_found_and_says_why(store: FsStore, tiny: Instance,
                                                                 retracted: tuple[int, ...], message: str) -> None:
    """The 404's message names the retracted versions, if any; nothing is appended."""
    log = ExecutionLog(store, "r")
    log.append(EventType.RUN_STARTED, payload={"instance": tiny.to_json()})
    if retracted:
        log.commit_plan(greedy(tiny).to_json())
        log.commit_plan(greedy(tiny).to_json())
        for version in retracted:
            log.retract(version)
    events = len(log.events())
    with pytest.raises(RunNotFound) as missing:
        RepairService(store).handle("r", REQUEST, "k1")
    assert (missing.value.message, missing.value.where) == (message, "run r")
    assert len(ExecutionLog(store, "r").events()) == events


def test_the_log_records_who_observed_what_from_which_base(store: FsStore, tiny: Instance) -> None:
    """The controller's events and commit are attributed to it and name the base version they started from."""
    new_run(store, "r", tiny)
    RepairService(store).handle("r", REQUEST, "k1")
    observed, started, finished, committed = ExecutionLog(store, "r").events()[-4:]
    assert [(e.type, e.node_id) for e in (observed, started, finished, committed)] == [
        (EventType.DISRUPTION_OBSERVED, "controller"), (EventType.REPAIR_STARTED, "controller"),
        (EventType.REPAIR_FINISHED, "controller"), (EventType.PLAN_COMMITTED, "controller")]
    assert observed.payload == {"disruption": REQUEST.disruption().to_json(), "source": "controller",
                                "base_version": 1}
    assert started.payload == {"method": "right-shift", "base_version": 1}
    assert committed.payload["idempotency_key"] == "controller/k1"
    assert (committed.payload["meta"]["source"], committed.payload["meta"]["idempotency_key"]) == ("controller", "k1")


def test_the_request_budget_reaches_the_repair(store: FsStore, tiny: Instance) -> None:
    """LCRP's first time box is bounded by the request's budget (0.05 s here; 0.10 s from any budget >= 1)."""
    new_run(store, "r", tiny)
    lcrp = REQUEST.model_copy(update={"method": "lcrp", "budget": 0.05, "first_edit": FirstEdit.REDISPATCH})
    RepairService(store).handle("r", lcrp, "k1")
    finished = ExecutionLog(store, "r").events()[-2]
    assert finished.type is EventType.REPAIR_FINISHED and finished.payload["budget"] == 0.05
    assert "aor: makespan 16; time box 0.05 s" in finished.payload["metrics"]["notes"]


@pytest.mark.parametrize("plan", ["one-operation", "tiny"])
def test_a_repair_is_counted_once_with_its_figures(store: FsStore, tiny: Instance, plan: str) -> None:
    """One committed repair: one commit and one repair counted, and its figures observed, the makespan gap
    relative to the plan in force: (16 - 11) / 11 on tiny, and (2 - 1) / 1 for a one-operation plan
    (makespan 1) shifted by one."""
    if plan == "tiny":
        instance, request, figures = tiny, REQUEST, (11, 16)
    else:
        instance = Instance(name="one", jobs=[[(0, 1)]], lower_bound=None, upper_bound=None)
        request, figures = DisruptionRequest.model_validate(
            {"time": 0, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 0, "duration": 1}],
             "method": "right-shift"}), (1, 2)
    new_run(store, "r", instance)
    method = {"method": "right-shift"}
    names = {"committed": ("alas_plans_committed_total", {"source": "repair"}),
             "repairs": ("alas_repairs_total", {**method, "fallback": "false"}),
             "gap": ("alas_repair_makespan_gap_ratio_sum", method),
             "moved": ("alas_repair_moved_operations_sum", method),
             "radius": ("alas_repair_edit_radius_sum", method),
             "seconds": ("alas_repair_duration_seconds_sum", method),
             "observed": ("alas_repair_duration_seconds_count", method)}
    before = {k: count(*v) for k, v in names.items()}
    response = RepairService(store).handle("r", request, "k1")
    assert (response.baseline_makespan, response.makespan) == figures
    delta = {k: count(*v) - before[k] for k, v in names.items()}
    assert delta == {"committed": 1, "repairs": 1, "gap": pytest.approx((figures[1] - figures[0]) / figures[0]),
                     "moved": response.moved_operations, "radius": response.edit_radius,
                     "seconds": pytest.approx(response.seconds), "observed": 1}


def test_a_repair_that_fell_back_is_counted_as_a_fallback(store: FsStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """LCRP whose every window and cascade fails ends in its global fallback (tests/jssp/repair/test_lcrp.py):
    the answer says so and the fallback series counts it."""
    la01 = get_instance("la01")
    log = ExecutionLog(store, "r")
    log.append(EventType.RUN_STARTED, payload={"instance": {"name": "la01"}})
    plan = dispatch(la01, "mwkr")
    log.commit_plan(plan.to_json())
    disruption = generate_disruption(la01, plan, "breakdown", seed=3)

    def infeasible(*_a: object, **_k: object) -> None:
        raise InfeasibleError("no room")

    monkeypatch.setattr(lcrp_module, "solve_neighbourhood", infeasible)
    monkeypatch.setattr(lcrp_module, "optimize", infeasible)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)
    request = DisruptionRequest.model_validate({**disruption.to_json(), "method": "lcrp", "budget": 0.5})
    fell_back = ("alas_repairs_total", {"method": "lcrp", "fallback": "true"})
    stayed = ("alas_repairs_total", {"method": "lcrp", "fallback": "false"})
    before = count(*fell_back), count(*stayed)
    response = RepairService(store).handle("r", request, "k1")
    assert response.fallback
    assert (count(*fell_back), count(*stayed)) == (before[0] + 1, before[1])


# ---- how many repairs run at once -------------------------------------------------------------------------------

class Gate:
    """The real repair, held at its start until released; counts the repairs inside at once."""

    def __init__(self) -> None:
        self.active = self.peak = 0
        self.lock = threading.Lock()
        self.release = threading.Event()

    def __call__(self, *args: Any, **kwargs: Any) -> RepairResult:
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        try:
            assert self.release.wait(PATIENCE)
            return repair(*args, **kwargs)
        finally:
            with self.lock:
                self.active -= 1


def answer_all(service: RepairService, runs: list[str]) -> tuple[list[threading.Thread], dict[str, Any]]:
    """Send REQUEST for every run at once, each from its own thread; the answers (or errors) by run."""
    answers: dict[str, Any] = {}

    def ask(run_id: str) -> None:
        try:
            answers[run_id] = service.handle(run_id, REQUEST, "k1")
        except Exception as e:  # the test reports it
            answers[run_id] = e

    threads = [threading.Thread(target=ask, args=(run_id,)) for run_id in runs]
    for thread in threads:
        thread.start()
    return threads, answers


def started(store: FsStore, run_id: str) -> bool:
    return ExecutionLog(store, run_id).first(EventType.REPAIR_STARTED) is not None


@pytest.mark.parametrize("slots", [None, 1], ids=["default", "one"])
def test_repairs_beyond_the_slots_wait_for_one(store: FsStore, tiny: Instance, slots: int | None) -> None:
    """max_concurrent repairs (2 by default; 1 is allowed) run at once; one more waits at the slots (its
    repair.started is in the log, its repair not begun) until one ends, then runs."""
    allowed = 2 if slots is None else slots
    runs = [f"r{i}" for i in range(allowed + 1)]
    for run_id in runs:
        new_run(store, run_id, tiny)
    gate = Gate()
    service = RepairService(store, repairer=gate) if slots is None else \
        RepairService(store, repairer=gate, max_concurrent=slots)
    threads, answers = answer_all(service, runs)
    wait_until(lambda: gate.active == allowed and all(started(store, r) for r in runs))
    time.sleep(0.3)  # a repair the slots let through would be inside by now
    assert gate.active == allowed
    gate.release.set()
    for thread in threads:
        thread.join(PATIENCE)
    assert all(isinstance(answers[r], RepairResponse) and answers[r].version == 2 for r in runs), answers
    assert gate.peak == allowed


def test_repairs_of_different_runs_do_not_wait_for_each_other(store: FsStore, tiny: Instance) -> None:
    """The lock that keeps one run's requests in turn is per run: two runs' repairs meet at a barrier."""
    barrier = threading.Barrier(2, timeout=PATIENCE)
    for run_id in ("a", "b"):
        new_run(store, run_id, tiny)
    threads, answers = answer_all(RepairService(store, repairer=Counting(before=lambda _: barrier.wait())), ["a", "b"])
    for thread in threads:
        thread.join(2 * PATIENCE)
    assert all(isinstance(answers[r], RepairResponse) and answers[r].version == 2 for r in ("a", "b")), answers


# ---- readiness --------------------------------------------------------------------------------------------------

class Listing(FsStore):
    """The filesystem store, keeping what each listing returned."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.listed: list[list[str]] = []

    def list(self, *, prefix: str, start_after: str | None = None) -> list[str]:
        keys = super().list(prefix=prefix, start_after=start_after)
        self.listed.append(keys)
        return keys


def test_the_readiness_probe_asks_the_store_for_nothing_it_holds(tmp_path: Path, tiny: Instance) -> None:
    """/readyz runs every few seconds: one listing that returns no key, however many runs the store holds (on
    S3 a listing of every run is a request per 1000 keys)."""
    store = Listing(tmp_path / "log")
    for run_id in ("a", "b"):
        new_run(store, run_id, tiny)
    RepairService(store).ready()
    assert store.listed == [[]]
