"""`alas instance list|show` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main


def test_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instance", "show", "ta01", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["name"] == "ta01" and doc["lower_bound"] == 1231 and doc["upper_bound"] == 1231
    assert len(doc["jobs"]) == 15 and doc["jobs"][0][0] == [6, 94]


def test_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instance", "list", "--suite", "alas45", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 45 and rows[0]["name"] == "dmu03"


def test_show_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "mine.txt"
    f.write_text("2 2\n0 3 1 2\n1 4 0 1\n")
    assert main(["instance", "show", str(f)]) == 0
    assert "mine: 2 jobs x 2 machines" in capsys.readouterr().out


@pytest.mark.parametrize(("content", "fragment"), [("2 2\n0 3 1 2\n", "truncated"), ("2 2\n0 3 1 x\n", "line 2"),
                                                    ("[]", "expected a JSON object")])
def test_bad_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str) -> None:
    f = tmp_path / ("bad.json" if content.startswith("[") else "bad.txt")
    f.write_text(content)
    assert main(["instance", "show", str(f)]) == 2
    err = capsys.readouterr().err
    assert fragment in err and str(f) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_unknown_name_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["instance", "show", "nope99"]) == 2
    assert "unknown instance" in capsys.readouterr().err
