"""Run ids as the log's key segment (alas_argo.log.layout.check_run_id): the whole id is checked, a final
newline included (a regex `$` matches before one, so `.match` let "r1\n" through to the store)."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.log.layout import check_run_id


@pytest.mark.parametrize("run_id", ["r1\n", "r1\n\n", "a" * 128 + "\n", "\nr1"])
def test_a_run_id_with_a_newline_is_refused_naming_it(run_id: str) -> None:
    with pytest.raises(InputError) as refused:
        check_run_id(run_id)
    assert refused.value.where == "run id"
    assert refused.value.message == (f"invalid run id {run_id!r} (letters, digits, '.', '_', '-'; at most 128)")


@pytest.mark.parametrize("run_id", ["r1", "a" * 128, "ta01.breakdown.0", "A-b_c"])
def test_a_usable_run_id_is_returned_as_given(run_id: str) -> None:
    assert check_run_id(run_id) == run_id
