"""LCRP's tabu search (its default ``first_edit``): a compiled tabu search where a local edit leaves a gap (issue 17).

LCRP's first edit (AOR, or the free operations re-dispatched in planned order) is 2-10 % above the lower bound
on the bench's own 20x15 disruptions, and when the cascade's CP-SAT solve cannot close that gap locally, the
CP-SAT re-optimizing search after it needed most of the repair's time to. A tabu search over the free
operations' machine sequences closes most of it in a few hundredths of a CPU second when compiled; LCRP runs it
from the local plan, before the CP-SAT search, and gives every stage a smaller time box
(:data:`.lcrp.TABU_BOX_SCALE`). Measured in bench/README.md (issue 17, "The tabu search as the default").

The search itself is C (:mod:`alas_argo.jssp.repair._tabu`, ``_tabu.c``), built at install as an optional
extension (setup.py): an install without a C compiler has none, and :func:`tabu_first_edit` then says so and
leaves the first edit as it was. This module turns the execution state into the kernel's arrays (through
:class:`~alas_argo.jssp.repair.reoptimizing.FreeSequences`, whose exact re-timing the kernel repeats) and its
answer back into a plan, re-timed by ``FreeSequences`` itself.

Deterministic: a fixed number of iterations (:data:`ITERATIONS`) and a random stream from the repair's seed.
On a deterministic clock the search is charged :data:`SECONDS_PER_OPERATION_ITERATION` nominal seconds per
iteration and free operation, measured, so that nominal seconds stay comparable to CPU seconds.
"""

from __future__ import annotations

import importlib
import math
from array import array
from dataclasses import dataclass
from enum import StrEnum
from types import ModuleType

from alas_argo.errors import ContractError, InputError
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.reoptimizing import FreeSequences
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock

__all__ = ["DEFAULT_FIRST_EDIT", "ITERATIONS", "KERNEL", "MAX_OPERATIONS", "MIN_ITERATIONS",
           "SECONDS_PER_OPERATION_ITERATION", "STREAMS", "STREAM_SEED_STEP", "FirstEdit", "TabuSearch", "kernel",
           "tabu_first_edit", "tabu_search", "unavailable"]

#: Iterations of the search, all streams together (fewer when it reaches the bound, or when the caller's budget
#: pays for fewer). The sweep below ran one stream.
#: Measured on the bench's own TA 20x15 scenarios (ta11-ta14, 24 cases; scripts/repair_quality.py, LCRP after
#: the search, the tabu first): at the time box's 0.5, 10,000 / 20,000 / 30,000 / 100,000 iterations end 1.0002
#: / 0.9991 / 0.9984 / 0.9984 of a 10 s global re-solve's makespan (shocks 1.0053 / 1.0043 / 1.0020 / 1.0021);
#: at 0.3, 30,000 end 0.9987 (shocks 1.0028). More than 30,000 buy nothing.
ITERATIONS = 30_000
#: Independent searches the iterations are split between (seeds ``seed + k * STREAM_SEED_STEP``), the shortest
#: plan kept; one when the iterations are too few to split. Measured on the bench's own TA 20x15 scenarios over
#: three random streams (bench/README.md, issue 17, "The tabu search as the default"): one search of 30,000
#: iterations left the shocks 1.0029 / 1.0037 / 1.0060 of a 10 s global re-solve's makespan (worst case 1.0200),
#: two of 15,000 1.0036 / 1.0038 / 1.0027 (worst 1.0100), three of 10,000 1.0034 / 1.0045 / 1.0019, for the
#: same nominal time.
STREAMS = 2
STREAM_SEED_STEP = 7919
#: The fewest iterations worth starting a search for: with less of the caller's budget left the first edit
#: stands. A floor against a search squeezed to a handful of iterations by a tiny budget, not a tuned value.
MIN_ITERATIONS = 1000
#: The search's tabu table holds a pair of free operations per entry: 16 MB at this many; above it (a 100x20
#: disruption early in the plan) the first edit stays the re-dispatch's.
MAX_OPERATIONS = 2000
#: Nominal seconds charged per iteration and free operation on a deterministic clock. Measured on the 2-core
#: development machine (load 5-7; scripts/tabu_rate.py): CPU seconds of the search per iteration and free
#: operation over the bench's own TA 20x15 cases (ta11-ta14, the 16 searches of 1,000 iterations or more),
#: median 2.6e-8 and 2.7e-8 in two runs, means 2.7e-8 and 2.9e-8, about 190,000 iterations a second at 200
#: free operations; so a search of 10,000 iterations over 200 free operations is charged 0.052 s, about what
#: it costs in CPU.
SECONDS_PER_OPERATION_ITERATION = 2.6e-8
#: The compiled module's name.
KERNEL = "alas_argo.jssp.repair._tabu"


