"""The catalog's lookups and suites at their edges."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance, load_instance, suite


def _refusal(call: object, *args: str) -> InputError:
    assert callable(call)
    with pytest.raises(InputError) as refused:
        call(*args)
    return refused.value


def test_absurd_names_are_input_errors_not_crashes() -> None:
    # 5000 digits: int() refuses more than 4300 (ValueError); a name longer than a file name can be made
    # `Path.is_file()` raise OSError (ENAMETOOLONG). Both were tracebacks from `alas instance show`.
    assert _refusal(get_instance, "ta" + "1" * 5000).message.startswith("unknown instance 'ta111")
    assert _refusal(load_instance, "x" * 300).message.startswith("unknown instance 'xxx")


@pytest.mark.parametrize(("given", "named"), [("ta1,ta01", "ta01"), ("FT06,la01,ft06", "ft06"),
                                              ("yn1, YN01", "yn1")])
def test_one_instance_under_two_spellings_is_listed_twice(given: str, named: str) -> None:
    # `--suite ta1,ta01` ran ta01 twice and counted it twice in every mean: the repeat check compared spellings.
    assert _refusal(suite, given).message == f"{named} listed more than once in {given!r}"
