"""The validator: every code on hand-made schedules, the disruption semantics, and no false alarms."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import MAX_TIME, validate
from alas_argo.jssp.verdict import ValidationReport, ViolationCode
from tests.jssp.strategies import disrupted_cases, solved_instances

C = ViolationCode

# A valid schedule of the `tiny` fixture, makespan 12: (job, step, machine, start, end).
TINY = [(0, 0, 0, 0, 3), (0, 1, 1, 4, 6), (0, 2, 2, 8, 10),
        (1, 0, 0, 3, 5), (1, 1, 2, 7, 8), (1, 2, 1, 8, 12),
        (2, 0, 1, 0, 4), (2, 1, 2, 4, 7), (2, 2, 0, 7, 8)]


def sched(rows: list[tuple[int, int, int, int, int]], name: str = "tiny", makespan: int | None = None
          ) -> Schedule:
    ops = [Operation(job=j, step=s, machine=m, start=a, end=b) for j, s, m, a, b in rows]
    return Schedule(instance=name, makespan=max((o.end for o in ops), default=0) if makespan is None
                    else makespan, operations=ops)


def edit(rows: list[tuple[int, int, int, int, int]], key: tuple[int, int], **change: int
         ) -> list[tuple[int, int, int, int, int]]:
    out = []
    for j, s, m, a, b in rows:
        if (j, s) == key:
            m, a, b = change.get("machine", m), change.get("start", a), change.get("end", b)
        out.append((j, s, m, a, b))
    return out


def only(report: ValidationReport, code: ViolationCode, **scope: int) -> None:
    assert not report.valid
    assert [v.code for v in report.violations] == [code], report.violations
    assert report.find(code, **scope), report.violations


def test_exports_and_independence() -> None:
    import ast
    from pathlib import Path

    from alas_argo.jssp import validate as module
    from alas_argo.jssp import validation_arrays

    assert sorted(module.__all__) == ["MAX_TIME", "validate"]
    # Non-circular validation: the validator (and the arrays it checks) read only the data models, never
    # planners or repair.
    imported: set[str | None] = set()
    for part in (module, validation_arrays):
        tree = ast.parse(Path(str(part.__file__)).read_text())
        imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {m for m in imported if m and m.startswith("alas_argo")} == {
        "alas_argo.errors", "alas_argo.jssp.disruption", "alas_argo.jssp.instance", "alas_argo.jssp.limits",
        "alas_argo.jssp.schedule", "alas_argo.jssp.validation_arrays",
        "alas_argo.jssp.verdict"}


def test_valid_schedule_has_no_violations_or_warnings(tiny: Instance) -> None:
    report = validate(tiny, sched(TINY))
    assert report.valid and report.violations == [] and report.warnings == []


def test_missing_operation(tiny: Instance) -> None:
    rows = [r for r in TINY if r[:2] != (1, 2)]
    only(validate(tiny, sched(rows)), C.MISSING_OPERATION, job=1, step=2, machine=1)


def test_duplicate_operation_reports_the_second_entry(tiny: Instance) -> None:
    only(validate(tiny, sched([*TINY, TINY[0]])), C.DUPLICATE_OPERATION, job=0, step=0, index=9)


def test_unknown_operations_are_reported_with_their_index(tiny: Instance) -> None:
    report = validate(tiny, sched([*TINY, (5, 0, 0, 20, 21), (0, 3, 0, 22, 23), (-1, 0, 0, 24, 25)],
                                  makespan=25))
    assert [(v.code, v.scope) for v in report.violations] == [
        (C.UNKNOWN_OPERATION, {"job": 5, "step": 0, "index": 9}),
        (C.UNKNOWN_OPERATION, {"job": 0, "step": 3, "index": 10}),
        (C.UNKNOWN_OPERATION, {"job": -1, "step": 0, "index": 11}),
    ]


def test_wrong_machine_also_checks_overlap_where_it_runs(tiny: Instance) -> None:
    report = validate(tiny, sched(edit(TINY, (0, 0), machine=1)))
    assert report.find(C.WRONG_MACHINE, job=0, step=0, machine=1)
    # (0, 0) now runs on machine 1 over [0, 3) while (2, 0) runs there over [0, 4).
    assert report.codes() == {C.WRONG_MACHINE, C.MACHINE_OVERLAP}


def test_wrong_duration(tiny: Instance) -> None:
    only(validate(tiny, sched(edit(TINY, (0, 2), end=11))), C.WRONG_DURATION, job=0, step=2)


def test_negative_length_is_a_wrong_duration(tiny: Instance) -> None:
    only(validate(tiny, sched(edit(TINY, (2, 2), start=7, end=6), makespan=12)), C.WRONG_DURATION,
         job=2, step=2)


def test_precedence(tiny: Instance) -> None:
    only(validate(tiny, sched(edit(TINY, (2, 1), start=3, end=6))), C.PRECEDENCE, job=2, step=1,
         other_job=2, other_step=0)


def test_machine_overlap_names_both_operations(tiny: Instance) -> None:
    only(validate(tiny, sched(edit(TINY, (1, 0), start=2, end=4))), C.MACHINE_OVERLAP, job=1, step=0,
         machine=0, other_job=0, other_step=0)


def test_every_overlap_is_reported_not_just_adjacent_pairs() -> None:
    inst = Instance(name="one", jobs=[[(0, 10)], [(0, 1)], [(0, 1)], [(0, 1)], [(1, 5)]])
    report = validate(inst, sched([(0, 0, 0, 0, 10), (1, 0, 0, 2, 3), (2, 0, 0, 4, 5), (3, 0, 0, 6, 7),
                                   (4, 0, 1, 0, 5)], name="one"))
    hits = report.find(C.MACHINE_OVERLAP)
    assert sorted(v.scope["job"] for v in hits) == [1, 2, 3]
    assert all(v.scope["other_job"] == 0 for v in hits)


def test_zero_length_operations_overlap_nothing() -> None:
    inst = Instance(name="zero", jobs=[[(0, 4)], [(0, 0)]])
    report = validate(inst, sched([(0, 0, 0, 0, 4), (1, 0, 0, 2, 2)], name="zero"))
    assert report.valid


def test_negative_start() -> None:
    inst = Instance(name="one", jobs=[[(0, 3), (1, 2)]])
    only(validate(inst, sched([(0, 0, 0, -1, 2), (0, 1, 1, 2, 4)], name="one")), C.NEGATIVE_START,
         job=0, step=0)


def test_makespan_mismatch(tiny: Instance) -> None:
    only(validate(tiny, sched(TINY, makespan=13)), C.MAKESPAN_MISMATCH)


def test_instance_mismatch_is_a_warning(tiny: Instance) -> None:
    report = validate(tiny, sched(TINY, name="ft06"))
    assert report.valid
    assert [w.code for w in report.warnings] == [C.INSTANCE_MISMATCH]


def test_all_violations_are_reported(tiny: Instance) -> None:
    rows = edit(edit(TINY, (0, 2), end=11), (2, 1), start=3, end=6)
    rows = [r for r in rows if r[:2] != (1, 2)] + [TINY[0], (9, 9, 0, 1, 2)]
    report = validate(tiny, sched(rows, makespan=99))
    assert report.count_by_code() == {C.MISSING_OPERATION: 1, C.DUPLICATE_OPERATION: 1,
                                      C.UNKNOWN_OPERATION: 1, C.WRONG_DURATION: 1, C.PRECEDENCE: 1,
                                      C.MAKESPAN_MISMATCH: 1}


def test_out_of_range_times_are_bad_input(tiny: Instance) -> None:
    with pytest.raises(InputError, match="within"):
        validate(tiny, sched(edit(TINY, (0, 0), start=-MAX_TIME - 5, end=-MAX_TIME - 2)))


# --- disruption semantics, on TINY as the baseline ------------------------------------------------------
# At time 5: (0,0), (1,0), (2,0) are done, (0,1) [4,6) on m1 and (2,1) [4,7) on m2 are running.
BREAK_M2 = Disruption(time=5, events=[MachineBreakdown(machine=2, start=5, duration=3)])
# (2,1) is interrupted by the downtime [5, 8) on m2 and restarts at 11 with its full duration.
REPAIRED = [(0, 0, 0, 0, 3), (0, 1, 1, 4, 6), (0, 2, 2, 9, 11),
            (1, 0, 0, 3, 5), (1, 1, 2, 8, 9), (1, 2, 1, 9, 13),
            (2, 0, 1, 0, 4), (2, 1, 2, 11, 14), (2, 2, 0, 14, 15)]


def test_interrupted_operation_restarting_after_the_downtime_is_valid(tiny: Instance) -> None:
    report = validate(tiny, sched(REPAIRED), disruption=BREAK_M2, baseline=sched(TINY))
    assert report.valid, report.violations


def test_interrupted_operation_left_in_place_overlaps_the_downtime(tiny: Instance) -> None:
    rows = edit(REPAIRED, (2, 1), start=4, end=7)
    only(validate(tiny, sched(rows), disruption=BREAK_M2, baseline=sched(TINY)), C.DOWNTIME_OVERLAP,
         job=2, step=1, machine=2)


def test_interrupted_operation_restarting_too_early() -> None:
    inst = Instance(name="one", jobs=[[(0, 4)], [(1, 2)]])
    base = sched([(0, 0, 0, 0, 4), (1, 0, 1, 0, 2)], name="one")
    done = (1, 0, 1, 0, 2)
    # (0,0) runs [0,4) and m0 goes down over [3,5): it restarts from scratch at 5 or later.
    d = Disruption(time=2, events=[MachineBreakdown(machine=0, start=3, duration=2)])
    assert validate(inst, sched([(0, 0, 0, 5, 9), done], name="one"), disruption=d, baseline=base).valid
    only(validate(inst, sched([(0, 0, 0, 1, 5), done], name="one"), disruption=d, baseline=base),
         C.DOWNTIME_OVERLAP, job=0, step=0, machine=0)
    # A downtime [0,1) revealed late at 2: the restart is due at the reveal time, and [1,5) misses the
    # downtime but starts too early.
    late = Disruption(time=2, events=[MachineBreakdown(machine=0, start=0, duration=1)])
    assert validate(inst, sched([(0, 0, 0, 2, 6), done], name="one"), disruption=late, baseline=base).valid
    only(validate(inst, sched([(0, 0, 0, 1, 5), done], name="one"), disruption=late, baseline=base),
         C.FROZEN_MOVED, job=0, step=0)


def test_moving_a_started_operation_is_frozen_moved(tiny: Instance) -> None:
    rows = edit(REPAIRED, (0, 1), start=5, end=7)
    only(validate(tiny, sched(rows), disruption=BREAK_M2, baseline=sched(TINY)), C.FROZEN_MOVED, job=0, step=1)


def test_pending_operation_starting_before_the_reveal_time(tiny: Instance) -> None:
    d = Disruption(time=5)
    rows = edit(edit(TINY, (1, 1), start=4, end=5), (1, 0), start=2, end=4)
    # (1,0) had started at 3 (moved: frozen_moved); (1,1) had not started (baseline 7) and now starts at 4.
    report = validate(tiny, sched(rows), disruption=d, baseline=sched(TINY))
    assert report.find(C.STARTED_IN_PAST, job=1, step=1)
    assert report.find(C.FROZEN_MOVED, job=1, step=0)


def test_duration_change_extends_a_started_operation_in_place(tiny: Instance) -> None:
    d = Disruption(time=5, events=[DurationChange(job=0, step=1, duration=4)])
    rows = edit(edit(TINY, (0, 1), end=8), (0, 2), start=8, end=10)
    assert validate(tiny, sched(rows), disruption=d, baseline=sched(TINY)).valid
    only(validate(tiny, sched(TINY), disruption=d, baseline=sched(TINY)), C.WRONG_DURATION, job=0, step=1)


def test_extension_into_a_downtime_interrupts_the_operation(tiny: Instance) -> None:
    # (0,1) runs [4,6) on m1; extended to 4 it would run [4,8) into the downtime [7,9): it restarts at 9.
    d = Disruption(time=5, events=[DurationChange(job=0, step=1, duration=4),
                                   MachineBreakdown(machine=1, start=7, duration=2)])
    rows = edit(edit(edit(TINY, (0, 1), start=9, end=13), (0, 2), start=13, end=15), (1, 2), start=13, end=17)
    assert validate(tiny, sched(rows), disruption=d, baseline=sched(TINY)).valid
    in_place = edit(edit(TINY, (0, 1), end=8), (1, 2), start=9, end=13)
    report = validate(tiny, sched(in_place), disruption=d, baseline=sched(TINY))
    assert report.find(C.DOWNTIME_OVERLAP, job=0, step=1, machine=1)


def test_without_baseline_started_checks_are_skipped_but_downtime_is_checked(tiny: Instance) -> None:
    d = Disruption(time=5, events=[MachineBreakdown(machine=2, start=5, duration=3)])
    report = validate(tiny, sched(TINY), disruption=d)
    assert report.count_by_code() == {C.DOWNTIME_OVERLAP: 2}
    assert report.find(C.DOWNTIME_OVERLAP, job=2, step=1) and report.find(C.DOWNTIME_OVERLAP, job=1, step=1)
    assert validate(tiny, sched(REPAIRED), disruption=d).valid


def test_unknown_duration_change_and_incomplete_baseline_are_warnings(tiny: Instance) -> None:
    d = Disruption(time=0, events=[DurationChange(job=7, step=0, duration=3)])
    report = validate(tiny, sched(TINY), disruption=d, baseline=sched(TINY[:-1]))
    assert report.valid
    assert [w.code for w in report.warnings] == [C.UNKNOWN_OPERATION, C.MISSING_OPERATION]


# --- no false alarms on thousands of random valid schedules ---------------------------------------------

@pytest.mark.timeout(180)  # 51 s measured in the whole suite on a loaded 2-core machine
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(solved_instances())
def test_random_valid_schedules_pass(case: tuple[Instance, Schedule]) -> None:
    instance, schedule = case
    report = validate(instance, schedule)
    assert report.valid, report.violations


@pytest.mark.timeout(90)  # 23 s measured in the whole suite on a loaded 2-core machine
@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(disrupted_cases())
def test_random_valid_disrupted_schedules_pass(case: tuple[Instance, Schedule, Disruption, Schedule]) -> None:
    instance, baseline, disruption, schedule = case
    assert validate(instance, baseline).valid
    report = validate(instance, schedule, disruption=disruption, baseline=baseline)
    assert report.valid, (disruption, report.violations)
    assert validate(instance, schedule, disruption=disruption).valid


# -- edges found by the full mutation run of validate.py (bench/README.md, mutation testing) ----------------

ONE = Instance(name="one", jobs=[[(0, 4)], [(1, 2)]])
ONE_DONE = (1, 0, 1, 0, 2)


def test_an_operation_started_as_the_downtime_ended_is_frozen_not_interrupted() -> None:
    # (0,0) started at 3, exactly when m0's downtime [1, 3) ended, before the reveal at 5: it keeps its start.
    base = sched([(0, 0, 0, 3, 7), ONE_DONE], name="one")
    d = Disruption(time=5, events=[MachineBreakdown(machine=0, start=1, duration=2)])
    assert validate(ONE, base, disruption=d, baseline=base).valid


def test_a_started_operation_shrunk_to_no_length_inside_a_downtime_is_valid_in_place() -> None:
    # (0,0) started at 2 inside m0's downtime [1, 4) and now takes no time: a no-length operation overlaps
    # nothing, so it neither overlaps the downtime nor is interrupted (as in the execution state).
    base = sched([(0, 0, 0, 2, 6), ONE_DONE], name="one")
    d = Disruption(time=5, events=[DurationChange(job=0, step=0, duration=0),
                                   MachineBreakdown(machine=0, start=1, duration=3)])
    report = validate(ONE, sched([(0, 0, 0, 2, 2), ONE_DONE], name="one"), disruption=d, baseline=base)
    assert report.valid, report.violations


def test_an_interrupted_operation_inside_a_downtime_is_reported_once() -> None:
    # (0,0) ran [0, 4) and m0 went down over [3, 5): restarted at 4 it overlaps the downtime, which says it
    # all; a second downtime, on m1, must not make it also "restarted too early".
    base = sched([(0, 0, 0, 0, 4), ONE_DONE], name="one")
    d = Disruption(time=2, events=[MachineBreakdown(machine=0, start=3, duration=2),
                                   MachineBreakdown(machine=1, start=6, duration=1)])
    only(validate(ONE, sched([(0, 0, 0, 4, 8), ONE_DONE], name="one"), disruption=d, baseline=base),
         C.DOWNTIME_OVERLAP, job=0, step=0, machine=0)


def test_disruption_violations_scope_job_step_and_machine_only(tiny: Instance) -> None:
    late = Disruption(time=2, events=[MachineBreakdown(machine=0, start=0, duration=1)])
    base = sched([(0, 0, 0, 0, 4), ONE_DONE], name="one")
    report = validate(ONE, sched([(0, 0, 0, 1, 5), ONE_DONE], name="one"), disruption=late, baseline=base)
    assert [(v.code, v.scope) for v in report.violations] == [(C.FROZEN_MOVED, {"job": 0, "step": 0, "machine": 0})]
    rows = edit(edit(TINY, (1, 1), start=4, end=5), (1, 0), start=2, end=4)
    report = validate(tiny, sched(rows), disruption=Disruption(time=5), baseline=sched(TINY))
    scopes = {v.code: v.scope for v in report.violations if v.code in (C.FROZEN_MOVED, C.STARTED_IN_PAST)}
    assert scopes == {C.FROZEN_MOVED: {"job": 1, "step": 0, "machine": 0},
                      C.STARTED_IN_PAST: {"job": 1, "step": 1, "machine": 2}}


def test_machines_whose_ends_lie_far_apart_do_not_mix_in_the_overlap_check() -> None:
    # The overlap check packs each machine's end times into its own band of one running maximum; a band
    # narrower than the spread of end times (found by mutation, by search over small schedules) carried m0's
    # late ends into m1's and invented an overlap in this valid plan.
    inst = Instance(name="two", jobs=[[(1, 3), (0, 1)], [(1, 3), (0, 2)]])
    plan = sched([(0, 0, 1, 7, 10), (0, 1, 0, 12, 13), (1, 0, 1, 4, 7), (1, 1, 0, 9, 11)], name="two")
    assert validate(inst, plan).valid


def test_static_violations_scope_job_step_and_machine_and_say_what_is_wrong(tiny: Instance) -> None:
    report = validate(tiny, sched(edit(TINY, (0, 2), end=11)))
    assert [(v.scope, v.message) for v in report.violations] == [
        ({"job": 0, "step": 2, "machine": 2}, "operation (job 0, step 2) lasts 3 but its duration is 2")]
    inst = Instance(name="one", jobs=[[(0, 3), (1, 2)]])
    report = validate(inst, sched([(0, 0, 0, -1, 2), (0, 1, 1, 2, 4)], name="one"))
    assert [v.scope for v in report.violations] == [{"job": 0, "step": 0, "machine": 0}]
    entries = validate(tiny, sched([*TINY, TINY[0], (5, 0, 0, 20, 21)], makespan=21)).violations
    assert sorted(v.message for v in entries) == ["entry 10 names (job 5, step 0), which instance tiny does not have",
                                                  "entry 9 repeats operation (job 0, step 0)"]


def test_a_duration_change_just_past_the_last_job_or_step_is_ignored_with_a_warning(tiny: Instance) -> None:
    # One past the end: job 3 of three jobs, step 3 of job 0's three steps (which must not land on job 1's
    # first step).
    d = Disruption(time=0, events=[DurationChange(job=3, step=0, duration=9), DurationChange(job=0, step=3,
                                                                                             duration=9)])
    report = validate(tiny, sched(TINY), disruption=d, baseline=sched(TINY))
    assert report.valid, report.violations
    assert [(w.code, w.scope) for w in report.warnings] == [(C.UNKNOWN_OPERATION, {"job": 3, "step": 0}),
                                                            (C.UNKNOWN_OPERATION, {"job": 0, "step": 3})]
    assert all(w.message.endswith("which the instance does not have, ignored") for w in report.warnings)


@pytest.mark.parametrize("machine", [-1, 3, 10**6])
def test_a_breakdown_of_a_machine_the_instance_lacks_is_ignored_with_a_warning(tiny: Instance, machine: int) -> None:
    # Files and requests are refused before this; a Disruption built in code passed with no word at all.
    d = Disruption(time=0, events=[MachineBreakdown(machine=machine, start=0, duration=5),
                                   MachineBreakdown(machine=0, start=50, duration=1)])
    report = validate(tiny, sched(TINY), disruption=d, baseline=sched(TINY))
    assert report.valid, report.violations
    assert [(w.code, w.scope, w.message) for w in report.warnings] == [
        (C.UNKNOWN_MACHINE, {"machine": machine}, f"breakdown of machine {machine}, which the instance does not "
         "have, ignored")]
