"""The benchmark table written row by row: replaced by the first row, never by a run that measured nothing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from alas_argo.benchmarks.partial_table import PartialTable
from alas_argo.errors import InputError


@dataclass
class Row:
    name: str
    value: float


def test_rows_replace_an_earlier_table_from_the_first_one_on(tmp_path: Path) -> None:
    path = tmp_path / "out" / "t.csv"
    with PartialTable(path, ["name", "value"]) as table:
        assert path.parent.is_dir() and not path.exists()
        table.add(Row("a", 1.5))
        assert path.read_text() == "name,value\na,1.5\n"  # durable before the next case starts
        table.add(Row("b,c", 2.0))
    assert path.read_text() == 'name,value\na,1.5\n"b,c",2.0\n' and table.rows == 2
    with PartialTable(path, ["value"]) as table:
        table.add(Row("d", 3.0))
    assert path.read_text() == "value\n3.0\n"


def test_a_table_that_gets_no_row_leaves_the_earlier_one(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("earlier\n")
    with pytest.raises(KeyboardInterrupt), PartialTable(path, ["name"]):
        raise KeyboardInterrupt  # a run stopped before its first row
    assert path.read_text() == "earlier\n"


@pytest.mark.parametrize("place", ["directory", "under a file"])
def test_a_place_that_cannot_take_the_table_is_refused_before_any_row(tmp_path: Path, place: str) -> None:
    if place == "directory":
        path = tmp_path / "t.csv"
        path.mkdir()
    else:
        (tmp_path / "f").write_text("x")
        path = tmp_path / "f" / "t.csv"
    with pytest.raises(InputError, match="cannot write") as e:
        PartialTable(path, ["name"])
    assert e.value.where == str(path)
