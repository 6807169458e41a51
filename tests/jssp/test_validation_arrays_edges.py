"""The validator's arrays at their edges, found unasserted by mutation testing (h-serve, 2026-12-06): a time of
exactly MAX_TIME is checked and one past it is bad input naming the entry (machine numbers too, and values past
int64); a job or step one past the instance's last is an unknown operation, not an IndexError; operation ids are
-1 where unknown; the instance's table is cached (the last 8 instances, most recently used kept) and read-only."""

from __future__ import annotations

import numpy as np
import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_TIME
from alas_argo.jssp.validate import validate
from alas_argo.jssp.validation_arrays import BASE_FIELDS, entry_rows, op_ids, op_table
from alas_argo.jssp.verdict import ViolationCode
from tests.jssp.test_validate import TINY, edit, sched


def test_a_time_of_max_time_is_checked_not_refused(tiny: Instance) -> None:
    # (0, 2) ends at MAX_TIME: a legal value, so the answer is a verdict (its duration is wrong), not an
    # error.
    report = validate(tiny, sched(edit(TINY, (0, 2), end=MAX_TIME)))
    assert [v.code for v in report.violations] == [ViolationCode.WRONG_DURATION]


def test_a_value_past_max_time_names_the_first_entry_holding_one(tiny: Instance) -> None:
    # Entry 2 holds exactly MAX_TIME (allowed); entry 4's machine number is one past it, entry 6's start too:
    # the error names entry 4, the first out of range, whichever column (machine, start, end) it is in.
    rows = edit(edit(edit(TINY, (0, 2), end=MAX_TIME), (1, 1), machine=MAX_TIME + 1), (2, 0), start=-MAX_TIME - 1)
    with pytest.raises(InputError) as refused:
        validate(tiny, sched(rows))
    assert refused.value.where == {"index": 4}
    assert str(refused.value) == f"schedule values must lie within +-{MAX_TIME} (index 4)"


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1])
def test_a_value_past_int64_is_the_same_bad_input(tiny: Instance, value: int) -> None:
    """numpy cannot hold it at all (an OverflowError inside): the user still reads the limit, and the entry (it
    was not named on this path)."""
    with pytest.raises(InputError) as refused:
        validate(tiny, sched(edit(TINY, (1, 0), start=value), makespan=12))
    assert refused.value.message == f"schedule values must lie within +-{MAX_TIME}"
    assert refused.value.where == {"index": 3}


def test_a_baseline_is_checked_on_its_start_only(tiny: Instance) -> None:
    """A baseline row is (job, step, start): its start is the value held to the limit."""
    base = sched(edit(TINY, (0, 1), start=MAX_TIME + 1))
    with pytest.raises(InputError) as refused:
        entry_rows(base, BASE_FIELDS, 3)
    assert refused.value.where == {"index": 1}


def test_one_past_the_last_job_or_step_is_an_unknown_operation(tiny: Instance) -> None:
    # tiny has jobs 0-2 of 3 steps: (3, 0) and (0, 3) are the first numbers past them.
    report = validate(tiny, sched([*TINY, (3, 0, 0, 20, 21), (0, 3, 0, 22, 23)], makespan=23))
    unknown = [v for v in report.violations if v.code is ViolationCode.UNKNOWN_OPERATION]
    assert [v.scope for v in unknown] == [{"job": 3, "step": 0, "index": 9}, {"job": 0, "step": 3, "index": 10}]
    assert report.count_by_code() == {ViolationCode.UNKNOWN_OPERATION: 2}


def test_operation_ids_are_minus_one_where_unknown(tiny: Instance) -> None:
    rows = np.array([[3, 0], [0, 3], [-1, 0], [0, -1], [2, 2], [1, 0]], dtype=np.int64)
    known, ids = op_ids(op_table(tiny), rows)
    assert known.tolist() == [False, False, False, False, True, True]
    assert ids.tolist() == [-1, -1, -1, -1, 8, 3]  # id = offset[job] + step, 3 steps per job


def test_the_table_is_cached_and_read_only(tiny: Instance) -> None:
    table = op_table(tiny)
    assert op_table(tiny) is table  # revalidation loops check one instance many times: built once
    for arr in table:
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 99  # shared through the cache: an in-place edit would corrupt every later verdict


def _other(i: int) -> Instance:
    return Instance(name=f"i{i}", jobs=[[(0, i + 1)]], lower_bound=None, upper_bound=None)


def test_the_cache_keeps_the_last_eight_instances_used() -> None:
    """Bounded (a long-running controller validates many instances) but large enough for a revalidation loop."""
    others = [_other(i) for i in range(9)]
    tables = [op_table(o) for o in others[:8]]
    assert all(op_table(o) is t for o, t in zip(others, tables, strict=False))  # all 8 kept; others[0] the oldest
    op_table(others[0])  # used again: now the most recent, others[1] the least recent
    op_table(others[8])  # a 9th instance pushes out the least recently used one only
    assert op_table(others[0]) is tables[0]
    assert op_table(others[1]) is not tables[1]
    assert op_table(others[1]).duration.tolist() == [2]  # rebuilt the same
