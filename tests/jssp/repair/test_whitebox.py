"""The ALAS paper's white-box illustration of LCRP (section 4.1.2), made concrete: a 3x3 plan of makespan 19,
a 3-unit breakdown, a repair of makespan 22 that reorders one queued operation (bench/README.md walks through it).
The files are the ones the walkthrough's commands read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.jssp.catalog import load_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair import lower_bound, repair
from alas_argo.jssp.schedule import Schedule

WHITEBOX = Path(__file__).resolve().parents[3] / "bench" / "whitebox"


@pytest.fixture
def case() -> tuple[object, Schedule, Disruption]:
    inst = load_instance(WHITEBOX / "instance.json")
    plan = Schedule.model_validate(json.loads((WHITEBOX / "schedule.json").read_text()))
    d = Disruption.model_validate(json.loads((WHITEBOX / "disruption.json").read_text()))
    return inst, plan, d


def test_baseline_19_breakdown_3_repair_22_with_one_wip_move(case: tuple) -> None:
    inst, plan, d = case
    assert plan.makespan == 19 and [(b.machine, b.start, b.duration) for b in d.breakdowns] == [(1, 8, 3)]
    # Keeping every queue (right-shift, AOR): job 1's interrupted first operation restarts after the downtime
    # and drags its successors, and job 0's last operation waits behind them on machine 2.
    for method in ("right-shift", "aor"):
        r = repair(inst, plan, d, method)
        assert (r.makespan, r.wip_moved) == (24, 0)
    r = repair(inst, plan, d, "lcrp", budget=1.0)
    assert r.makespan == 22 == plan.makespan + 3
    assert lower_bound(ExecutionState.at(inst, plan, d)) == 22  # nothing shorter exists: LCRP stops there
    assert r.wip_moved == 1 and r.resequenced_machines == [2]
    # The one WIP move: job 0's last operation overtakes job 1's queued second operation on machine 2.
    m2 = [(o.job, o.step) for o in sorted(r.schedule.operations, key=lambda o: o.start) if o.machine == 2]
    assert m2 == [(2, 0), (0, 2), (1, 1)]
    assert r.global_reason is None and r.edit_radius == r.moved_operations == 5
    assert repair(inst, plan, d, "full", budget=1.0).makespan == 22
