"""`jssp.limits`: a time, duration or number read from a document is a strict integer within ±2^40, the range
docs/contracts.md states. Both ends are pinned by value (the other tests refuse only values far past the upper
end, so the lower bound and the exact end points were free), and a job, step or machine number takes the same
range. Machine numbers are below 10,000, as the same page says (the instance tests use the constant, not the
number)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_MACHINES, MAX_TIME, Count, TimeValue

TIME: TypeAdapter[int] = TypeAdapter(TimeValue)
COUNT: TypeAdapter[int] = TypeAdapter(Count)


def test_the_documented_range_is_2_to_the_40_either_way() -> None:
    assert MAX_TIME == 2**40 == 1_099_511_627_776
    for adapter in (TIME, COUNT):
        assert adapter.validate_python(2**40) == 2**40
        assert adapter.validate_python(-(2**40)) == -(2**40)


@pytest.mark.parametrize(("value", "refusal"), [
    (2**40 + 1, "less than or equal to 1099511627776"),
    (-(2**40) - 1, "greater than or equal to -1099511627776"),
    (True, "Input should be a valid integer"),
    (5.0, "Input should be a valid integer"),
])
def test_a_value_past_either_end_or_not_an_integer_is_refused(value: object, refusal: str) -> None:
    for adapter in (TIME, COUNT):
        with pytest.raises(ValidationError, match=refusal):
            adapter.validate_python(value)


def test_machine_numbers_are_below_10_000() -> None:
    assert MAX_MACHINES == 10_000
    assert Instance(name="wide", jobs=[[(9_999, 1)]]).num_machines == 10_000
    with pytest.raises(InputError, match=r"machine number 10000 is too large \(at most 9999\)"):
        Instance(name="wider", jobs=[[(10_000, 1)]])