class FirstEdit(StrEnum):
    """How LCRP closes the gap a local edit leaves: CP-SAT alone, or a tabu search first (the default)."""

    REDISPATCH = "redispatch"  #: AOR, or the free operations re-dispatched in planned order when shorter
    TABU = "tabu"  #: that, then up to :data:`ITERATIONS` iterations of the compiled tabu search from the local plan

    @classmethod
    def parse(cls, value: FirstEdit | str) -> FirstEdit:
        """The first edit named ``value``; an InputError listing the known names otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise InputError(f"unknown first edit {value!r}; known: {', '.join(e.value for e in cls)}") from None


#: LCRP's first edit when the caller names none (library, CLI, pipeline and controller alike).
DEFAULT_FIRST_EDIT = FirstEdit.TABU


@dataclass(frozen=True)
class TabuSearch:
    """What one search returned.

    Attributes:
        sequences: The best machine sequences found, re-timed by ``FreeSequences`` (never longer than the start).
        makespan: The makespan the kernel computed for them (equal to ``sequences.makespan``).
        iterations: The iterations made (fewer than asked when the search reached the bound).
    """

    sequences: FreeSequences
    makespan: int
    iterations: int


def kernel() -> ModuleType | None:
    """The compiled search, or None when the extension was not built (no C compiler at install)."""
    try:
        return importlib.import_module(KERNEL)
    except ImportError:
        return None


def _arrays(free: FreeSequences) -> list[array[int]]:
    """The kernel's ten int64 arrays, in its argument order: per operation its duration, machine, release, job
    predecessor and successor (-1 for none); the machine sequences concatenated with their offsets; the
    downtimes per machine, sorted, with their offsets."""
    offsets, sequence = [0], []
    for seq in free.seqs:
        sequence.extend(seq)
        offsets.append(len(sequence))
    lo: list[int] = []
    hi: list[int] = []
    down_offsets = [0]
    for m in range(len(free.seqs)):
        for a, b in sorted(free.downtimes.get(m, ())):
            lo.append(a)
            hi.append(b)
        down_offsets.append(len(lo))
    return [array("q", values) for values in (free.duration, free.machine, free.release, free.job_pred,
                                              free.job_succ, offsets, sequence, lo, hi, down_offsets)]


def tabu_search(free: FreeSequences, *, bound: int, seed: int, iterations: int = ITERATIONS) -> TabuSearch | None:
    """The compiled tabu search from ``free``'s sequences, stopping after ``iterations`` or at ``bound``; None
    when the kernel is not built.

    Raises:
        ContractError: the kernel's makespan disagrees with ``FreeSequences``' for its sequences, or it refused
            the arrays built here (a bug in one of the two; never a plan timed one way and judged another).
    """
    compiled = kernel()
    if compiled is None:
        return None
    arrays = _arrays(free)
    try:
        raw, makespan, made = compiled.search(*arrays, free.floor, bound, iterations, seed % 2**64)
    except ValueError as e:
        raise ContractError(f"the tabu kernel refused the free sequences: {e}") from e
    order = array("q")
    order.frombytes(raw)
    offsets = arrays[5]
    found = free.adopted([list(order[offsets[m]:offsets[m + 1]]) for m in range(len(free.seqs))])
    if found is None or found.makespan != makespan:
        raise ContractError(f"the tabu kernel's plan re-times to {found and found.makespan} in Python, not {makespan}")
    return TabuSearch(found, makespan, made)


def unavailable(free_operations: int) -> str | None:
    """Why the search cannot run on a disruption with ``free_operations`` free operations (the kernel not built,
    too many of them), or None when it can: one answer for LCRP, which sizes its time box by it, and
    :func:`tabu_first_edit`, which says it in a note."""
    if free_operations > MAX_OPERATIONS:
        return f"{free_operations} free operations, above its {MAX_OPERATIONS}"
    if kernel() is None:
        return f"the compiled search ({KERNEL}) is not built (no C compiler at install)"
    return None


def tabu_first_edit(state: ExecutionState, first: Schedule, *, bound: int, seed: int, notes: list[str],
                    clock: SearchClock, seconds: float = math.inf) -> Schedule | None:
    """The tabu search's plan from the first edit ``first`` when shorter (the caller validates it), else None,
    with one note saying what happened: the search's result, or why it did not run (the kernel not built, too
    many free operations, too little time), in which case the first edit stands.

    On a deterministic ``clock`` the search is charged its iterations (:data:`SECONDS_PER_OPERATION_ITERATION`);
    it makes no more of them than ``seconds`` pays for at that rate, and none when that is under
    :data:`MIN_ITERATIONS`: a caller's budget bounds the whole repair.
    """
    n = len(state.free)
    why_not = unavailable(n)
    if why_not is not None:
        notes.append(f"tabu first edit: {why_not}; the first edit stands")
        return None
    affordable = seconds / (SECONDS_PER_OPERATION_ITERATION * max(1, n))
    iterations = int(min(ITERATIONS, affordable))
    if iterations < MIN_ITERATIONS:
        notes.append(f"tabu first edit: {seconds:.3f} s left of the budget pays for {iterations} iterations, "
                     f"under {MIN_ITERATIONS}; the first edit stands")
        return None
    began = clock.now()
    streams = STREAMS if iterations >= STREAMS * MIN_ITERATIONS else 1
    start = FreeSequences(state, first)  # every stream starts here (a search leaves it unchanged)
    best: TabuSearch | None = None
    made = 0
    for k in range(streams):
        done = tabu_search(start, bound=bound, seed=seed + k * STREAM_SEED_STEP, iterations=iterations // streams)
        assert done is not None  # the kernel was found above
        made += done.iterations
        if best is None or done.makespan < best.makespan:
            best = done
        if best.makespan <= bound:
            break
    assert best is not None
    clock.charge_at_least(began, SECONDS_PER_OPERATION_ITERATION * made * n)
    notes.append(f"tabu first edit ({made} iterations, {clock.now() - began:.3f} s): makespan "
                 f"{first.makespan} -> {best.makespan}")
    return best.sequences.to_schedule() if best.makespan < first.makespan else None
