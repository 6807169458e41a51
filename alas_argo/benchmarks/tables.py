"""Benchmark rows as tables: CSV text from dataclasses, Markdown from lists of cells (one writer each)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

__all__ = ["markdown_table", "rows_to_csv"]


def rows_to_csv(rows: Iterable[Any], columns: Sequence[str]) -> str:
    """Dataclass rows as CSV, header first, ``\\n`` line ends (stable across platforms for golden tests)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow(asdict(row))
    return buf.getvalue()


def markdown_table(header: Sequence[str], body: Sequence[Sequence[Any]]) -> list[str]:
    """The lines of a Markdown table: None prints as "-", booleans as yes/no."""
    def cell(v: Any) -> str:
        return "-" if v is None else ("yes" if v is True else "no" if v is False else str(v))

    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(cell(v) for v in row) + " |" for row in body)]
