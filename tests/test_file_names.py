"""`file_names.found`: a name the system cannot look up is an answer (not found), not an OSError."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.file_names import found, read_limited


def test_found_answers_for_files_directories_and_names_that_cannot_be_looked_up(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_text("{}")
    assert found(tmp_path / "f.json") and found(tmp_path / "f.json", file=True)
    assert found(tmp_path) and not found(tmp_path, file=True)  # a directory exists but is no file
    assert not found(tmp_path / "missing") and not found(tmp_path / "missing", file=True)
    long = tmp_path / ("x" * 300)  # ENAMETOOLONG: Path.exists() and is_file() raise OSError
    assert not found(long) and not found(long, file=True) and not found(long, directory=True)
    assert found(tmp_path, directory=True) and not found(tmp_path / "f.json", directory=True)
    assert not found(tmp_path / "missing", directory=True)


def test_read_limited_reads_up_to_the_limit_and_refuses_past_it(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"x" * 10)
    assert read_limited(f, 10) == b"x" * 10
    with pytest.raises(InputError) as raised:
        read_limited(f, 9)
    assert raised.value.where == str(f)
    assert raised.value.message == "larger than 0 MiB (or never ends): not an input this reads"
    with pytest.raises(FileNotFoundError):
        read_limited(tmp_path / "missing")


def test_an_input_that_never_ends_is_refused_after_the_limit() -> None:
    # /dev/zero given as a schedule was read whole: the process grew to 24 GB and the kernel killed it.
    with pytest.raises(InputError) as raised:
        read_limited(Path("/dev/zero"))
    assert raised.value.message == "larger than 128 MiB (or never ends): not an input this reads"
