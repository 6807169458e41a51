"""Edges of the flag values: both ends of a range are taken, every refusal says what was wrong in one line
naming the flag, and a list entry that only looks like a number is refused, not a traceback."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, ValidationError, model_validator

from alas_argo.cli import main
from alas_argo.cli.flag_values import MAX_REPEATS, counts, finite_float, flag_error, seed
from alas_argo.errors import InputError
from alas_argo.seeds import MAX_SEED


def test_a_float_flag_that_is_not_a_number_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as done:
        main(["solve", "ft06", "--time-limit", "ten"])
    assert done.value.code == 2 and list(tmp_path.iterdir()) == []
    assert "argument --time-limit: not a number: 'ten'\n" in capsys.readouterr().err
    assert finite_float("-2.5") == -2.5  # the sign is each flag's business, not this one's


def test_both_ends_of_the_seed_range_are_seeds() -> None:
    assert (seed("0"), seed(str(MAX_SEED))) == (0, 2_147_483_647)
    with pytest.raises(argparse.ArgumentTypeError, match=r"^not an integer: 'seven'$"):
        seed("seven")


def test_both_ends_of_a_list_s_range_are_taken() -> None:
    assert counts("1, 100000", "--events") == [1, MAX_REPEATS]
    assert counts("5", "--rows", minimum=5, maximum=5) == [5]
    for bad in ("4", "6"):
        with pytest.raises(InputError, match=f"^--rows: must be from 5 to 5, got {bad}$"):
            counts(bad, "--rows", minimum=5, maximum=5)


def test_every_repeated_entry_is_named() -> None:
    with pytest.raises(InputError, match=r"^--events: 10, 100 given more than once$"):
        counts("100,10,100,10,20", "--events")


@pytest.mark.parametrize("text", ["--3", "\u00b2", "X3", "3X", "+3", "1_000", "\u0663"])
def test_a_list_entry_that_only_looks_like_a_number_is_refused(text: str) -> None:
    """``--3`` passed ``lstrip("-").isdigit()`` and ``²`` passed ``isdigit()``; ``int()`` then refused both with
    a ValueError traceback (exit 1). Only ASCII digits, with at most one minus sign, are read."""
    with pytest.raises(InputError, match=re.escape(f"--events: takes whole numbers such as 10,100, got {text!r}")):
        counts(f"10,{text}", "--events")


@pytest.mark.parametrize("entry", ["--3", "\u00b2"])
def test_a_bench_given_such_an_entry_exits_2_naming_the_flag(entry: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "open", "--events", f"10,{entry}", "--root", str(tmp_path / "s")]) == 2
    assert capsys.readouterr().err == f"alas: error: --events: takes whole numbers such as 10,100, got {entry!r}\n"
    assert not (tmp_path / "s").exists()


class _Flags(BaseModel):
    """A model built from flags, its fields named as the flags are."""

    repair_effort: int = Field(1, gt=0)
    seeds: list[int] = Field(default_factory=list)
    first: int = 0
    last: int = 0

    @model_validator(mode="after")
    def _ordered(self) -> _Flags:
        if self.first > self.last:
            raise ValueError("--first must not be after --last")
        return self


def _refusal(**flags: object) -> str:
    with pytest.raises(ValidationError) as e:
        _Flags.model_validate(flags)
    return str(flag_error(e.value))


def test_a_model_s_refusal_names_the_flag() -> None:
    assert _refusal(repair_effort=0) == "--repair-effort: Input should be greater than 0"
    # An entry of a list field is the list's flag, not "--seeds.1".
    assert _refusal(seeds=[1, "x"]) == ("--seeds: Input should be a valid integer, unable to parse string as an "
                                        "integer")
    # A refusal of the whole model names no field: "a flag", and the validator's own words.
    assert _refusal(first=2, last=1) == "a flag: --first must not be after --last"
