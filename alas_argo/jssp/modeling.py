"""The CP-SAT model of a (possibly disrupted, partly pinned) job shop, built for :mod:`alas_argo.jssp.cpsat`.

Domains are tightened before any variable exists: heads (earliest starts from job predecessors, the
release and per-operation minimum starts) and tails (latest ends from pinned successors and the horizon).
A request that contradicts itself (pinned operations that overlap, a head past its tail) is reported as
an :class:`~alas_argo.errors.InfeasibleError` naming the operation, before CP-SAT runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.disruption import merged_downtimes
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import add_hints, cp_model, new_model

__all__ = ["Key", "OperationModel", "ProgressEvent", "build_model", "hint_makespan"]

Key = tuple[int, int]


@dataclass(frozen=True)
class ProgressEvent:
    """An improving solution, reported while a solve runs.

    Attributes:
        phase: ``dispatch:<rule>`` (the warm start), ``cpsat`` (makespan search), ``stability`` (second
            phase of TOTAL_SHIFT) or ``lns``.
        makespan: The incumbent's makespan.
        bound: Best proven lower bound so far (0 when the phase does not prove bounds).
        seconds: Wall time since the solve started.
    """

    phase: str
    makespan: int
    bound: int
    seconds: float


@dataclass
class OperationModel:
    """A built model and the handles the optimizer reads back."""

    model: cp_model.CpModel
    starts: dict[Key, cp_model.IntVar]  #: free operations only
    constants: dict[Key, tuple[int, int]]  #: pinned operations: (start, duration)
    durations: dict[Key, int]  #: effective duration of every operation
    makespan: cp_model.IntVar
    horizon: int
    trivial_bound: int
    hint_makespan: int | None = None  #: the hint's makespan when it is feasible for the request
    heads: dict[Key, int] = field(default_factory=dict)


def _effective_durations(instance: Instance, durations: Mapping[Key, int]) -> dict[Key, int]:
    dur = {(j, s): d for j, ops in enumerate(instance.jobs) for s, (_, d) in enumerate(ops)}
    for key, d in durations.items():
        if key not in dur:
            raise InputError("duration given for an operation that does not exist",
                             where={"job": key[0], "step": key[1]})
        if d < 0:
            raise InputError(f"negative duration {d}", where={"job": key[0], "step": key[1]})
        dur[key] = d
    return dur


def _check_pinned(instance: Instance, dur: dict[Key, int], fixed: Mapping[Key, int],
                  downtimes: Sequence[tuple[int, int, int]]) -> None:
    per_machine: dict[int, list[tuple[int, int, Key | None]]] = {}
    for key, start in fixed.items():
        if key not in dur:
            raise InputError("pinned operation does not exist", where={"job": key[0], "step": key[1]})
        per_machine.setdefault(instance.machine(*key), []).append((start, start + dur[key], key))
    for m, s, e in downtimes:
        if not 0 <= m < instance.num_machines:
            raise InputError(f"downtime on unknown machine {m}", where={"machine": m})
        if e > s:
            per_machine.setdefault(m, []).append((s, e, None))
    for m, items in per_machine.items():
        items.sort(key=lambda t: (t[0], t[1]))
        # Latest end seen so far, and whose it is; from the first start, so that a lone pin before time 0
        # overlaps nothing (the job-order check refuses it for what it is).
        reach, owner = items[0][0], None
        for s, e, k in items:
            if s < reach and (k is not None or owner is not None):
                culprit = k or owner
                assert culprit is not None
                raise InfeasibleError(f"pinned operation overlaps another pinned operation or a downtime "
                                      f"on machine {m} at {s}", where={"job": culprit[0], "step": culprit[1]})
            if e > reach:
                reach, owner = e, k


def hint_makespan(instance: Instance, hint: Schedule, dur: Mapping[Key, int], fixed: Mapping[Key, int],
                  release: int, min_starts: Mapping[Key, int], downtimes: Sequence[tuple[int, int, int]],
                  precedences: Sequence[tuple[Key, Key]], makespan_limit: int | None) -> int | None:
    """The hint's makespan if it satisfies every constraint of the request, else None."""
    ops = hint.by_key()
    if len(ops) != len(dur) or len(hint.operations) != len(dur) or set(ops) != set(dur):
        return None
    for key, o in ops.items():
        if o.machine != instance.machine(*key) or o.end - o.start != dur[key] or o.start < 0:
            return None
        if key in fixed:
            if o.start != fixed[key]:
                return None
        elif o.start < max(release, min_starts.get(key, 0)):
            return None
        if key[1] > 0 and ops[(key[0], key[1] - 1)].end > o.start:
            return None
    for a, b in precedences:
        if ops[a].end > ops[b].start:
            return None
    busy: dict[int, list[tuple[int, int]]] = {}
    for o in ops.values():
        busy.setdefault(o.machine, []).append((o.start, o.end))
    for m, s, e in downtimes:
        if e > s:
            busy.setdefault(m, []).append((s, e))
    for intervals in busy.values():
        intervals.sort()
        reach = -1
        for s, e in intervals:
            if s < reach:
                return None
            reach = max(reach, e)
    makespan = max(o.end for o in ops.values())
    return None if makespan_limit is not None and makespan > makespan_limit else makespan


