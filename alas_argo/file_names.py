"""File names a user gives, asked about without tracebacks: ``Path.exists()`` and ``is_file()`` raise OSError
for a name the system cannot even look up (ENAMETOOLONG for one past 255 bytes a segment, ELOOP, EACCES on a
parent), which a CLI refusing bad input must turn into one line, not a traceback. And files a user gives are read
with a bound: ``/dev/zero``, a FIFO that never ends or a runaway file given as a schedule was read whole, and the
process grew until the kernel killed it (24 GB on the machine of 2026-12-07)."""

from __future__ import annotations

from pathlib import Path

from alas_argo.errors import InputError

__all__ = ["MAX_FILE_BYTES", "found", "read_limited"]

#: The largest input file read (instances, schedules, disruptions, workflow documents, tables, recordings): a
#: document at the JSON parser's :data:`~alas_argo.json_limits.MAX_NODES` is well under it.
MAX_FILE_BYTES = 128 * 2**20


def found(path: Path, *, file: bool = False, directory: bool = False) -> bool:
    """Whether ``path`` exists (``file``: is a regular file; ``directory``: is a directory); a name that cannot be
    looked up is not found."""
    try:
        return path.is_file() if file else path.is_dir() if directory else path.exists()
    except OSError:
        return False


def read_limited(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path``, reading at most ``limit`` (default :data:`MAX_FILE_BYTES`) + 1 of them (OSError as
    from ``read_bytes``).

    Raises:
        InputError: the file holds more than ``limit`` bytes (or never ends), named.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"larger than {limit // 2**20} MiB (or never ends): not an input this reads", where=str(path))
    return data
