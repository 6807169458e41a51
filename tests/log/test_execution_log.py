"""ExecutionLog: events, plan versions, diff, restore, idempotency and the Journal protocol, on both
backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from alas_argo.errors import ContractError, InputError, IntegrityError
from alas_argo.log.event import GENESIS_HASH, event_hash
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog, plan_key
from alas_argo.log.plans import encode_plan
from alas_argo.log.store import Store


def schedule(starts: list[int], makespan: int | None = None) -> dict[str, object]:
    ops = [{"job": j, "step": 0, "machine": j % 2, "start": s, "end": s + 3} for j, s in enumerate(starts)]
    return {"instance": "t", "makespan": makespan or max(s + 3 for s in starts), "operations": ops}


def test_append_builds_a_hash_chain(store: Store) -> None:
    ticks = iter(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(10))
    log = ExecutionLog(store, "chain", clock=lambda: next(ticks))
    first = log.append(EventType.RUN_STARTED, payload={"instance": "ft06"})
    second = log.append("node.started", node_id="plan", attempt=1, correlation_id="c-1")
    assert (first.seq, second.seq) == (0, 1)
    assert first.prev_hash == GENESIS_HASH and second.prev_hash == first.hash
    assert first.hash == event_hash(first.body())
    assert first.timestamp == "2026-01-01T00:00:00.000000Z" and first.correlation_id == "chain"
    assert second.correlation_id == "c-1" and second.node_id == "plan" and second.attempt == 1
    assert ExecutionLog(store, "chain").events() == [first, second]  # what was stored is what is read


def test_unknown_event_type_and_bad_payload_are_rejected(store: Store) -> None:
    log = ExecutionLog(store, "strict")
    with pytest.raises(ContractError, match="unknown event type"):
        log.append("run.exploded")
    with pytest.raises(ContractError):
        log.append("run.started", payload={"x": float("nan")})
    assert log.events() == []


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "x" * 129, "-lead"])
def test_bad_run_ids_are_input_errors(store: Store, bad: str) -> None:
    with pytest.raises(InputError, match="invalid run id"):
        ExecutionLog(store, bad)


def test_plan_versions_current_diff_and_restore(store: Store) -> None:
    log = ExecutionLog(store, "plans")
    assert log.current_plan() is None and log.versions() == []
    v1 = log.commit_plan(schedule([0, 0, 3]), node_id="supervise", reason="initial")
    v2 = log.commit_plan(schedule([0, 2, 5]), parent_version=v1, meta={"method": "lcrp"})
    assert (v1, v2) == (1, 2)
    assert log.current_plan() == (2, schedule([0, 2, 5]))
    assert log.plan(1) == schedule([0, 0, 3])
    diff = log.diff(1, 2)
    assert diff.moved_operations == [(1, 0, 0, 2), (2, 0, 3, 5)]
    assert (diff.makespan_a, diff.makespan_b, diff.makespan_change) == (6, 8, 2)
    assert diff.total_start_shift == 4 and diff.added == [] and diff.removed == []
    v3 = log.restore(1)
    assert v3 == 3 and log.versions() == [1, 2, 3]
    assert log.current_plan() == (3, schedule([0, 0, 3]))
    committed = log.plan_event(3).payload
    assert committed["reason"] == "restore of v1" and committed["parent_version"] == 1
    assert log.plan_event(2).payload["meta"] == {"method": "lcrp"}
    assert store.exists(key=plan_key("plans", 2))  # restore never deletes
    with pytest.raises(InputError, match="no plan version 9"):
        log.plan(9)
    assert log.verify().ok


def test_altered_plan_object_is_refused_on_read(store: Store) -> None:
    log = ExecutionLog(store, "alter")
    log.commit_plan(schedule([0, 1]))
    store.put(key=plan_key("alter", 1), data=encode_plan(schedule([0, 2])))
    with pytest.raises(IntegrityError, match="does not match"):
        log.plan(1)


def test_interrupted_commit_leaves_an_orphan_that_the_next_commit_skips(store: Store) -> None:
    log = ExecutionLog(store, "orphan")
    log.commit_plan(schedule([0]))
    store.put_if_absent(key=plan_key("orphan", 2), data=encode_plan(schedule([7])))  # crashed committer
    assert log.commit_plan(schedule([1])) == 3
    assert log.current_plan() == (3, schedule([1]))
    report = log.verify()
    assert report.ok and len(report.warnings) == 1 and "v0002" in report.warnings[0]


def test_recommitting_identical_orphan_reuses_its_number(store: Store) -> None:
    log = ExecutionLog(store, "resume")
    store.put_if_absent(key=plan_key("resume", 1), data=encode_plan(schedule([4])))  # crash before event
    assert log.commit_plan(schedule([4])) == 1
    assert log.verify().ok and log.verify().warnings == []


def test_idempotency_first_writer_wins(store: Store) -> None:
    log = ExecutionLog(store, "idem")
    assert log.idempotency_get("node:plan:abc") is None
    assert log.idempotency_put("node:plan:abc", {"makespan": 55}) == {"makespan": 55}
    assert log.idempotency_put("node:plan:abc", {"makespan": 99}) == {"makespan": 55}
    assert ExecutionLog(store, "idem").idempotency_get("node:plan:abc") == {"makespan": 55}
    assert log.idempotency_get("other") is None


def test_journal_protocol(store: Store) -> None:
    journal = ExecutionLog(store, "journal")
    journal.record("node.started", node_id="n1", attempt=1, payload={"k": 1})
    assert journal.get_idempotent("n1") is None
    journal.put_idempotent("n1", {"out": [1, 2]})
    journal.put_idempotent("n1", {"out": [3]})
    assert journal.get_idempotent("n1") == {"out": [1, 2]}
    (event,) = journal.events()
    assert (event.type, event.node_id, event.attempt, event.payload) == (EventType.NODE_STARTED, "n1", 1,
                                                                         {"k": 1})


def test_execution_log_is_a_runtime_journal(store: Store) -> None:
    from alas_argo.runtime.journal import Journal

    assert isinstance(ExecutionLog(store, "proto"), Journal)


def test_compare_and_swap_commit(store: Store) -> None:
    from alas_argo.errors import ConflictError

    log = ExecutionLog(store, "cas")
    assert log.commit_plan(schedule([0]), expect_current=0) == 1
    other = ExecutionLog(store, "cas")
    assert other.commit_plan(schedule([1]), expect_current=1) == 2
    with pytest.raises(ConflictError, match="v2 is current, not v1"):
        log.commit_plan(schedule([2]), expect_current=1)  # derived from v1, but v2 landed meanwhile
    assert log.current_plan() == (2, schedule([1])) and log.verify().ok


def test_commit_with_idempotency_key_is_exactly_once_across_a_crash(store: Store) -> None:
    log = ExecutionLog(store, "once")
    assert log.commit_plan(schedule([0]), node_id="commit_v1", idempotency_key="once:commit_v1") == 1
    # the process dies before recording anything else; the resumed node recomputes a *different* plan
    resumed = ExecutionLog(store, "once")
    assert resumed.commit_plan(schedule([5]), node_id="commit_v1", idempotency_key="once:commit_v1") == 1
    assert resumed.commit_plan(schedule([5]), node_id="commit_2", idempotency_key="once:commit_2") == 2
    assert resumed.versions() == [1, 2] and resumed.plan(1) == schedule([0])
    report = resumed.verify()
    assert report.ok and report.warnings == []  # no orphan object was written for the repeated commit


def test_idempotent_commits_race_to_one_version(store: Store) -> None:
    import threading

    logs = [ExecutionLog(store, "race-once") for _ in range(3)]
    got: list[int] = []
    threads = [threading.Thread(target=lambda lg=lg, i=i: got.append(
        lg.commit_plan(schedule([i]), idempotency_key="k"))) for i, lg in enumerate(logs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    # Exactly once: every writer gets the same version and one commit landed. Which number it is depends on
    # the race (versions are claimed through the plan objects, and these writers carry different plans), so
    # an orphaned plan object may remain; verify reports it as a warning, not a problem.
    assert len(got) == 3 and len(set(got)) == 1
    assert logs[0].versions() == [got[0]]
    committed = [e for e in logs[0].events() if e.type == "plan.committed"]
    assert len(committed) == 1 and committed[0].payload["idempotency_key"] == "k"
    assert logs[0].verify().ok


def test_equal_plans_never_share_a_version(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two writers derive the same plan from v1 for different reasons (two disruptions that change nothing)
    and race: the loser must get a conflict, never be told that the winner's commit is its own (issue 15,
    point 5: the loser's disruption was acknowledged and lost)."""
    from alas_argo.errors import ConflictError

    base, same = schedule([0]), schedule([3])
    first, second = ExecutionLog(store, "equal"), ExecutionLog(store, "equal")
    assert first.commit_plan(base) == 1 and second.current_plan() is not None
    put_if_absent = store.put_if_absent
    fired: list[object] = []

    def interleaved(*, key: str, data: bytes) -> bool:
        created = put_if_absent(key=key, data=data)
        if key == plan_key("equal", 2) and not fired:  # the second writer has passed its early check...
            fired.append(key)
            fired.append(first.commit_plan(same, expect_current=1, meta={"why": "a"}))  # ...and first lands
        return created

    monkeypatch.setattr(store, "put_if_absent", interleaved)
    with pytest.raises(ConflictError, match="v2 is current, not v1"):
        second.commit_plan(same, expect_current=1, meta={"why": "b"})
    assert fired[1] == 2
    # Without compare-and-swap, equal plans are two commits: two versions.
    assert second.commit_plan(same, meta={"why": "c"}) == 3
    whys = [e.payload["meta"].get("why") for e in second.events() if e.type is EventType.PLAN_COMMITTED]
    assert whys == [None, "a", "c"] and second.verify().ok


