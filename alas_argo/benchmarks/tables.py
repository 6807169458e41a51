"""Benchmark rows (dataclasses) as CSV text: one writer for every benchmark's table."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from typing import Any

__all__ = ["rows_to_csv"]


def rows_to_csv(rows: Iterable[Any], columns: Sequence[str]) -> str:
    """Dataclass rows as CSV, header first, ``\\n`` line ends (stable across platforms for golden tests)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow(asdict(row))
    return buf.getvalue()
