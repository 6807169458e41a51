"""The repair service's edges that the mutation run of ``controller/repair_service.py`` found untested
(bench/README, mutation testing): what a replay after a crash does, a key reused or raced by another replica,
the compare-and-swap retries, where the instance and the disruption in force come from, what the log and the
metrics record, and how many repairs run at once. All on a filesystem store with real repairs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alas_argo.controller import DisruptionRequest, RepairService
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import RepairResult, repair
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.log.replay import replay_log
from alas_argo.metrics import REGISTRY
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

    def __init__(self, before: Callable[[int], None] | None = None) -> None:
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
