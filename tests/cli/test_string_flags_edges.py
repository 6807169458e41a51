"""Text flags a sweep of every command's options found unguarded (empty, only commas, 5000 characters, a path
where a host goes): each was an exit 1 with no word of why, or a traceback; each is now a one-line refusal,
exit 2, naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.cli import main

LONG = "x" * 5000


@pytest.mark.parametrize(("argv", "message"), [
    (["--scenarios", ""], "no scenario given"),
    (["--scenarios", ","], "no scenario given"),
    (["--methods", ""], "no repair method given"),
    (["--methods", " , "], "no repair method given"),
    (["--from-csv", ","], "--from-csv: no file given"),
    (["--from-csv", LONG + ".csv"], f"--from-csv: no file {LONG[:200]}\n"),
])
def test_bench_repair_refuses_an_empty_list_or_an_unreadable_name(argv: list[str], message: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """They ran nothing ("finished after 0/0 items") and exited 1, or tracebacked on the name."""
    assert main(["bench", "repair", "--suite", "ft06", "--out", str(tmp_path / "o"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()  # refused before the output directory is made


def test_run_refuses_a_disrupt_name_too_long_to_be_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`Path.exists()` raised OSError (ENAMETOOLONG) out of `alas run`."""
    assert main(["run", "ft06", "--disrupt", LONG, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--disrupt must be one of breakdown, shock, mixed or a disruption JSON file" in err
    assert err.count("\n") == 1


def test_metrics_serve_refuses_a_host_the_resolver_cannot_encode(capsys: pytest.CaptureFixture[str]) -> None:
    """The resolver's IDNA encoding raised UnicodeError (an empty label) out of `alas metrics serve`."""
    assert main(["metrics", "serve", "--host", "../../etc/passwd", "--port", "0"]) == 2
    assert capsys.readouterr().err == "alas: error: --host ../../etc/passwd: not a host name or address\n"
