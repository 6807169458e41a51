"""The independent schedule validator: every check of docs/contracts.md, all violations, vectorized.

Non-circular validation is the point, so this module imports only the data models (instance, schedule,
disruption, verdict) and shares no code with planners or repair. The arrays the checks run on are built in
:mod:`alas_argo.jssp.validation_arrays`. Every check is a numpy pass over flat
arrays (the machine-overlap check sorts once), so a 100x20 schedule is checked in about a millisecond.

How entries are read: an entry naming a job or step the instance lacks is ``unknown_operation``; when an
operation has several entries the first one (in list order) is *the* entry and the others are
``duplicate_operation``. Only the first entries of known operations take part in the other checks, so one
broken entry yields one violation rather than a cascade. Zero-length intervals overlap nothing.

Disruption semantics (docs/contracts.md), with ``baseline`` the plan in force before the disruption:

- an operation has *started* when its baseline start is before ``disruption.time``;
- a started operation is *interrupted* when its in-place interval ``[baseline start, baseline start +
  duration)`` (duration after any ``duration_change``) overlaps a downtime of its machine; it must restart
  from scratch, with its full duration, at or after ``max(end of those downtimes, time)``; an earlier start
  is ``downtime_overlap`` when it runs into the downtime, ``frozen_moved`` otherwise;
- every other started operation keeps its baseline start (``frozen_moved``); a duration change extends it
  in place (``wrong_duration`` is measured against the new duration);
- an operation that has not started must start at or after ``time`` (``started_in_past``);
- nothing runs on a machine during its downtime ``[start, start + duration)`` (``downtime_overlap``).

Without a baseline, operations whose start in the checked schedule is before ``time`` are taken as started,
so ``frozen_moved`` and ``started_in_past`` cannot be detected and are skipped; duration changes and
downtimes are still checked. ``instance_mismatch`` is a warning: validity is decided structurally.
"""

from __future__ import annotations

import numpy as np

from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_TIME
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validation_arrays import (
    BASE_FIELDS,
    I64,
    Arr,
    Entries,
    OpTable,
    entry_rows,
    first_entries,
    op_ids,
    op_table,
)
from alas_argo.jssp.verdict import ValidationReport, Violation, ViolationCode

__all__ = ["MAX_TIME", "validate"]


class _Collector:
    """Turns masks over operation ids into violations with scopes and messages."""

    def __init__(self, table: OpTable) -> None:
        self.table = table
        self.violations: list[Violation] = []

    def add(self, code: ViolationCode, message: str, **scope: int) -> None:
        self.violations.append(Violation.model_construct(code=code, message=message, scope=scope))

    def ops(self, code: ViolationCode, mask: Arr, text: str, **extra: Arr) -> None:
        """One violation per operation id in ``mask``; ``text`` is formatted with job, step and extras."""
        ids = np.flatnonzero(mask)
        if not len(ids):
            return
        cols = {"job": self.table.job[ids].tolist(), "step": self.table.step[ids].tolist(),
                **{k: v[ids].tolist() for k, v in extra.items()}}
        scope_keys = [k for k in cols if not k.startswith("_")]
        for row in zip(*cols.values(), strict=True):
            values = dict(zip(cols, row, strict=True))
            self.add(code, text.format(**values), **{k: values[k] for k in scope_keys})


def _static_checks(out: _Collector, e: Entries, duration: Arr) -> None:
    t = out.table
    p = e.present
    out.ops(ViolationCode.MISSING_OPERATION, ~p, "operation (job {job}, step {step}) on machine {machine} "
            "has no entry", machine=t.machine)
    out.ops(ViolationCode.WRONG_MACHINE, p & (e.machine != t.machine), "operation (job {job}, step {step}) "
            "runs on machine {machine} but belongs on machine {_want}", machine=e.machine, _want=t.machine)
    length = e.end - e.start
    out.ops(ViolationCode.WRONG_DURATION, p & (length != duration), "operation (job {job}, step {step}) "
            "lasts {_got} but its duration is {_want}", machine=e.machine, _got=length, _want=duration)
    out.ops(ViolationCode.NEGATIVE_START, p & (e.start < 0), "operation (job {job}, step {step}) starts at "
            "{_start}, before time 0", machine=e.machine, _start=e.start)
    prev_end = np.roll(e.end, 1)
    prec = p & np.roll(p, 1) & (t.step > 0) & (e.start < prev_end)
    out.ops(ViolationCode.PRECEDENCE, prec, "operation (job {job}, step {step}) starts at {_start}, before "
            "step {other_step} ends at {_end}", other_job=t.job, other_step=t.step - 1, _start=e.start,
            _end=prev_end)
    _overlap_check(out, e)


