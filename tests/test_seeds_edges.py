"""`seeds.Seed`, the exported type of a seed read from a flag or a document: an integer in [0, MAX_SEED], MAX_SEED
being CP-SAT's int32 limit. The seed fields of the package spell the same bounds out (`Field(ge=0, le=MAX_SEED)`)
rather than use the alias, so only a test of the alias itself keeps its bounds from drifting."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from alas_argo.seeds import MAX_SEED, Seed

SEED: TypeAdapter[int] = TypeAdapter(Seed)


def test_a_seed_is_an_int32_from_zero() -> None:
    assert MAX_SEED == 2_147_483_647
    assert SEED.validate_python(0) == 0 and SEED.validate_python(MAX_SEED) == MAX_SEED


@pytest.mark.parametrize(("value", "refusal"), [(-1, "greater than or equal to 0"),
                                                (2**31, "less than or equal to 2147483647")])
def test_a_seed_outside_the_range_is_refused(value: int, refusal: str) -> None:
    with pytest.raises(ValidationError, match=refusal):
        SEED.validate_python(value)
