"""The output checks (alas_argo.cli.outputs) at the edges mutation testing found unpinned: each refusal's exact
message and ``where`` (the CLI prints ``where: message`` as its one line, so both are what the user reads), the
empty path and the names that are no file, an existing file replaced (accepted) or not writable (refused), a
place that refuses new files named with the system's reason, and a probe that cannot be removed again."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import outputs
from alas_argo.cli.outputs import check_output_dir, check_output_file
from alas_argo.errors import InputError


def refused(check: Callable[[], Path]) -> InputError:
    with pytest.raises(InputError) as caught:
        check()
    return caught.value


@pytest.fixture
def locked(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path, OSError], None]:
    """Make one directory refuse new files with a given error, as a read-only mount or a directory without
    write permission does for an ordinary user (tests may run as root, which such a directory would not stop)."""

    def lock(directory: Path, error: OSError) -> None:
        real = tempfile.mkstemp

        def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
            if Path(kwargs.get("dir") or "") == directory:
                raise error
            return real(*args, **kwargs)

        monkeypatch.setattr(outputs.tempfile, "mkstemp", mkstemp)

    return lock


# --- check_output_file -------------------------------------------------------------------------------------------


def test_an_empty_file_name_is_refused_naming_what_was_given() -> None:
    e = refused(lambda: check_output_file("", "--plan-out"))
    assert (e.message, e.where) == ("--plan-out: expected a file name, got ''", "")


@pytest.mark.parametrize("name", ["/", "new/.."])
def test_a_path_whose_last_part_is_no_file_name_is_refused(tmp_path: Path, name: str) -> None:
    # "/" has the empty name; "new/.." (under a directory that does not exist yet) names a directory, and
    # would otherwise pass every later check.
    path = name if name == "/" else str(tmp_path / name)
    e = refused(lambda: check_output_file(path))
    assert (e.message, e.where) == (f"--out: expected a file name, got {path!r}", path)


def test_a_wrong_suffix_is_refused_with_the_accepted_ones_and_the_path(tmp_path: Path) -> None:
    target = tmp_path / "chart.jpg"
    e = refused(lambda: check_output_file(target, "--gantt", suffixes=(".svg", ".png")))
    assert (e.message, e.where) == ("--gantt: the file name must end in .png, .svg", str(target))
    assert check_output_file(tmp_path / "chart.PNG", suffixes=(".png",)) == tmp_path / "chart.PNG"


def test_a_directory_is_refused_where_a_file_goes(tmp_path: Path) -> None:
    e = refused(lambda: check_output_file(tmp_path, "-o"))
    assert (e.message, e.where) == ("-o: is a directory, expected a file name", str(tmp_path))


def test_an_existing_file_is_accepted_and_left_as_it_was(tmp_path: Path) -> None:
    # A second `alas solve --out s.json` replaces the first one's file: the check must not refuse it.
    target = tmp_path / "s.json"
    target.write_text("earlier\n")
    assert check_output_file(target) == target
    assert target.read_text() == "earlier\n" and sorted(tmp_path.iterdir()) == [target]


def test_an_existing_file_that_is_not_writable_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "s.json"
    target.write_text("earlier\n")
    real = os.access
    asked: list[tuple[object, int]] = []

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        asked.append((path, mode))
        return False if Path(path) == target else real(path, mode, **kwargs)

    monkeypatch.setattr(outputs.os, "access", access)  # a read-only file of another user, for root too
    e = refused(lambda: check_output_file(target, "--report"))
    assert (e.message, e.where) == ("--report: file is not writable", str(target))
    assert asked == [(target, os.W_OK)]


def test_an_existing_file_in_a_directory_that_refuses_new_files_is_refused(
        tmp_path: Path, locked: Callable[[Path, OSError], None]) -> None:
    # Replacing goes through a temp file beside the target, so a writable file in a locked directory is no
    # place for output either.
    target = tmp_path / "s.json"
    target.write_text("earlier\n")
    locked(tmp_path, PermissionError(errno.EACCES, "Permission denied"))
    e = refused(lambda: check_output_file(target, "--schedule-out"))
    assert (e.message, e.where) == (f"--schedule-out: cannot write under {tmp_path}: Permission denied", str(target))


def test_a_new_file_under_a_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n")
    target = blocker / "deeper" / "s.json"
    e = refused(lambda: check_output_file(target, "--plan"))
    assert (e.message, e.where) == (f"--plan: {blocker} is not a directory", str(target.parent))


def test_a_new_file_in_a_directory_that_refuses_new_files_is_refused(
        tmp_path: Path, locked: Callable[[Path, OSError], None]) -> None:
    target = tmp_path / "new" / "s.json"
    locked(tmp_path, OSError(errno.EROFS, "Read-only file system"))
    e = refused(lambda: check_output_file(target, "--plan"))
    assert (e.message, e.where) == (f"--plan: cannot write under {tmp_path}: Read-only file system",
                                    str(target.parent))


def test_an_error_without_a_reason_is_named_by_itself(tmp_path: Path,
                                                      locked: Callable[[Path, OSError], None]) -> None:
    locked(tmp_path, OSError("quota exceeded"))  # no errno, no strerror: the error's own text is the reason
    e = refused(lambda: check_output_dir(tmp_path / "out"))
    assert e.message == f"--out: cannot write under {tmp_path}: quota exceeded"


# --- check_output_dir --------------------------------------------------------------------------------------------


def test_an_empty_directory_name_is_refused() -> None:
    # Path("") is ".", so without this check an empty --out would write into the working directory.
    e = refused(lambda: check_output_dir("", "--chart-dir"))
    assert (e.message, e.where) == ("--chart-dir: expected a directory, got ''", "''")


def test_a_directory_under_a_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n")
    e = refused(lambda: check_output_dir(blocker / "run", "--chart-dir"))
    assert (e.message, e.where) == (f"--chart-dir: {blocker} is not a directory", str(blocker / "run"))


def test_a_directory_in_a_place_that_refuses_new_files_is_refused(
        tmp_path: Path, locked: Callable[[Path, OSError], None]) -> None:
    locked(tmp_path, PermissionError(errno.EACCES, "Permission denied"))
    e = refused(lambda: check_output_dir(tmp_path / "run", "--chart-dir"))
    assert (e.message, e.where) == (f"--chart-dir: cannot write under {tmp_path}: Permission denied",
                                    str(tmp_path / "run"))


def test_a_probe_that_cannot_be_removed_does_not_fail_the_check(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The place took a new file, which is all the check asks; a probe left behind is untidy, not an error.
    def unlink(path: Any, **kwargs: Any) -> None:
        raise PermissionError(errno.EPERM, "Operation not permitted", str(path))

    monkeypatch.setattr(outputs.os, "unlink", unlink)
    assert check_output_dir(tmp_path / "run") == tmp_path / "run"
    assert check_output_file(tmp_path / "s.json") == tmp_path / "s.json"


def test_a_name_the_system_cannot_look_up_is_refused_with_its_reason(tmp_path: Path) -> None:
    # os.path.lexists reads a name past the length limit as absent, and the nearest existing ancestor takes new
    # files: both checks passed, and the command failed with an OSError when it wrote, after the work.
    long = tmp_path / ("x" * 300)
    for check in (lambda: check_output_dir(long), lambda: check_output_file(long / "f.csv"),
                  lambda: check_output_file(long)):
        error = refused(check)
        assert error.message == "--out: File name too long"
    assert refused(lambda: check_output_dir(long)).where == str(long)
    assert refused(lambda: check_output_file(long / "f.csv")).where == str(long / "f.csv")
    assert list(tmp_path.iterdir()) == []