def _overlap_check(out: _Collector, e: Entries) -> None:
    """Flag every operation that starts before some earlier operation on its machine has ended."""
    ids = np.flatnonzero(e.present & (e.end > e.start))
    if len(ids) < 2:
        return
    ids = ids[np.lexsort((e.end[ids], e.start[ids], e.machine[ids]))]
    m, s, f = e.machine[ids], e.start[ids], e.end[ids]
    # A running maximum of end times that restarts at each machine: offset each machine's ends into its
    # own band, so one cumulative max over the whole sorted array never mixes machines.
    rank = np.concatenate(([0], np.cumsum(m[1:] != m[:-1])))
    base = f.min()
    band = int(f.max() - base) + 1
    packed = rank * band + (f - base)
    run = np.maximum.accumulate(packed)
    holder = np.maximum.accumulate(np.where(packed == run, np.arange(len(ids)), 0))
    prev_max = run[:-1] - rank[1:] * band + base
    hit = np.flatnonzero((m[1:] == m[:-1]) & (s[1:] < prev_max)) + 1
    t = out.table
    for i in hit.tolist():
        a, b = int(ids[i]), int(ids[holder[i - 1]])
        out.add(ViolationCode.MACHINE_OVERLAP,
                f"operation (job {t.job[a]}, step {t.step[a]}) starts at {s[i]} on machine {m[i]} while "
                f"(job {t.job[b]}, step {t.step[b]}) runs until {e.end[b]}",
                job=int(t.job[a]), step=int(t.step[a]), machine=int(m[i]), other_job=int(t.job[b]),
                other_step=int(t.step[b]))


def _disruption_checks(out: _Collector, e: Entries, d: Disruption, duration: Arr,
                       baseline: Entries | None) -> None:
    p, t = e.present, out.table
    windows = [(b.machine, b.start, b.end) for b in d.breakdowns if b.duration > 0]
    in_downtime = np.zeros(len(p), dtype=bool)
    for m, lo, hi in windows:
        hit = p & (e.machine == m) & (e.start < hi) & (e.end > lo) & (e.end > e.start)
        in_downtime |= hit
        out.ops(ViolationCode.DOWNTIME_OVERLAP, hit, f"operation (job {{job}}, step {{step}}) runs "
                f"[{{_s}}, {{_e}}) on machine {m} during its downtime [{lo}, {hi})", machine=e.machine,
                _s=e.start, _e=e.end)
    if baseline is None:
        return
    started = baseline.present & (baseline.start < d.time)
    restart = np.full(len(p), np.iinfo(I64).min, dtype=I64)
    ref_end = baseline.start + duration
    for m, lo, hi in windows:
        hit = started & (t.machine == m) & (baseline.start < hi) & (ref_end > lo) & (ref_end > baseline.start)
        restart[hit] = np.maximum(restart[hit], max(hi, d.time))
    interrupted = restart > np.iinfo(I64).min
    frozen = started & ~interrupted
    out.ops(ViolationCode.FROZEN_MOVED, p & frozen & (e.start != baseline.start), "operation (job {job}, "
            "step {step}) had started at {_was} before the disruption at " + str(d.time) + " but starts at "
            "{_now}", machine=e.machine, _was=baseline.start, _now=e.start)
    out.ops(ViolationCode.FROZEN_MOVED, p & interrupted & (e.start < restart) & ~in_downtime, "operation "
            "(job {job}, step {step}) was interrupted by a breakdown and must restart at or after "
            "{_restart}, not at {_now}", machine=e.machine, _restart=restart, _now=e.start)
    out.ops(ViolationCode.STARTED_IN_PAST, p & ~started & (e.start < d.time), "operation (job {job}, step "
            "{step}) had not started by the disruption at " + str(d.time) + " but starts at {_now}",
            machine=e.machine, _now=e.start)


