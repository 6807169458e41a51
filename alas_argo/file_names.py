"""File names a user gives, asked about without tracebacks: ``Path.exists()`` and ``is_file()`` raise OSError
for a name the system cannot even look up (ENAMETOOLONG for one past 255 bytes a segment, ELOOP, EACCES on a
parent), which a CLI refusing bad input must turn into one line, not a traceback. And files a user gives are read
with a bound: ``/dev/zero``, a FIFO that never ends or a runaway file given as a schedule was read whole, and the
process grew until the kernel killed it (24 GB on the machine of 2026-12-07)."""

from __future__ import annotations

import http.client
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from alas_argo.errors import InputError

__all__ = ["MAX_FILE_BYTES", "found", "read_answer", "read_at_most", "read_limited", "size_of"]

#: The largest input file read (instances, schedules, disruptions, workflow documents, tables, recordings): a
#: document at the JSON parser's :data:`~alas_argo.json_limits.MAX_NODES` is well under it.
MAX_FILE_BYTES = 128 * 2**20

#: The pieces a stream of unknown length is read in after its first: ``read(n)`` reserves n bytes before it
#: reads (CPython's buffered files do), so one read of the whole bound cost a 128-256 MiB reservation for
#: every small file (10 µs each, and a MemoryError under a small `ulimit -v`).
_PIECE = 64 * 2**10


def found(path: Path, *, file: bool = False, directory: bool = False) -> bool:
    """Whether ``path`` exists (``file``: is a regular file; ``directory``: is a directory); a name that cannot be
    looked up is not found."""
    try:
        return path.is_file() if file else path.is_dir() if directory else path.exists()
    except OSError:
        return False


def size_of(stream: BinaryIO) -> int | None:
    """The size of the regular file open as ``stream``; None for anything else (a pipe, a device, a socket)."""
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):  # no descriptor: an in-memory or network stream
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def read_at_most(stream: BinaryIO, limit: int, *, expected: int | None = None) -> bytes:
    """The bytes of ``stream`` up to its end, but never more than ``limit`` + 1 of them (one past the bound tells
    the caller it was passed, and a stream that never ends is not read on).

    ``expected`` (a regular file's size, an answer's announced length) sizes the first read; the rest, if any,
    comes in small pieces, so a small file costs a small read, not a reservation of the whole bound.
    """
    parts: list[bytes] = []
    total, want = 0, (_PIECE if expected is None else expected) + 1
    while total <= limit:
        part = stream.read(min(want, limit + 1 - total))
        if not part:
            break
        parts.append(part)
        total += len(part)
        want = _PIECE
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_answer(response: Any, limit: int) -> bytes:
    """The body of an HTTP answer (an ``http.client`` response, or urllib's ``HTTPError`` around one) as
    :func:`read_at_most` reads it, the first read sized by its Content-Length.

    Raises:
        http.client.IncompleteRead: The body ended before the length it announced (a bounded read returns what
            came before the connection closed, without http.client's own check that the body was whole).
    """
    announced = response.headers.get("Content-Length", "")
    length = int(announced) if announced.isdigit() else None
    raw = read_at_most(response, limit, expected=length)
    if length is not None and len(raw) <= limit and length > len(raw):
        raise http.client.IncompleteRead(raw, length - len(raw))
    return raw


def read_limited(path: Path, limit: int | None = None) -> bytes:
    """The bytes of ``path``, reading at most ``limit`` (default :data:`MAX_FILE_BYTES`) + 1 of them (OSError as
    from ``read_bytes``).

    Raises:
        InputError: the file holds more than ``limit`` bytes (or never ends), named.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    with path.open("rb") as f:
        data = read_at_most(f, limit, expected=size_of(f))
    if len(data) > limit:
        raise InputError(f"larger than {limit // 2**20} MiB (or never ends): not an input this reads", where=str(path))
    return data