def test_a_repeated_or_stale_commit_writes_no_plan_object(store: Store) -> None:
    from alas_argo.errors import ConflictError

    log = ExecutionLog(store, "quiet")
    assert log.commit_plan(schedule([0]), idempotency_key="k", expect_current=0) == 1
    before = store.list(prefix="runs/quiet/plans/")
    # Already committed under its key: its version, and nothing written (no orphan for verify to warn about).
    assert log.commit_plan(schedule([7]), idempotency_key="k") == 1
    # Stale (derived from no plan, v1 is in force): refused before the plan object is written.
    with pytest.raises(ConflictError, match="plan v1 is current, not v0") as err:
        log.commit_plan(schedule([8]), expect_current=0)
    assert err.value.where == "run quiet"
    assert store.list(prefix="runs/quiet/plans/") == before and log.verify().warnings == []
    with pytest.raises(ConflictError, match="no plan is current, not v1"):
        ExecutionLog(store, "empty").commit_plan(schedule([0]), expect_current=1)


def test_the_commit_and_retraction_events_record_size_and_default_reasons(store: Store) -> None:
    log = ExecutionLog(store, "recorded")
    version = log.commit_plan(schedule([0, 4]))
    event = log.plan_event(version)
    # ``bytes`` is read back by the log benchmark; the reasons are what ``alas log show`` prints.
    assert event.payload["bytes"] == len(encode_plan(schedule([0, 4]))) and event.payload["reason"] == "commit"
    assert log.retract(version).payload["reason"] == "retract"
