"""Right-shift and AOR: sequence-keeping, minimal, always valid."""

from __future__ import annotations

from itertools import pairwise

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown, generate_disruption
from alas_argo.jssp.execution import ExecutionState, OpStatus
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.metrics import moved_keys, moved_operations, total_start_shift, wip_moved
from alas_argo.jssp.repair.shifting import aor, decode, disruption_size, right_shift
from alas_argo.jssp.schedule import Schedule
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


def test_decode_without_floors_starts_each_free_operation_as_early_as_its_release_and_predecessors_allow(
        ft06: Instance) -> None:
    """No floor: a left-justified plan in the given order. At time 0 every job's and machine's first operation
    starts at 0; mid-plan and before a plan in force that starts late (every operation 10 later, revealed at
    5), nothing free starts before the reveal time."""
    plan = dispatch(ft06, "mwkr")
    late = Schedule.from_operations(ft06.name, [o.model_copy(update={"start": o.start + 10, "end": o.end + 10})
                                                for o in plan.operations])
    for baseline, time, from_the_start in ((plan, 0, True), (plan, plan.makespan // 2, False), (late, 5, True)):
        d = Disruption(time=time)
        st = ExecutionState.at(ft06, baseline, d)
        out = decode(st, {})
        assert validate(ft06, out, disruption=d, baseline=baseline).valid
        starts = out.starts()
        before = {b: a for seq in out.machine_sequences().values() for a, b in pairwise(seq)}
        for k in st.free:
            ready = max([st.release[k], *(starts[p] + st.durations[p] for p in ((k[0], k[1] - 1), before.get(k))
                                          if p is not None and p in starts)])
            assert starts[k] == st.earliest_fit(ft06.machine(*k), ready, st.durations[k]), k
            assert starts[k] >= time
        if from_the_start:  # nothing started yet: the jobs first on their machines start at the reveal time
            first = [(j, 0) for j in range(ft06.num_jobs) if (j, 0) not in before]
            assert first and all(starts[k] == time for k in first)


def test_decode_follows_the_order_it_is_given(ft06: Instance) -> None:
    """An order that puts one free operation before its machine predecessor: the plan runs it first there."""
    plan = dispatch(ft06, "mwkr")
    d = Disruption(time=plan.makespan // 3)
    st = ExecutionState.at(ft06, plan, d)
    planned = plan.starts()
    order = sorted(planned, key=lambda k: (k not in st.frozen, planned[k], k))
    position = {k: i for i, k in enumerate(order)}
    # Two free neighbours a, b on a machine where b's job predecessor comes before a: b may go first.
    a, b = next((a, b) for seq in plan.machine_sequences().values() for a, b in pairwise(seq)
                if a in st.free and b in st.free and (b[1] == 0 or position[(b[0], b[1] - 1)] < position[a]))
    swapped = [k for k in order if k != b]
    swapped.insert(swapped.index(a), b)
    out = decode(st, {}, swapped)
    sequence = out.machine_sequences()[ft06.machine(*a)]
    assert sequence.index(b) < sequence.index(a)
    assert validate(ft06, out, disruption=d, baseline=plan).valid


def test_disruption_size_is_zero_when_nothing_is_left_to_push(ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    st = ExecutionState.at(ft06, plan, Disruption(time=plan.makespan))
    assert not st.free and disruption_size(st) == 0


def test_right_shift_pushes_pending_operations_only(ft06: Instance) -> None:
    """Two breakdowns at time 10: 2 units on the machine of a running operation (interrupted, it restarts when
    its machine is back), 20 on another. The push is 20 and applies to pending operations; the interrupted one
    restarts at 12, not 20 after its planned start."""
    plan = dispatch(ft06, "mwkr")
    x = next(o for o in plan.operations if o.start < 10 < o.end)
    other = next(m for m in range(ft06.num_machines) if m != x.machine)
    d = Disruption(time=10, events=[MachineBreakdown(machine=x.machine, start=10, duration=2),
                                    MachineBreakdown(machine=other, start=10, duration=20)])
    st = ExecutionState.at(ft06, plan, d)
    assert st.status[x.key] is OpStatus.INTERRUPTED and disruption_size(st) == 20
    shifted = right_shift(st)
    assert shifted.by_key()[x.key].start == 12
    planned = plan.starts()
    assert all(shifted.starts()[k] >= planned[k] + 20 for k in st.free if st.status[k] is OpStatus.PENDING)
    assert validate(ft06, shifted, disruption=d, baseline=plan).valid
