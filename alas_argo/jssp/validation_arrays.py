"""The flat arrays the validator's checks run on: the instance as arrays over operation ids, and a
schedule's entries read into them (first entry per operation, the rest duplicates).

Part of the independent validator (:mod:`alas_argo.jssp.validate`): like it, this imports only the data
models and shares no code with planners or repair.
"""

from __future__ import annotations

from collections import OrderedDict
from itertools import chain
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_TIME
from alas_argo.jssp.schedule import Schedule

__all__ = ["BASE_FIELDS", "FIELDS", "I64", "Arr", "Entries", "OpTable", "entry_rows", "first_entries", "op_ids",
           "op_table"]


I64 = np.int64
Arr = np.ndarray
FIELDS = attrgetter("job", "step", "machine", "start", "end")
BASE_FIELDS = attrgetter("job", "step", "start")  # a baseline only tells what had started, and when


class OpTable(NamedTuple):
    """The instance as flat arrays indexed by operation id ``offset[job] + step``."""

    lengths: Arr
    offsets: Arr
    job: Arr
    step: Arr
    machine: Arr
    duration: Arr


class Entries(NamedTuple):
    """The first entry of each known operation, as arrays over operation ids."""

    present: Arr
    start: Arr
    end: Arr
    machine: Arr


_TABLES: OrderedDict[int, tuple[Instance, OpTable]] = OrderedDict()


def op_table(instance: Instance) -> OpTable:
    """The instance's arrays, cached for the last few instances (revalidation loops check one instance
    many times; holding the instance keeps its id from being reused while cached)."""
    hit = _TABLES.get(id(instance))
    if hit is not None and hit[0] is instance:
        _TABLES.move_to_end(id(instance))
        return hit[1]
    table = _build_table(instance)
    _TABLES[id(instance)] = (instance, table)
    while len(_TABLES) > 8:
        _TABLES.popitem(last=False)
    return table


def _build_table(instance: Instance) -> OpTable:
    lengths = np.fromiter((len(ops) for ops in instance.jobs), dtype=I64, count=instance.num_jobs)
    offsets = np.zeros_like(lengths)
    np.cumsum(lengths[:-1], out=offsets[1:])
    flat = np.array([op for ops in instance.jobs for op in ops], dtype=I64).reshape(-1, 2)
    job = np.repeat(np.arange(len(lengths), dtype=I64), lengths)
    table = OpTable(lengths, offsets, job, np.arange(len(job), dtype=I64) - offsets[job], flat[:, 0],
                   flat[:, 1].copy())
    for arr in table:
        arr.flags.writeable = False  # shared through the cache: a stray in-place edit must fail loudly
    return table


def entry_rows(schedule: Schedule, fields: attrgetter[Any] = FIELDS, width: int = 5) -> Arr:
    ops = schedule.operations
    try:
        # fromiter over a flat chain is the fastest way from pydantic objects to an array (about 2x np.array)
        arr = np.fromiter(chain.from_iterable(map(fields, ops)), dtype=I64,
                          count=width * len(ops)).reshape(-1, width)
    except OverflowError:
        # Rare (a value past int64): find the entry in Python, to name it as the in-range path below does.
        bad = next(i for i, op in enumerate(ops) if any(not -(2**63) <= v < 2**63 for v in fields(op)))
        raise InputError(f"schedule values must lie within +-{MAX_TIME}", where={"index": bad}) from None
    if arr.size and np.abs(arr[:, 2:]).max() > MAX_TIME:
        bad = int(np.argmax(np.abs(arr[:, 2:]).max(axis=1) > MAX_TIME))
        raise InputError(f"schedule values must lie within +-{MAX_TIME}", where={"index": bad})
    return arr


def op_ids(table: OpTable, rows: Arr) -> tuple[Arr, Arr]:
    """(known mask over entries, operation id per entry, -1 where unknown)."""
    jobs, steps = rows[:, 0], rows[:, 1]
    known = (jobs >= 0) & (jobs < len(table.lengths)) & (steps >= 0)
    known[known] &= steps[known] < table.lengths[jobs[known]]
    ids = np.full(len(rows), -1, dtype=I64)
    ids[known] = table.offsets[jobs[known]] + steps[known]
    return known, ids


def first_entries(n: int, rows: Arr, ids: Arr, known: Arr, cols: tuple[int, int, int] = (3, 4, 2)
                   ) -> tuple[Entries, Arr]:
    """The first entry per operation id, and the entry positions that are duplicates.

    ``cols`` are the row columns of start, end and machine.
    """
    positions = np.flatnonzero(known)
    uniq, first = np.unique(ids[positions], return_index=True)
    canon = positions[first]
    dup = np.ones(len(positions), dtype=bool)
    dup[first] = False
    present = np.zeros(n, dtype=bool)
    present[uniq] = True
    start, end, machine = (np.zeros(n, dtype=I64) for _ in range(3))
    start[uniq], end[uniq], machine[uniq] = (rows[canon, c] for c in cols)
    return Entries(present, start, end, machine), positions[dup]
