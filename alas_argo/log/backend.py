"""The abstract base every store backend implements (filesystem, S3), with its key rule and not-found error.

A store is a flat namespace of immutable-ish objects addressed by ``/``-separated keys. The log needs only
five operations; the one that matters is :meth:`Store.put_if_absent`, an atomic create-only-if-absent
(``O_EXCL`` + link on a filesystem, ``If-None-Match: *`` on S3), which is what lets concurrent writers
append to one run without a lock service: the loser of a race learns it lost and re-reads.
"""

from __future__ import annotations

import builtins
import contextlib
import re
from abc import ABC, abstractmethod
from typing import BinaryIO

from alas_argo.errors import InputError, StoreError
from alas_argo.file_names import read_at_most

__all__ = ["MAX_RECORD_BYTES", "RecordNotFound", "Store", "check_key", "check_record_size", "is_key", "read_record"]

# Keys are written as file names and as S3 object keys: keep them to a portable alphabet so that a key
# can never climb out of the store's root ("..") or mean different things on the two backends.
_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._=-]*$")

#: The largest record a store writes or reads back: twice the largest input file a command reads
#: (``file_names.MAX_FILE_BYTES``), so any record made from an accepted input fits, while an object that is
#: not one of the log's (a multi-gigabyte upload into the bucket, a device file under the root) is refused by
#: name instead of read into memory whole.
MAX_RECORD_BYTES = 256 * 2**20


def check_record_size(size: int, where: str, *, reading: bool = False) -> None:
    """Raise StoreError naming ``where`` when a record of ``size`` bytes is past :data:`MAX_RECORD_BYTES`.

    Writers check before anything is written, so no store holds a record it would refuse to read back.
    """
    if size > MAX_RECORD_BYTES:
        raise StoreError(f"record larger than the store's limit of {MAX_RECORD_BYTES // 2**20} MiB "
                         f"({'at least ' if reading else ''}{size} bytes): not a record of the log", where=where)


def read_record(stream: BinaryIO, where: str, *, expected: int | None = None) -> bytes:
    """The bytes of one record from ``stream``, reading at most one past :data:`MAX_RECORD_BYTES` (a record is
    never larger, and a device file never ends); StoreError naming ``where`` past the limit. ``expected`` (the
    file's size, the object's announced length) sizes the first read (``file_names.read_at_most``)."""
    data = read_at_most(stream, MAX_RECORD_BYTES, expected=expected)
    check_record_size(len(data), where, reading=True)
    return data


def is_key(key: str) -> bool:
    """Whether ``key`` is a valid store key. A listing holds only such keys: an object or file under another
    name (a dot file, a name with a space) was not written by the log, and no reader could open it."""
    return all(_SEGMENT.fullmatch(p) for p in key.split("/"))


class RecordNotFound(StoreError, KeyError):
    """The key does not exist in the store (a KeyError, so ``except KeyError`` works too)."""


def check_key(key: str, *, prefix: bool = False) -> str:
    """Return ``key`` if it is a valid store key (or key prefix), else raise InputError.

    Args:
        key: ``/``-separated segments of ``[A-Za-z0-9._=-]``, no empty or dot-leading segment.
        prefix: Accept an empty string and a trailing ``/`` (a prefix for :meth:`Store.list`; ``/`` alone is not one).
    """
    if prefix and key == "":
        return key
    body = key[:-1] if prefix and key.endswith("/") else key
    parts = body.split("/")
    # fullmatch: a "$" alone also matches before a final newline, which would let "r1\n" through.
    if not all(_SEGMENT.fullmatch(p) for p in parts):
        raise InputError(f"invalid store key {key!r}", where="store")
    return key


class Store(ABC):
    """Abstract base of the log's backends. Every method is keyword-only so call sites read clearly."""

    #: Human-readable location, used in error messages ("fs:.alas", "s3://bucket/prefix").
    location: str = "store"
    #: The backend's name (``fs``, ``s3``): a metric label.
    kind: str = "store"
    #: Key of the log's keyed seals (``store.log_key`` in the settings); None seals nothing. It travels with
    #: the store because every log opened on the store must seal and check under the same key.
    seal_key: bytes | None = None

    def where(self, key: str) -> str:
        """Where ``key`` is, for an error message: ``<location>/<key>``."""
        return f"{self.location}/{key}"

    @abstractmethod
    def put_if_absent(self, *, key: str, data: bytes) -> bool:
        """Create ``key`` with ``data`` atomically unless it exists.

        Returns:
            True when this call created the object, False when the key already existed (a lost race).
        """

    @abstractmethod
    def put(self, *, key: str, data: bytes) -> None:
        """Write ``key`` atomically, replacing any previous object (readers see old or new, never half)."""

    @abstractmethod
    def get(self, *, key: str) -> bytes:
        """The object's bytes.

        Raises:
            RecordNotFound: The key does not exist.
        """

    @abstractmethod
    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        """All keys starting with ``prefix`` (and sorting after ``start_after``), in sorted order."""

    @abstractmethod
    def exists(self, *, key: str) -> bool:
        """Whether ``key`` exists."""

    def hold(self, *, name: str) -> contextlib.AbstractContextManager[None]:
        """Hold the store's lease ``name`` while the context runs, or raise ConflictError at once when another
        process holds it.

        A whole ``alas run`` holds its run's lease, so a second one with the same id waits for nothing and
        does not run the pipeline a second time into the same log (the log itself takes concurrent writers;
        two runs of one pipeline in it would be a confusing record, not a lost one). The default holds
        nothing: a backend without a cheap, crash-released lock (S3) leaves runs to their callers."""
        return contextlib.nullcontext()

    def children(self, *, prefix: str) -> builtins.list[str]:
        """Names of the immediate "directories" under ``prefix`` (which must end with ``/``), sorted.

        The default walks :meth:`list`; backends override it when they can answer without a full walk.
        """
        names = {k[len(prefix):].split("/", 1)[0] for k in self.list(prefix=prefix) if "/" in k[len(prefix):]}
        return sorted(names)
