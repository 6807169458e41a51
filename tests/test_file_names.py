"""`file_names.found`: a name the system cannot look up is an answer (not found), not an OSError."""

from __future__ import annotations

from pathlib import Path

from alas_argo.file_names import found


def test_found_answers_for_files_directories_and_names_that_cannot_be_looked_up(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_text("{}")
    assert found(tmp_path / "f.json") and found(tmp_path / "f.json", file=True)
    assert found(tmp_path) and not found(tmp_path, file=True)  # a directory exists but is no file
    assert not found(tmp_path / "missing") and not found(tmp_path / "missing", file=True)
    long = tmp_path / ("x" * 300)  # ENAMETOOLONG: Path.exists() and is_file() raise OSError
    assert not found(long) and not found(long, file=True) and not found(long, directory=True)
    assert found(tmp_path, directory=True) and not found(tmp_path / "f.json", directory=True)
    assert not found(tmp_path / "missing", directory=True)
