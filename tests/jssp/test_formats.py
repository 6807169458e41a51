"""Parsers: Taillard, OR-Library, JSON; detection; bad input names the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.formats import InstanceFormat, parse_instance_text, read_instance_file

FT06_ORLIB = """ instance ft06
 +++++++++++++++++++++++++++++
 Fisher and Thompson 6x6 instance, alternate name (mt06)
 6 6
 2  1  0  3  1  6  3  7  5  3  4  6
 1  8  2  5  4 10  5 10  0 10  3  4
 2  5  3  4  5  8  0  9  1  1  4  7
 1  5  0  5  2  5  3  3  4  8  5  9
 2  9  1  3  4  5  5  4  0  3  3  1
 1  3  3  3  5  9  0 10  4  4  2  1
 +++++++++++++++++++++++++++++
"""

TAILLARD_2X3 = """Nb of jobs, Nb of Machines, Time seed, Machine seed, Upper bound, Lower bound :
 2 3 840612802 398197754 10 9
Times
 1 2 3
 4 5 6
Machines
 1 2 3
 3 1 2
"""


def test_orlib_ft06_matches_bundled() -> None:
    inst = parse_instance_text(FT06_ORLIB, name="ft06")
    assert inst.jobs == get_instance("ft06").jobs


def test_taillard_one_based_machines() -> None:
    inst = parse_instance_text(TAILLARD_2X3, name="t")
    assert inst.jobs == [[(0, 1), (1, 2), (2, 3)], [(2, 4), (0, 5), (1, 6)]]


def test_json_roundtrip(tmp_path: Path) -> None:
    doc = get_instance("la01").to_json()
    path = tmp_path / "la01.json"
    path.write_text(json.dumps(doc))
    assert read_instance_file(path) == get_instance("la01")


@pytest.mark.parametrize(
    ("text", "fmt", "fragment"),
    [
        ("6 6\n2 1 0 3\n", InstanceFormat.ORLIB, "line 2"),  # truncated: one short job line
        ("2 2\n0 1 1 2\n0 3 1 2.5\n", InstanceFormat.ORLIB, "'2.5' is not an integer"),
        ("2 2\n0 5 1 3\n1 2\n", InstanceFormat.ORLIB, "line 3"),  # a short job row: job 1 has one pair
        ("2 2\n0 5 1 3\n1 2\n", InstanceFormat.ORLIB, "job 1: expected 2 machine/duration pairs"),
        ("2 2\n0 5\n1 3\n0 2 1 4\n", InstanceFormat.ORLIB, "found 2 numbers"),  # a wrapped job row
        ("2 2\n0 5 1 3 0 2 1 4\n1 2 0 1\n", InstanceFormat.ORLIB, "line 2"),  # two jobs merged on one row
        ("2 2\n1 2\n3 4\n1 2\n", InstanceFormat.TAILLARD, "truncated"),
        ("2 2\n0 1 7 2\n0 3 1 2\n", InstanceFormat.ORLIB, "machine 7 outside"),
        ("[1, 2]", InstanceFormat.JSON, "expected a JSON object"),
        ('{"name": "x", "jobs": [[[0, "a"]]]}', InstanceFormat.JSON, "jobs"),
        ('{"name": "x", "jobs": [[[0, -1]]]}', InstanceFormat.JSON, "negative duration"),
        ('{"name": "x", "jobs": ', InstanceFormat.JSON, "invalid JSON"),
        ("just words\n", None, "no numeric data"),
    ],
)
def test_bad_input_names_place(text: str, fmt: InstanceFormat | None, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        parse_instance_text(text, name="x", where="bad.txt", fmt=fmt)
    assert fragment in str(info.value)
    assert "bad.txt" in str(info.value)


def test_detection() -> None:
    assert parse_instance_text(FT06_ORLIB, name="a").num_machines == 6
    assert parse_instance_text(TAILLARD_2X3, name="b").num_jobs == 2
    assert parse_instance_text(json.dumps(get_instance("ft06").to_json()), name="c").name == "ft06"


@pytest.mark.parametrize("text", [FT06_ORLIB.split("\n", 3)[3], TAILLARD_2X3.split("\n", 1)[1]])  # header first
def test_a_byte_order_mark_is_not_read_as_a_comment_line(tmp_path: Path, text: str) -> None:
    # The header "2 3 ..." behind a BOM did not look numeric, was skipped as a comment, and the first job row
    # became the header: "implausible size 0 jobs x 3 machines" on a good file saved by a Windows editor.
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    plain.write_text(text.lstrip(), encoding="utf-8")
    marked.write_text(text.lstrip(), encoding="utf-8-sig")
    assert marked.read_bytes().startswith(b"\xef\xbb\xbf")
    assert read_instance_file(marked).jobs == read_instance_file(plain).jobs
