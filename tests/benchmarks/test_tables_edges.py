"""`benchmarks.tables`, the one writer of every benchmark's CSV and Markdown: ``\\n`` line ends (not the csv
module's ``\\r\\n``, which would make every golden differ by platform), a row's fields outside the chosen
columns left out rather than failing the table, and a Markdown cell's None, True and False as "-", "yes", "no"."""

from __future__ import annotations

from dataclasses import dataclass

from alas_argo.benchmarks.tables import markdown_table, rows_to_csv


@dataclass
class _Row:
    instance: str
    makespan: int
    note: str  # a field no table below chooses


def test_csv_has_the_chosen_columns_in_order_and_newline_line_ends() -> None:
    text = rows_to_csv([_Row("ft06", 55, "x"), _Row("la01", 666, "y")], ["makespan", "instance"])
    assert text == "makespan,instance\n55,ft06\n666,la01\n"
    assert "\r" not in text


def test_csv_of_no_rows_is_the_header_alone() -> None:
    assert rows_to_csv([], ["instance"]) == "instance\n"


def test_markdown_prints_none_and_booleans_as_words_and_other_values_as_text() -> None:
    lines = markdown_table(["case", "valid", "gap"], [["a", True, None], ["b", False, 0], ["c", 1, 2.5]])
    assert lines == ["| case | valid | gap |", "|---|---|---|",
                     "| a | yes | - |", "| b | no | 0 |", "| c | 1 | 2.5 |"]
