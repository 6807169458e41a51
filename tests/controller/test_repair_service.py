"""The controller's core without HTTP, on a filesystem store: carry-forward, idempotency after a crash,
and the shape of the committed version."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.controller import DisruptionRequest, RepairService, RunNotFound
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import FirstEdit, RepairResult, repair
from alas_argo.jssp.repair.tabu import kernel as tabu_kernel
from alas_argo.log import EventType, ExecutionLog, FsStore
from tests.controller.conftest import greedy

REQUEST = DisruptionRequest.model_validate(
    {"time": 2, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3}],
     "method": "right-shift"})


@pytest.fixture
def store(tmp_path: Path, tiny: Instance) -> FsStore:
    store = FsStore(tmp_path / "log")
    log = ExecutionLog(store, "r")
    log.append(EventType.RUN_STARTED, payload={"instance": tiny.to_json()})
    log.commit_plan(greedy(tiny).to_json())
    return store


def test_commit_records_disruption_key_and_parent(store: FsStore) -> None:
    response = RepairService(store).handle("r", REQUEST, "key-1")
    assert (response.version, response.parent_version, response.idempotent_replay) == (2, 1, False)
    log = ExecutionLog(store, "r")
    commit = log.plan_event(2)
    assert commit.payload["parent_version"] == 1 and commit.payload["reason"] == "repair"
    assert commit.payload["meta"]["idempotency_key"] == "key-1"
    assert commit.payload["meta"]["disruption"] == REQUEST.disruption().to_json()
    types = [e.type for e in log.events()]
    assert types[-4:] == [EventType.DISRUPTION_OBSERVED, EventType.REPAIR_STARTED, EventType.REPAIR_FINISHED,
                          EventType.PLAN_COMMITTED]


def test_replay_survives_a_crash_before_the_idempotency_record(store: FsStore, tmp_path: Path) -> None:
    service = RepairService(store)
    first = service.handle("r", REQUEST, "key-1")
    records = list((tmp_path / "log" / "runs" / "r" / "idempotency").glob("*.json"))
    assert len(records) == 1
    records[0].unlink()  # as if the process died right after the commit
    again = RepairService(store).handle("r", REQUEST, "key-1")
    assert again.idempotent_replay and again.version == first.version == 2
    assert ExecutionLog(store, "r").versions() == [1, 2]


def test_no_plan_means_not_found(tmp_path: Path) -> None:
    with pytest.raises(RunNotFound):
        RepairService(FsStore(tmp_path / "empty")).handle("ghost", REQUEST, "k")


def test_request_fingerprint_ignores_nothing() -> None:
    other = REQUEST.model_copy(update={"budget": 2.0})
    assert REQUEST.fingerprint() != other.fingerprint()
    assert REQUEST.fingerprint() == DisruptionRequest.model_validate(REQUEST.model_dump()).fingerprint()


def test_effort_is_part_of_the_request_and_reaches_the_repair(store: FsStore) -> None:
    assert REQUEST.fingerprint() != REQUEST.model_copy(update={"effort": 4.0}).fingerprint()
    # The defaults leave the fingerprint as it was before the fields existed.
    legacy = REQUEST.model_dump(mode="json")
    del legacy["effort"], legacy["tolerance"], legacy["first_edit"]
    assert REQUEST.fingerprint() == hashlib.sha256(json.dumps(legacy, sort_keys=True).encode()).hexdigest()
    lcrp = DisruptionRequest.model_validate({**REQUEST.model_dump(mode="json"), "method": "lcrp", "effort": 2,
                                             "first_edit": "redispatch"})
    RepairService(store).handle("r", lcrp, "key-effort")
    finished = [e for e in ExecutionLog(store, "r").events() if e.type is EventType.REPAIR_FINISHED]
    assert finished[-1].payload["effort"] == 2.0
    assert any("time box 0.20 s" in n for n in finished[-1].payload["metrics"]["notes"])
    with pytest.raises(ValueError, match="effort"):
        DisruptionRequest.model_validate({**REQUEST.model_dump(mode="json"), "effort": 0})


def ran(edit: FirstEdit) -> str:
    """The first edit a repair asked for ``edit`` records having run: tabu only with the compiled search."""
    return edit.value if edit is FirstEdit.REDISPATCH or tabu_kernel() is not None else FirstEdit.REDISPATCH.value


@pytest.mark.parametrize("edit", list(FirstEdit))
def test_the_first_edit_is_part_of_the_request_and_reaches_the_repair(store: FsStore, edit: FirstEdit) -> None:
    asked: list[object] = []

    def recording(*args: Any, **kwargs: Any) -> RepairResult:
        asked.append(kwargs.get("first_edit"))
        return repair(*args, **kwargs)

    request = DisruptionRequest.model_validate({**REQUEST.model_dump(mode="json"), "method": "lcrp",
                                                "first_edit": edit.value})
    RepairService(store, repairer=recording).handle("r", request, f"key-{edit.value}")
    assert asked == [edit]
    [finished] = [e.payload for e in ExecutionLog(store, "r").events() if e.type is EventType.REPAIR_FINISHED]
    assert finished["first_edit"] == edit.value
    assert finished["metrics"]["limits"].get("first_edit", FirstEdit.REDISPATCH.value) == ran(edit)


def test_tolerance_is_part_of_the_request_and_reaches_the_repair(store: FsStore) -> None:
    assert REQUEST.fingerprint() != REQUEST.model_copy(update={"tolerance": 0.01}).fingerprint()
    lcrp = DisruptionRequest.model_validate({**REQUEST.model_dump(mode="json"), "method": "lcrp", "tolerance": 0.05})
    RepairService(store).handle("r", lcrp, "key-tolerance")
    finished = [e for e in ExecutionLog(store, "r").events() if e.type is EventType.REPAIR_FINISHED]
    assert finished[-1].payload["tolerance"] == 0.05
    assert finished[-1].payload["metrics"]["limits"]["tolerance"] == 0.05
    for bad in (-0.01, 0.2):
        with pytest.raises(ValueError, match="tolerance"):
            DisruptionRequest.model_validate({**REQUEST.model_dump(mode="json"), "tolerance": bad})
