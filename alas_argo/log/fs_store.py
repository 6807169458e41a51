"""The filesystem backend of the store: the embedded default, a directory (``.alas/`` unless configured).

Every write goes to a private temporary file in the target directory first, is fsynced, and is then
published atomically: by ``os.link`` for create-only-if-absent (link fails with EEXIST when the name is
taken, so exactly one of several racing writers wins, across threads and processes) and by ``os.replace``
for overwrites. A reader therefore sees a whole record or none, even after a crash mid-write.

A lease (:meth:`FsStore.hold`) is an exclusive ``flock`` on ``.leases/<name>.lock`` under the root: the kernel
releases it when its holder exits, however it exits, so no lease outlives a killed ``alas run``. Listings never
show it (no key segment starts with a dot).

A writer killed between the temp file and the publish leaves the temp file behind. Temp names carry the
writer's process id, and the first write into a directory (a run opened again, say a resumed run) removes
the temp files of processes that no longer exist, and any older than :data:`STALE_SECONDS` (a live writer
holds one for milliseconds).
"""

from __future__ import annotations

import builtins
import contextlib
import os
import stat
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from alas_argo.errors import ConflictError, StoreError, write_refused
from alas_argo.file_names import size_of
from alas_argo.log.backend import RecordNotFound, Store, check_key, check_record_size, is_key, read_record

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no leases
    fcntl = None  # type: ignore[assignment]

__all__ = ["STALE_SECONDS", "FsStore"]

_TMP_MARK = ".tmp-"
_LEASES = ".leases"
#: Age after which a temp file is left over whoever wrote it.
STALE_SECONDS = 600.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _stale(entry: os.DirEntry[str]) -> bool:
    """Whether a temp file was left by a writer that is gone (``.tmp-<name>.<pid>.<hex>``)."""
    parts = entry.name.rsplit(".", 2)
    pid = int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else None
    if pid == os.getpid():
        return False  # this process's own writes in flight
    if pid is not None and not _alive(pid):
        return True
    try:
        return time.time() - entry.stat().st_mtime > STALE_SECONDS
    except OSError:
        return False


def _listing_error(e: OSError) -> None:
    """What listing makes of an OSError (os.walk's hook too, which skips what it cannot read by default, so a
    listing would leave those records out without a word): nothing to list where nothing is, or where a prefix
    runs through a record; a StoreError for a directory the store cannot read."""
    if not isinstance(e, FileNotFoundError | NotADirectoryError):
        raise StoreError(f"cannot list records: {e.strerror or e}", where=str(e.filename)) from e


class FsStore(Store):
    """A store in a local directory; keys map to relative paths.

    Args:
        root: Directory of the store; created on the first write.
    """

    kind = "fs"

    def __init__(self, root: str | os.PathLike[str] = ".alas") -> None:
        self.root = Path(root)
        self.location = f"fs:{self.root}"
        self._swept: set[Path] = set()

    def _sweep(self, directory: Path) -> None:
        """Remove the temp files killed writers left in ``directory`` (once per directory and store)."""
        if directory in self._swept:
            return
        self._swept.add(directory)
        with contextlib.suppress(OSError), os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.startswith(_TMP_MARK) and _stale(entry):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)

    def _path(self, key: str) -> Path:
        return self.root.joinpath(*check_key(key).split("/"))

    def _write_temp(self, path: Path, data: bytes) -> Path:
        """Write ``data`` to a fresh temp file next to ``path`` and fsync it; return the temp path."""
        check_record_size(len(data), str(path))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._sweep(path.parent)
            tmp = path.with_name(f"{_TMP_MARK}{path.name}.{os.getpid()}.{uuid.uuid4().hex}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            except OSError:
                # What was written goes at once: on a full disk it is the room the next try needs (the sweep
                # would only take it once this process has ended).
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            finally:
                os.close(fd)
        except OSError as e:
            raise write_refused(e, "cannot write record", str(path), store=True) from e
        return tmp

    @staticmethod
    def _sync_dir(directory: Path) -> None:
        # The new directory entry is durable only once the directory itself is synced.
        with contextlib.suppress(OSError):
            fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def put_if_absent(self, *, key: str, data: bytes) -> bool:
        """Create ``key`` unless it exists (temp + fsync + ``os.link``); False when another writer won."""
        path = self._path(key)
        tmp = self._write_temp(path, data)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
        except OSError as e:
            raise write_refused(e, "cannot publish record", str(path), store=True) from e
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self._sync_dir(path.parent)
        return True

    def put(self, *, key: str, data: bytes) -> None:
        """Write ``key`` (temp + fsync + ``os.replace``), replacing any previous version."""
        path = self._path(key)
        tmp = self._write_temp(path, data)
        try:
            os.replace(tmp, path)
        except OSError as e:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise write_refused(e, "cannot publish record", str(path), store=True) from e
        self._sync_dir(path.parent)

    def get(self, *, key: str) -> bytes:
        """The bytes of ``key``; RecordNotFound when it does not exist."""
        path = self._path(key)
        try:
            with path.open("rb") as f:
                return read_record(f, str(path), expected=size_of(f))
        except (FileNotFoundError, NotADirectoryError):
            raise RecordNotFound("no such record", where=self.where(key)) from None
        except OSError as e:
            raise StoreError(f"cannot read record: {e.strerror}", where=str(path)) from e

    def exists(self, *, key: str) -> bool:
        """Whether ``key`` exists; StoreError when the system cannot look its path up (a root past the name
        length limit, a parent without search permission): that is not an absent record."""
        path = self._path(key)
        try:
            return stat.S_ISREG(path.stat().st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as e:
            raise StoreError(f"cannot look up record: {e.strerror}", where=str(path)) from e

    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        """Keys under ``prefix`` in sorted order, skipping in-flight temp files."""
        check_key(prefix, prefix=True)
        base_dir = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        top = self.root.joinpath(*base_dir.split("/")) if base_dir else self.root
        keys: list[str] = []
        for dirpath, dirs, files in os.walk(top, onerror=_listing_error):
            # The leases, temp files and anything else not named as a key (no key segment starts with ".")
            dirs[:] = [d for d in dirs if is_key(d)]
            rel = Path(dirpath).relative_to(self.root).as_posix()
            for name in files:
                if not is_key(name):
                    continue
                key = name if rel == "." else f"{rel}/{name}"
                if key.startswith(prefix) and (start_after is None or key > start_after):
                    keys.append(key)
        return sorted(keys)

    @contextlib.contextmanager
    def hold(self, *, name: str) -> Iterator[None]:
        """Hold lease ``name`` (an exclusive ``flock``, released by the kernel when this process ends);
        ConflictError naming the holder's process when another process holds it."""
        if fcntl is None:  # pragma: no cover - not POSIX
            yield
            return
        path = self.root / _LEASES / f"{check_key(name)}.lock"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise StoreError(f"cannot open the lease: {e.strerror}", where=str(path)) from e
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
                raise ConflictError(f"lease {name} is held by process {holder}", where=str(path)) from None
            # The holder's pid, for the message a second caller gets; the file is never removed (removing a
            # lock file lets two processes lock two different files of one name).
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def children(self, *, prefix: str) -> builtins.list[str]:
        """Immediate subdirectories under ``prefix``, without walking their contents."""
        top = self.root.joinpath(*check_key(prefix, prefix=True).strip("/").split("/")) if prefix else self.root
        try:
            return sorted(e.name for e in os.scandir(top) if e.is_dir() and is_key(e.name))
        except OSError as e:
            _listing_error(e)
            return []
