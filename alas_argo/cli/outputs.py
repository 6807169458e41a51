"""Output locations checked before the work starts: a bad ``--out`` costs one line, not a finished run.

A command that plans for minutes and then finds its output directory is a file (or on a read-only
filesystem, or under ``/proc``) loses the work. Every command with an ``--out`` calls one of the two
checks below first; each raises an :class:`~alas_argo.errors.InputError` naming the flag and the path
(exit 2), and leaves nothing behind: the probe that proves the place writable is removed again, and no
directory is created until the command writes for real.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from alas_argo.errors import InputError

__all__ = ["check_output_dir", "check_output_file"]


def _nearest_existing(path: Path) -> Path:
    """``path`` itself or the closest ancestor that exists (``.`` for a relative path with none)."""
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def _probe(directory: Path, flag: str, target: Path) -> None:
    """Create and remove a file in ``directory``: the only reliable test that it takes new files (a root
    user passes ``os.access`` on a read-only mount, and pseudo-filesystems refuse creation)."""
    try:
        fd, name = tempfile.mkstemp(prefix=".alas-probe-", dir=directory)
    except OSError as e:
        raise InputError(f"{flag}: cannot write under {directory}: {e.strerror or e}", where=str(target)) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)


def _look_up(path: Path, flag: str) -> None:
    """The system must be able to look ``path`` up: ``os.path.lexists`` reads a name past the length limit (or
    under a parent it may not search) as absent, and the write after the work would then fail."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:
        raise InputError(f"{flag}: {e.strerror or e}", where=str(path)) from None


def _check_parent_chain(path: Path, flag: str) -> None:
    """The nearest existing ancestor must be a directory that takes new files."""
    anchor = _nearest_existing(path)
    if not anchor.is_dir():
        raise InputError(f"{flag}: {anchor} is not a directory", where=str(path))
    _probe(anchor, flag, path)


def check_output_file(path: str | os.PathLike[str], flag: str = "--out", *,
                      suffixes: Iterable[str] | None = None) -> Path:
    """Check that a file can be written at ``path``; return it as a Path.

    Args:
        path: Where the command will write one file (its parent directories may not exist yet).
        flag: The option that named it, for the message.
        suffixes: Accepted file suffixes (lower case, with the dot); None accepts any.

    Raises:
        InputError: ``path`` is a directory, an ancestor is a file, the place refuses new files, or the
            suffix is not one of ``suffixes``.
    """
    p = Path(path)
    if str(path) == "" or p.name in ("", ".", ".."):
        raise InputError(f"{flag}: expected a file name, got {str(path)!r}", where=str(path))
    if suffixes is not None:
        allowed = sorted(suffixes)
        if p.suffix.lower() not in allowed:
            raise InputError(f"{flag}: the file name must end in {', '.join(allowed)}", where=str(p))
    _look_up(p, flag)
    if p.is_dir():
        raise InputError(f"{flag}: is a directory, expected a file name", where=str(p))
    if os.path.lexists(p):
        if not os.access(p, os.W_OK):
            raise InputError(f"{flag}: file is not writable", where=str(p))
        _probe(p.parent, flag, p)  # replacing goes through a temp file next to it
        return p
    _check_parent_chain(p.parent, flag)
    return p


def check_output_dir(path: str | os.PathLike[str], flag: str = "--out") -> Path:
    """Check that ``path`` is (or can become) a directory that takes new files; return it as a Path.

    Raises:
        InputError: ``path`` or an ancestor exists and is not a directory, or the place refuses new files.
    """
    p = Path(path)
    if str(path) == "":
        raise InputError(f"{flag}: expected a directory, got ''", where="''")
    _look_up(p, flag)
    if os.path.lexists(p) and not p.is_dir():
        raise InputError(f"{flag}: exists and is not a directory", where=str(p))
    _check_parent_chain(p, flag)
    return p
