"""Right-shift and AOR: sequence-keeping, minimal, always valid."""

from __future__ import annotations

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations, total_start_shift, wip_moved
from alas_argo.jssp.repair.shifting import aor, disruption_size, right_shift
from alas_argo.jssp.validate import validate


def _sequences_kept(before: dict, after: dict, frozen: set) -> bool:
    """Per machine, the free operations keep their relative order."""
    return all([k for k in before[m] if k not in frozen] == [k for k in after[m] if k not in frozen]
               for m in before)


def test_aor_and_right_shift_are_valid_and_keep_sequences(ft06: Instance) -> None:
    plan = dispatch(ft06, "spt")
    for kind in ("breakdown", "shock", "mixed"):
        d = generate_disruption(ft06, plan, kind, seed=7)
        st = ExecutionState.at(ft06, plan, d)
        for method in (aor, right_shift):
            repaired = method(st)
            report = validate(ft06, repaired, disruption=d, baseline=plan)
            assert report.valid, (kind, method.__name__, report.violations[:3])
            assert _sequences_kept(plan.machine_sequences(), repaired.machine_sequences(), st.frozen)


def test_aor_moves_only_what_it_must() -> None:
    inst = get_instance("la01")
    plan = dispatch(inst, "mwkr")
    d = Disruption(time=100, events=[MachineBreakdown(machine=2, start=100, duration=60)])
    st = ExecutionState.at(inst, plan, d)
    a, rs = aor(st), right_shift(st)
    planned = plan.starts()
    # Nothing moves earlier, and every moved operation is pushed by a predecessor or the downtime.
    for o in a.operations:
        assert o.start >= planned[o.key] or o.key in st.interrupted
    assert moved_keys(plan, a) <= moved_keys(plan, rs)
    assert a.makespan <= rs.makespan
    assert moved_operations(plan, a) < moved_operations(plan, rs)
    assert total_start_shift(plan, a) <= total_start_shift(plan, rs)
    assert disruption_size(st) == 60


def test_nothing_to_repair_moves_nothing(ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    d = Disruption(time=plan.makespan // 2)
    st = ExecutionState.at(ft06, plan, d)
    assert aor(st).starts() == plan.starts()
    assert right_shift(st).starts() == plan.starts()
    assert wip_moved(st, aor(st)) == 0


def test_shock_on_running_operation_extends_in_place(ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    running = next(o for o in plan.operations if o.start < 10 < o.end)
    d = Disruption(time=10, events=[DurationChange(job=running.job, step=running.step,
                                                   duration=running.duration + 5)])
    repaired = aor(ExecutionState.at(ft06, plan, d))
    assert repaired.by_key()[running.key].start == running.start
    assert repaired.by_key()[running.key].end == running.end + 5
    assert validate(ft06, repaired, disruption=d, baseline=plan).valid
