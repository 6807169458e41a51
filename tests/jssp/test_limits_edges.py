"""`jssp.limits`: a time, duration or number read from a document is a strict integer within ±2^40, the range
docs/contracts.md states. Both ends are pinned by value (the other tests refuse only values far past the upper
end, so the lower bound and the exact end points were free), and a job, step or machine number takes the same
range."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from alas_argo.jssp.limits import MAX_TIME, Count, TimeValue

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
