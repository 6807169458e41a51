"""A local run's idempotency records are tied into the log's hash chain: the event that says a node succeeded (or
a compensation finished) names the record holding its result by hash, as the cluster's steps do, so
``verify_log`` detects a record deleted, replaced by something that is no record, or rewritten whole (a valid
hash of other content). Before, only the cluster's records were named by an event: a local run's record could be
deleted and the log still verified intact, and a resume then ran the node again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from alas_argo.errors import ContractError
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.log.idempotency import record_hash
from alas_argo.log.layout import idempotency_key
from alas_argo.log.verification import verify_log
from alas_argo.runtime import NodeContext, Runtime, compensation_key
from tests.runtime.runtime_helpers import workflow

RUN = "tied"
KEYED = {"idempotency": {"key": "{run}:{node}"}}


def _run(store: FsStore) -> list[str]:
    """a, b, c write (each under an idempotency key, each with a compensation), d fails: the saga undoes c, b, a."""

    def write(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        if ctx.params.get("fail"):
            raise ContractError("cannot write")
        return {"wrote": ctx.node_id}

    def undo(ctx: NodeContext, inputs: dict[str, Any]) -> dict[str, Any]:
        return {}
    nodes: list[dict[str, Any]] = [{"id": n, "role": "write", "sideEffect": "write", "compensation": f"undo_{n}",
                                    "policyRef": "k"} for n in "abc"]
    nodes.append({"id": "d", "role": "write", "params": {"fail": True}, "policyRef": "f"})
    nodes += [{"id": f"undo_{n}", "role": "undo"} for n in "abc"]
    wf = workflow(nodes, [("a", "b"), ("b", "c"), ("c", "d")],
                  policies={"k": KEYED, "f": {"onFailure": "rollback"}})
    result = Runtime({"write": write, "undo": undo}, journal=ExecutionLog(store, RUN)).run(wf, run_id=RUN)
    assert not result.ok and result.failed_node == "d"
    return result.compensated


RECORDS = [f"{RUN}:{n}" for n in "abc"] + [compensation_key(RUN, n) for n in "abc"]


@pytest.fixture
def store(tmp_path: Path) -> FsStore:
    s = FsStore(tmp_path / "store")
    assert _run(s) == ["c", "b", "a"]
    return s


def _path(store: FsStore, record: str) -> Path:
    return store.root / idempotency_key(RUN, record)


def test_every_record_of_a_local_run_is_named_by_an_event(store: FsStore) -> None:
    report = verify_log(store, RUN)
    assert report.ok, report.problems
    named = {e.payload["key"]: e.payload["record_hash"] for e in ExecutionLog(store, RUN).events()
             if "record_hash" in e.payload}
    assert sorted(named) == sorted(RECORDS)
    for record in RECORDS:
        assert named[record] == json.loads(_path(store, record).read_bytes())["hash"]


@pytest.mark.parametrize("record", RECORDS)
@pytest.mark.parametrize("damage", ["deleted", "a directory"])
def test_a_record_gone_is_named(store: FsStore, record: str, damage: str) -> None:
    path = _path(store, record)
    path.unlink()
    if damage == "a directory":
        path.mkdir()
    report = verify_log(store, RUN)
    assert [(p.code, p.key) for p in report.problems] == [("record_missing", idempotency_key(RUN, record))]


@pytest.mark.parametrize("record", RECORDS)
def test_a_record_rewritten_whole_is_named(store: FsStore, record: str) -> None:
    path = _path(store, record)
    doc = json.loads(path.read_bytes())
    doc["result"] = {"output": {"wrote": "something else"}}
    doc["hash"] = record_hash(doc)  # self-consistent: only the event naming it can tell
    path.write_text(json.dumps(doc))
    report = verify_log(store, RUN)
    assert [(p.code, p.key) for p in report.problems] == [("record_mismatch", idempotency_key(RUN, record))]


def test_a_resume_ties_a_record_no_event_named(tmp_path: Path) -> None:
    """A run stopped between a node's record and its success event leaves the record named by nothing; the resumed
    run's success event (an idempotent hit) names it."""
    store = FsStore(tmp_path / "store")
    assert _run(store) == ["c", "b", "a"]
    copy = FsStore(tmp_path / "resumed")
    shutil.copytree(store.root / "runs" / RUN / "idempotency", copy.root / "runs" / RUN / "idempotency")
    assert _run(copy) == []  # every keyed node hits its record; the compensations find theirs and run no more
    report = verify_log(copy, RUN)
    assert report.ok, report.problems
    named = {e.payload["key"] for e in ExecutionLog(copy, RUN).events() if "record_hash" in e.payload}
    assert named == {f"{RUN}:{n}" for n in "abc"}