def validate(instance: Instance, schedule: Schedule, *, disruption: Disruption | None = None,
             baseline: Schedule | None = None) -> ValidationReport:
    """Check a schedule against its instance (and a disruption) and report every violation.

    Args:
        instance: The instance the schedule claims to solve.
        schedule: The schedule to check; it may be arbitrarily broken.
        disruption: Events revealed at ``disruption.time``; enables the disruption-aware checks.
        baseline: The plan in force before the disruption; tells which operations had started. Without
            it, frozen and started-in-the-past checks are skipped (see the module docstring).

    Returns:
        The report; ``valid`` is true exactly when there are no violations.

    Raises:
        InputError: A time value lies outside ``+-MAX_TIME``.
    """
    table = op_table(instance)
    n = len(table.job)
    out = _Collector(table)
    warnings: list[Violation] = []
    if schedule.instance != instance.name:
        warnings.append(Violation(code=ViolationCode.INSTANCE_MISMATCH, message=f"schedule is for instance "
                                  f"{schedule.instance!r}, checked against {instance.name!r}"))
    rows = entry_rows(schedule)
    known, ids = op_ids(table, rows)
    for i in np.flatnonzero(~known).tolist():
        j, s = int(rows[i, 0]), int(rows[i, 1])
        out.add(ViolationCode.UNKNOWN_OPERATION, f"entry {i} names (job {j}, step {s}), which instance "
                f"{instance.name} does not have", job=j, step=s, index=i)
    entries, dups = first_entries(n, rows, ids, known)
    for i in dups.tolist():
        j, s = int(rows[i, 0]), int(rows[i, 1])
        out.add(ViolationCode.DUPLICATE_OPERATION, f"entry {i} repeats operation (job {j}, step {s})",
                job=j, step=s, index=i)
    duration = table.duration
    if disruption is not None:
        duration = duration.copy()
        for (j, s), new in disruption.duration_changes.items():
            if 0 <= j < len(table.lengths) and 0 <= s < table.lengths[j]:
                duration[table.offsets[j] + s] = new
            else:
                warnings.append(Violation(code=ViolationCode.UNKNOWN_OPERATION, message=f"duration change "
                                          f"for (job {j}, step {s}), which the instance does not have, "
                                          "ignored", scope={"job": j, "step": s}))
        # As for a duration change: a breakdown of a machine the instance lacks constrains nothing here, and
        # saying so beats a silent pass (code that builds a Disruption skips the parse-time range check).
        for b in disruption.breakdowns:
            if not 0 <= b.machine < instance.num_machines:
                warnings.append(Violation(code=ViolationCode.UNKNOWN_MACHINE, message=f"breakdown of machine "
                                          f"{b.machine}, which the instance does not have, ignored",
                                          scope={"machine": b.machine}))
    _static_checks(out, entries, duration)
    if disruption is not None:
        base = None
        if baseline is not None:
            b_rows = entry_rows(baseline, BASE_FIELDS, 3)
            b_known, b_ids = op_ids(table, b_rows)
            base, _ = first_entries(n, b_rows, b_ids, b_known, (2, 2, 2))
            if not base.present.all():
                warnings.append(Violation(code=ViolationCode.MISSING_OPERATION, message=f"baseline has no "
                                          f"entry for {int((~base.present).sum())} operation(s); they are "
                                          "taken as not started"))
        _disruption_checks(out, entries, disruption, duration, base)
    computed = int(rows[:, 4].max()) if len(rows) else 0
    if schedule.makespan != computed:
        out.add(ViolationCode.MAKESPAN_MISMATCH, f"schedule claims makespan {schedule.makespan} but its "
                f"latest operation ends at {computed}")
    return ValidationReport.of(out.violations, warnings)
