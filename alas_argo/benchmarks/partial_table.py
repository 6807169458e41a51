"""A benchmark table written row by row as the rows finish, so a killed benchmark keeps what it measured.

The final tables are still written whole at the end (temp file + rename); this file is what is on disk
in between. Each row is flushed and fsynced before the next case starts: a 45-minute benchmark stopped at
minute 44 leaves 44 minutes of rows, with the same header and cells as the final CSV.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from alas_argo.errors import InputError

__all__ = ["PartialTable"]


class PartialTable:
    """A CSV file that grows by one line per finished row.

    Args:
        path: The CSV file; replaced by a header-only table when opened (its directory is created).
        columns: Column names, in order (the dataclass fields written).
    """

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)
        self.rows = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("w", encoding="utf-8", newline="")
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror or e}", where=str(path)) from None
        self._write(",".join(self.columns) + "\n")

    def _write(self, text: str) -> None:
        try:
            self._file.write(text)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            raise InputError(f"cannot write: {e.strerror or e}", where=str(self.path)) from None

    def add(self, row: Any) -> None:
        """Append one dataclass row (its fields named by ``columns``) and make it durable."""
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n", extrasaction="ignore").writerow(asdict(row))
        self._write(buf.getvalue())
        self.rows += 1

    def close(self) -> None:
        """Close the file (the rows stay)."""
        self._file.close()

    def __enter__(self) -> PartialTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
