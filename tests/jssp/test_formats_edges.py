"""Instance files at their edges, found untested by mutation testing: each refusal's exact message and place
(file and line), the size limits of the header on both sides, zero durations and the last machine read while
one machine past it is refused, 0-based Taillard files, commas and blank lines, what a file of several
instances reads, detection with leading blanks, and read_instance_file's own errors and format override."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.formats import (
    InstanceFormat,
    parse_instance_json,
    parse_instance_text,
    parse_orlib,
    parse_taillard,
    read_instance_file,
)
from alas_argo.jssp.limits import MAX_TIME

ORLIB, TAILLARD, JSON = InstanceFormat.ORLIB, InstanceFormat.TAILLARD, InstanceFormat.JSON


def _refusal(text: str, fmt: InstanceFormat | None = None) -> tuple[str, object]:
    with pytest.raises(InputError) as info:
        parse_instance_text(text, name="x", where="f.txt", fmt=fmt)
    return info.value.message, info.value.where


@pytest.mark.parametrize(("text", "fmt", "message", "where"), [
    ("words only\n\n", None, "no numeric data found (expected a 'jobs machines' header line)", "f.txt"),
    ("# 1 2\n7\n0 1\n", ORLIB, "header must start with 'jobs machines'", "f.txt line 2"),
    ("7\n0 1\n", TAILLARD, "header must start with 'jobs machines'", "f.txt line 1"),
    ("0 2\n", ORLIB, "implausible size 0 jobs x 2 machines", "f.txt line 1"),
    ("2 0\n", TAILLARD, "implausible size 2 jobs x 0 machines", "f.txt line 1"),
    ("100001 1\n", ORLIB, "implausible size 100001 jobs x 1 machines", "f.txt line 1"),
    ("1 10001\n", ORLIB, "implausible size 1 jobs x 10001 machines", "f.txt line 1"),
    ("2 2\n0 3 1 2\n1 4 0 12345678901234567890123\n", ORLIB,
     "number 12345678901234567890... is too long (23 characters)", "f.txt line 3"),
    ("2 2\n0 3 1 2\n1 4 0 1.25\n", None, "'1.25' is not an integer", "f.txt line 3"),
    ("2 2\n1 2\n3 4.5\n", TAILLARD, "'4.5' is not an integer", "f.txt line 3"),
    ("2 2\n" + "0 1 1 1\n" + "1 1 0 " + "7" * 50 + "\n", ORLIB,
     "number 77777777777777777777... is too long (50 characters)", "f.txt line 3"),
    # A line is a comment only when its first token is no number: "1e3" starts a data row, and is refused.
    ("2 2\n0 3 1 2\n1e3 4 0 1\n", ORLIB, "'1e3' is not an integer", "f.txt line 3"),
])
def test_each_refusal_says_what_and_where(text: str, fmt: InstanceFormat | None, message: str, where: str) -> None:
    assert _refusal(text, fmt) == (message, where)


@pytest.mark.parametrize("header", ["100000 1", "1 10000"])
def test_the_largest_plausible_sizes_pass_the_header(header: str) -> None:
    # The data is missing: the refusal is the truncation, not the size, so the size itself was accepted.
    for fmt in (ORLIB, TAILLARD):
        assert _refusal(header + "\n", fmt)[0].startswith("truncated")


def test_one_job_on_one_machine_is_an_instance() -> None:
    assert parse_instance_text("1 1\n0 5\n", name="x").jobs == [[(0, 5)]]
    assert parse_instance_text("1 1\n5\n1\n", name="x", fmt=TAILLARD).jobs == [[(0, 5)]]


@pytest.mark.parametrize(("text", "fmt", "message", "where"), [
    ("2 2\n", ORLIB, "truncated: expected 2 job lines, found 0", "f.txt line end"),
    ("3 2\n0 1 1 2\n1 3 0 4\n", ORLIB, "truncated: expected 3 job lines, found 2", "f.txt line 3"),
    ("2 2\n", TAILLARD, "truncated: expected 8 numbers after the header, found 0", "f.txt line end"),
    ("2 3\n1 2 3\n4 5 6\nMachines\n1 2 3\n", TAILLARD, "truncated: expected 12 numbers after the header, found 9",
     "f.txt line 5"),
    ("2 3\n0 1 1 2 2 3\n0 1 1 2 2\n", ORLIB,
     "job 1: expected 3 machine/duration pairs (6 numbers, the header's 3 machines), found 5 numbers; jobs of "
     "other lengths need the JSON format", "f.txt line 3"),
])
def test_a_short_file_names_how_short_and_where(text: str, fmt: InstanceFormat, message: str, where: str) -> None:
    assert _refusal(text, fmt) == (message, where)


@pytest.mark.parametrize(("text", "fmt", "message", "where"), [
    ("2 2\n0 3 1 2\n2 4 0 1\n", ORLIB, "machine 2 outside 0..1", "f.txt line 3"),
    ("2 2\n0 3 1 2\n-1 4 0 1\n", ORLIB, "machine -1 outside 0..1", "f.txt line 3"),
    ("2 2\n0 3 1 2\n1 4 0 -1\n", ORLIB, "negative duration -1", "f.txt line 3"),
    # Times on lines 2-3, machines on lines 4-5: each refusal names the line of the number at fault.
    ("2 2\n3 4\n5 6\n1 2\n3 1\n", TAILLARD, "machine 3 outside 1..2 (this file numbers machines from 1)",
     "f.txt line 5"),
    ("2 3\n3 4 5\n5 6 7\n1 2 3\n3 1 4\n", TAILLARD, "machine 4 outside 1..3 (this file numbers machines from 1)",
     "f.txt line 5"),
    ("2 2\n3 4\n5 -6\n1 2\n2 1\n", TAILLARD, "negative duration -6", "f.txt line 3"),
    ("2 2\n3 4\n5 6\n0 1\n-1 0\n", TAILLARD, "machine -1 outside 0..1", "f.txt line 5"),
    # An 18-digit number is still read (at most MAX_INT_DIGITS): what refuses it is its meaning.
    ("2 2\n0 3 1 2\n1 4 100000000000000000 1\n", ORLIB, "machine 100000000000000000 outside 0..1", "f.txt line 3"),
])
def test_a_bad_operation_names_its_line(text: str, fmt: InstanceFormat, message: str, where: str) -> None:
    assert _refusal(text, fmt) == (message, where)


@pytest.mark.parametrize(("text", "fmt", "where"), [
    ("2 2\n0 3 1 2\n1 4 0 99999999999999999\n", ORLIB, "f.txt line 3"),
    ("2 2\n3 4\n99999999999999999 6\n1 2\n2 1\n", TAILLARD, "f.txt line 3"),
])
def test_a_duration_past_the_time_limit_is_an_input_error(text: str, fmt: InstanceFormat, where: str) -> None:
    # It was a pydantic ValidationError from the Instance model: a traceback and exit 1 at the CLI.
    assert _refusal(text, fmt) == (f"duration 99999999999999999 is too large (at most {MAX_TIME})", where)
    at_limit = text.replace("99999999999999999", str(MAX_TIME))
    assert MAX_TIME in {d for job in parse_instance_text(at_limit, name="x", fmt=fmt).jobs for _, d in job}


def test_zero_durations_and_the_last_machine_are_read() -> None:
    assert parse_instance_text("2 2\n0 0 1 2\n1 0 0 1\n", name="x").jobs == [[(0, 0), (1, 2)], [(1, 0), (0, 1)]]
    assert parse_instance_text("2 2\n0 3\n5 6\n1 2\n2 1\n", name="x", fmt=TAILLARD).jobs == [
        [(0, 0), (1, 3)], [(1, 5), (0, 6)]]


def test_a_zero_based_taillard_file_is_read_as_it_stands() -> None:
    text = "2 3\nTimes\n1 2 3\n4 5 6\nMachines\n0 1 2\n2 0 1\n"
    assert parse_instance_text(text, name="x").jobs == [[(0, 1), (1, 2), (2, 3)], [(2, 4), (0, 5), (1, 6)]]


def test_commas_separate_and_blank_lines_are_skipped() -> None:
    text = "2,2\n\n0,3, 1,2\n\n\n1,4,0,1\n"
    assert parse_instance_text(text, name="x").jobs == [[(0, 3), (1, 2)], [(1, 4), (0, 1)]]
    taillard = "2, 2\n\n3, 4\n5, 6\n\n1, 2\n2, 1\n"
    assert parse_instance_text(taillard, name="x").jobs == [[(0, 3), (1, 4)], [(1, 5), (0, 6)]]


def test_a_file_of_several_instances_reads_the_first() -> None:
    orlib = "2 2\n0 3 1 2\n1 4 0 1\n3 3\n0 1 1 1 2 1\n"
    assert parse_instance_text(orlib, name="x").jobs == [[(0, 3), (1, 2)], [(1, 4), (0, 1)]]
    # The next instance's numbers (a 0 among them) do not make the first one's 1-based machines 0-based.
    taillard = "2 2\n3 4\n5 6\n1 2\n2 1\n2 2 0 0 0\n"
    assert parse_instance_text(taillard, name="x").jobs == [[(0, 3), (1, 4)], [(1, 5), (0, 6)]]


def test_detection_skips_leading_blanks_and_an_explicit_format_wins() -> None:
    doc = '\n  {"name": "j", "jobs": [[[0, 2]]]}\n'
    assert parse_instance_text(doc, name="x").name == "j"
    with pytest.raises(InputError, match="expected a JSON object, found list"):
        parse_instance_text("\n [1]\n", name="x")
    # "2 2 / 3 4 / 5 6 / 1 2 / 2 1": rows of m numbers, so Taillard's; as OR-Library the rows are too short.
    square = "2 2\n3 4\n5 6\n1 2\n2 1\n"
    assert parse_instance_text(square, name="x").jobs == [[(0, 3), (1, 4)], [(1, 5), (0, 6)]]
    assert _refusal(square, ORLIB)[0].startswith("job 0: expected 2 machine/duration pairs")
    # An OR-Library file read as Taillard's: its second row (1 4 0 1) would be the machines.
    assert _refusal("2 2\n0 3 1 2\n1 4 0 1\n", TAILLARD) == ("machine 4 outside 0..1", "f.txt line 3")



def test_a_guessed_formats_refusal_says_what_was_guessed_and_why() -> None:
    # An OR-Library file whose second job wraps onto two lines: its first row is 4 numbers, so it is read as
    # Taillard's, and the bare "machine 4 outside 0..2" would send the user looking for a machine 4.
    wrapped = "2 3\n0 3 1 2\n2 4\n1 4 0 9 2 1\n"
    assert _refusal(wrapped) == (
        "machine 4 outside 0..2 (read as Taillard's format: its first job row has 4 numbers, not the 2 x 3 of an "
        "OR-Library row, one job per line of machine/duration pairs)", "f.txt line 4")
    short = "2 3\n0 3 1 2 2 4\n1 4 0 9\n"
    message, where = _refusal(short)
    assert message.endswith("found 4 numbers; jobs of other lengths need the JSON format (read as the OR-Library "
                            "format: its first job row has 6 numbers, 2 x 3 machines)")
    assert where == "f.txt line 3"
    # A format the caller names is not a guess: its refusal is the parser's own.
    assert _refusal(wrapped, TAILLARD) == ("machine 4 outside 0..2", "f.txt line 4")
    assert _refusal("", None)[0] == "no numeric data found (expected a 'jobs machines' header line)"

@pytest.mark.parametrize(("doc", "message"), [
    ([1], "expected a JSON object, found list"),
    ("ta01", "expected a JSON object, found str"),
    ({"name": "x", "jobs": [[[0, 1.5]]]}, "jobs.0.0.1: Input should be a valid integer"),
    ({"name": "x", "jobs": [[[0, 2], [1, -4]]]}, "negative duration -4 (job 0, step 1)"),
    ({"name": "x", "jobs": []}, "x: instance has no jobs"),
])
def test_json_refusals_name_the_document(doc: object, message: str) -> None:
    with pytest.raises(InputError) as info:
        parse_instance_json(doc, where="i.json")
    assert (info.value.message, info.value.where) == (message, "i.json")


def test_without_a_place_the_parsers_say_text_or_json() -> None:
    with pytest.raises(InputError) as info:
        parse_instance_text("2 2\n", name="x")
    assert info.value.where == "<text> line end"
    with pytest.raises(InputError) as info:
        parse_orlib("2 2\n0 1 1 1\n0 1 5 1\n", name="x")
    assert info.value.where == "<text> line 3"
    with pytest.raises(InputError) as info:
        parse_taillard("2 2\n1 1\n1 1\n1 2\n2 5\n", name="x")
    assert info.value.where == "<text> line 5"
    with pytest.raises(InputError) as info:
        parse_instance_json(None)
    assert (info.value.message, info.value.where) == ("expected a JSON object, found NoneType", "<json>")


def test_read_instance_file_names_the_file_it_cannot_read(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    with pytest.raises(InputError) as info:
        read_instance_file(missing)
    assert (info.value.message, info.value.where) == ("cannot read: No such file or directory", str(missing))
    with pytest.raises(InputError) as info:
        read_instance_file(tmp_path)
    assert (info.value.message, info.value.where) == ("cannot read: Is a directory", str(tmp_path))
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"# instance caf\xe9\n1 1\n0 5\n")
    with pytest.raises(InputError) as info:
        read_instance_file(latin)
    assert (info.value.message, info.value.where) == ("not a UTF-8 text file", str(latin))


def test_read_instance_file_names_the_instance_and_honours_the_format(tmp_path: Path) -> None:
    square = tmp_path / "sq.txt"
    square.write_text("2 2\n3 4\n5 6\n1 2\n2 1\n")
    assert read_instance_file(square).name == "sq"
    assert read_instance_file(square).jobs == [[(0, 3), (1, 4)], [(1, 5), (0, 6)]]
    with pytest.raises(InputError) as info:
        read_instance_file(square, ORLIB)
    assert info.value.where == f"{square} line 2"
    with pytest.raises(InputError, match="invalid JSON"):
        read_instance_file(square, JSON)


def test_taillard_rows_may_wrap_across_lines() -> None:
    wrapped = "2 3\nTimes\n1 2\n3 4\n5 6\nMachines\n1\n2 3 3 1\n2\n"
    assert parse_instance_text(wrapped, name="x").jobs == [[(0, 1), (1, 2), (2, 3)], [(2, 4), (0, 5), (1, 6)]]


@pytest.mark.parametrize(("text", "message", "where"), [
    # Taillard's files hold ten instances each: with a times number missing, the first machine became the last
    # time and the next instance's header the last machine, and a wrong instance was read without a word.
    ("2 3 1 1 10 9\nTimes\n1 2\n4 5 6\nMachines\n1 2 3\n3 1 2\n2 3 1 1 10 9\n",
     "the 2 x 3 times matrix ends inside this line: a number is missing or extra (what follows a matrix starts on "
     "a new line)", "f.txt line 6"),
    ("2 3\n1 2 3\n4 5 6\n1 2 3\n3 1 2 3\n",
     "the 2 x 3 machines matrix ends inside this line: a number is missing or extra (what follows a matrix starts "
     "on a new line)", "f.txt line 5"),
])
def test_a_taillard_matrix_ending_inside_a_line_is_refused(text: str, message: str, where: str) -> None:
    assert _refusal(text, TAILLARD) == (message, where)
