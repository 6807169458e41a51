"""Problem codes of ``verify_log`` that no tampering of tests/log/test_tampering.py produces: an unreadable
head, and a retraction of a version never committed (next to a genuine retraction, which is no problem).

The codes are the contract (README "The execution log"; the CLI's ``--json``), so each is asserted exactly.
Both backends read and write records the same way here, so the filesystem store is enough.
"""

from __future__ import annotations

from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.layout import head_key
from alas_argo.log.verification import verify_log

PLAN = {"instance": "t", "makespan": 3, "operations": [{"job": 0, "step": 0, "machine": 0, "start": 0, "end": 3}]}


def test_an_unreadable_head_is_named(fs_store: FsStore) -> None:
    log = ExecutionLog(fs_store, "h")
    log.commit_plan(PLAN)
    log.append(EventType.RUN_SUCCEEDED)
    assert verify_log(fs_store, "h").ok
    fs_store.put(key=head_key("h"), data=b"not json")
    report = verify_log(fs_store, "h")
    assert [(p.code, p.seq, p.key) for p in report.problems] == [("head_unreadable", None, head_key("h"))]
    assert "unreadable head" in report.problems[0].message
    assert not report.ok and report.anchored is None
    assert report.events == 2 and report.current_version == 1  # the chain itself is still checked and folded


def test_a_retraction_of_a_version_never_committed_is_named(fs_store: FsStore) -> None:
    log = ExecutionLog(fs_store, "r")
    log.commit_plan(PLAN)
    log.retract(1)  # a genuine retraction: no problem
    assert verify_log(fs_store, "r").ok
    # ExecutionLog.retract refuses an unknown version; a raw append (or a hand-written event) does not.
    forged = log.append(EventType.PLAN_RETRACTED, payload={"version": 9})
    report = verify_log(fs_store, "r")
    assert [(p.code, p.seq) for p in report.problems] == [("bad_retraction", forged.seq)]
    assert report.problems[0].message == "retracts v9, which was not committed before"
