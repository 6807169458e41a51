"""File names a user gives, asked about without tracebacks: ``Path.exists()`` and ``is_file()`` raise OSError
for a name the system cannot even look up (ENAMETOOLONG for one past 255 bytes a segment, ELOOP, EACCES on a
parent), which a CLI refusing bad input must turn into one line, not a traceback."""

from __future__ import annotations

from pathlib import Path

__all__ = ["found"]


def found(path: Path, *, file: bool = False, directory: bool = False) -> bool:
    """Whether ``path`` exists (``file``: is a regular file; ``directory``: is a directory); a name that cannot be
    looked up is not found."""
    try:
        return path.is_file() if file else path.is_dir() if directory else path.exists()
    except OSError:
        return False
