"""`repeated`: the entries a list gives more than once, as the refusals name them."""

from __future__ import annotations

from alas_argo.jssp.repair import RepairMethod
from alas_argo.repeats import repeated


def test_repeated_names_each_repeat_once_sorted_as_text() -> None:
    assert repeated(["ft06", "la01", "ft06", "ta01", "la01", "ft06"]) == ["ft06", "la01"]
    assert repeated([3, 1, 3, 10, 10]) == ["10", "3"]  # sorted as the message prints them
    assert repeated([RepairMethod.LCRP, RepairMethod.AOR, RepairMethod.LCRP]) == ["lcrp"]
    assert repeated(["a", "b"]) == [] and repeated([]) == []