def build_model(instance: Instance, *, durations: Mapping[Key, int], fixed: Mapping[Key, int], release: int,
                min_starts: Mapping[Key, int], downtimes: Sequence[tuple[int, int, int]],
                precedences: Sequence[tuple[Key, Key]], makespan_limit: int | None, horizon: int | None,
                hint: Schedule | None) -> OperationModel:
    """Build the CP-SAT model; see :class:`alas_argo.jssp.cpsat.SolveRequest` for the semantics.

    Raises:
        InputError: Unknown operations or machines.
        InfeasibleError: The pinned part or the domains already contradict each other.
    """
    dur = _effective_durations(instance, durations)
    for key in min_starts:
        if key not in dur:
            raise InputError("minimum start given for an operation that does not exist",
                             where={"job": key[0], "step": key[1]})
    for pair in precedences:
        for k in pair:
            if k not in dur:
                raise InputError("precedence names an operation that does not exist",
                                 where={"job": k[0], "step": k[1]})
    _check_pinned(instance, dur, fixed, downtimes)
    downtimes = merged_downtimes(downtimes)  # overlapping windows as fixed intervals would be infeasible
    hint_ms = None if hint is None else hint_makespan(instance, hint, dur, fixed, release, min_starts,
                                                      downtimes, precedences, makespan_limit)
    free_total = sum(d for k, d in dur.items() if k not in fixed)
    late = max([release, 0, *(fixed[k] + dur[k] for k in fixed), *(e for _, _, e in downtimes),
                *(v for k, v in min_starts.items() if k not in fixed)])
    h = horizon if horizon is not None else max(late + free_total, hint_ms or 0)
    if makespan_limit is not None:
        h = min(h, makespan_limit)

    # Heads and tails: the tightest domains the job order and the pinned operations allow.
    heads: dict[Key, int] = {}
    tails: dict[Key, int] = {}  # latest end
    for j, ops in enumerate(instance.jobs):
        t = 0
        for s in range(len(ops)):
            k = (j, s)
            if k in fixed:
                if fixed[k] < t:
                    raise InfeasibleError(f"pinned start {fixed[k]} precedes the earliest end {t} of the "
                                          "job's previous operation", where={"job": j, "step": s})
                t = fixed[k] + dur[k]
            else:
                heads[k] = max(t, release, min_starts.get(k, 0))
                t = heads[k] + dur[k]
        latest = h
        for s in reversed(range(len(ops))):
            k = (j, s)
            if k in fixed:
                latest = fixed[k]
            else:
                tails[k] = latest
                latest -= dur[k]
                if heads[k] + dur[k] > tails[k]:
                    raise InfeasibleError(f"no room: earliest end {heads[k] + dur[k]} is after the latest "
                                          f"end {tails[k]}", where={"job": j, "step": s})
    fixed_end = max((fixed[k] + dur[k] for k in fixed), default=0)
    if fixed_end > h:
        raise InfeasibleError(f"pinned operations end at {fixed_end}, after the horizon {h}")

    model = new_model()
    starts: dict[Key, cp_model.IntVar] = {}
    by_machine: dict[int, list[cp_model.IntervalVar]] = {}
    for k, lb in heads.items():
        var = model.new_int_var(lb, tails[k] - dur[k], f"s{k[0]}_{k[1]}")
        starts[k] = var
        by_machine.setdefault(instance.machine(*k), []).append(
            model.new_fixed_size_interval_var(var, dur[k], f"i{k[0]}_{k[1]}"))
        if k[1] > 0 and (k[0], k[1] - 1) in starts:
            model.add(var >= starts[(k[0], k[1] - 1)] + dur[(k[0], k[1] - 1)])
    # The earliest head per machine, in one pass (a scan of every head per machine was a tenth of LCRP's
    # Python time); the keys in by_machine's order, as before.
    least: dict[int, int] = {}
    for k, head in heads.items():
        m = instance.machine(*k)
        if m not in least or head < least[m]:
            least[m] = head
    floor = {m: least[m] for m in by_machine}
    blocks = [(instance.machine(*k), fixed[k], fixed[k] + dur[k]) for k in fixed]
    for m, s, e in [*blocks, *downtimes]:
        # A block that ends before every free operation of its machine may start cannot interact.
        if m in by_machine and e > floor[m] and e > s:
            by_machine[m].append(model.new_fixed_size_interval_var(s, e - s, f"b{m}_{s}"))
    for intervals in by_machine.values():
        if len(intervals) > 1:
            model.add_no_overlap(intervals)
    for a, b in precedences:
        end_a = starts[a] + dur[a] if a in starts else fixed[a] + dur[a]
        start_b = starts[b] if b in starts else fixed[b]
        if a in fixed and b in fixed:
            if fixed[a] + dur[a] > fixed[b]:
                raise InfeasibleError("pinned operations break a required precedence",
                                      where={"job": b[0], "step": b[1]})
            continue
        model.add(end_a <= start_b)

    machine_load: dict[int, int] = {}
    for k in heads:
        machine_load[instance.machine(*k)] = machine_load.get(instance.machine(*k), 0) + dur[k]
    trivial = max([fixed_end, *(floor[m] + load for m, load in machine_load.items()),
                   *(heads[k] + sum(dur[(k[0], s)] for s in range(k[1], len(instance.jobs[k[0]])))
                     for k in heads if k[1] == 0 or (k[0], k[1] - 1) in fixed)])
    makespan = model.new_int_var(min(trivial, h), h, "makespan")
    for j, ops in enumerate(instance.jobs):
        last = (j, len(ops) - 1)
        if last in starts:
            model.add(makespan >= starts[last] + dur[last])
    if hint is not None:
        hinted = hint.starts()
        add_hints(model, ((var, hinted[k]) for k, var in starts.items() if k in hinted))
    constants = {k: (fixed[k], dur[k]) for k in fixed}
    return OperationModel(model=model, starts=starts, constants=constants, durations=dur, makespan=makespan,
                          horizon=h, trivial_bound=trivial, hint_makespan=hint_ms, heads=heads)
