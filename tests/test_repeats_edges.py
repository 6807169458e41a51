"""`repeated` reads an enum member by its value, not by its ``str``: a plain Enum's ``str`` is ``Class.NAME``,
so without the value a member would be named wrongly in a refusal and never match the same entry given as text."""

from __future__ import annotations

from enum import Enum

from alas_argo.repeats import repeated


class _Colour(Enum):
    """A plain Enum (not a StrEnum like RepairMethod), whose ``str`` differs from its value."""

    RED = "red"
    BLUE = "blue"


def test_a_plain_enum_member_is_named_by_its_value() -> None:
    assert str(_Colour.RED) == "_Colour.RED"  # what a refusal would print without the value
    assert repeated([_Colour.RED, _Colour.BLUE, _Colour.RED]) == ["red"]


def test_a_member_and_its_value_given_as_text_are_the_same_entry() -> None:
    assert repeated([_Colour.RED, "red"]) == ["red"]
    assert repeated([_Colour.BLUE, "red"]) == []
