"""A benchmark table written row by row as the rows finish, so a killed benchmark keeps what it measured.

The final tables are still written whole at the end (temp file + rename); this file is what is on disk
in between. Each row is flushed and fsynced before the next case starts: a 45-minute benchmark stopped at
minute 44 leaves 44 minutes of rows, with the same header and cells as the final CSV. The file is replaced
when the first row arrives, not before: a run that stops before it has measured anything (bad input found
late, Ctrl-C in the first case) leaves an earlier run's table where it was.
"""

from __future__ import annotations

import csv
import errno
import io
import os
import tempfile
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from alas_argo.errors import write_refused

__all__ = ["PartialTable"]


class PartialTable:
    """A CSV file that grows by one line per finished row.

    Args:
        path: The CSV file; replaced when the first row is added (its directory is created at once, and a
            directory that cannot take the file is refused at once, before any case runs).
        columns: Column names, in order (the dataclass fields written).
    """

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)
        self.rows = 0
        self._file: TextIO | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=path.parent).close()
            if path.is_dir():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
        except OSError as e:
            raise write_refused(e, "cannot write", str(path)) from None

    def _write(self, text: str) -> None:
        try:
            if self._file is None:
                self._file = self.path.open("w", encoding="utf-8", newline="")
                self._file.write(",".join(self.columns) + "\n")
            self._file.write(text)
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError as e:
            raise write_refused(e, "cannot write", str(self.path)) from None

    def add(self, row: Any) -> None:
        """Append one dataclass row (its fields named by ``columns``) and make it durable."""
        buf = io.StringIO()
        csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n", extrasaction="ignore").writerow(asdict(row))
        self._write(buf.getvalue())
        self.rows += 1

    def close(self) -> None:
        """Close the file (the rows stay)."""
        if self._file is not None:
            self._file.close()

    def __enter__(self) -> PartialTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
