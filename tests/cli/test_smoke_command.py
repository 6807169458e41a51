"""`alas smoke` as a user (or the chart's `helm test` pod) runs it: exit 0 when the installation works, 1 naming
the check that failed, 2 for bad input with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.controller import RepairService, serve
from alas_argo.log import FsStore, list_runs

TOKEN = "cli-smoke-token-0123"


@pytest.fixture
def controller(tmp_path: Path) -> Iterator[str]:
    server = serve(RepairService(FsStore(tmp_path / "store")), "127.0.0.1", 0, token=TOKEN)
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_every_check_passes_against_a_working_controller(tmp_path: Path, controller: str,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", TOKEN)
    rc = main(["smoke", "--root", str(tmp_path / "store"), "--controller", controller, "--run-id", "s1", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["ok"] and doc["run_id"] == "s1"
    assert [c["ok"] for c in doc["checks"]] == [True] * 5
    assert TOKEN not in json.dumps(doc)


def test_a_failed_check_exits_1_and_says_which(tmp_path: Path, controller: str, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", "wrong-token")
    rc = main(["smoke", "--root", str(tmp_path / "store"), "--controller", controller])
    out = capsys.readouterr().out
    assert rc == 1
    assert "FAILED  controller: a disruption is repaired and committed" in out and "answered 401" in out
    assert "skipped store: the controller's version is current" in out
    assert "1 of 5 checks failed" in out


def test_the_store_alone_and_a_generated_run_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", "--root", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "all 2 checks passed" in out and "not checked: no controller URL given" in out
    (run,) = [r.run_id for r in list_runs(FsStore(tmp_path / "s"))]
    assert run.startswith("smoke-") and run in out


@pytest.mark.parametrize(("args", "message"), [
    (["--instance", "nope"], "unknown instance 'nope'"),
    (["--controller", "localhost:8080"], "localhost:8080: not a controller address"),
    (["--controller", "http://"], "http://: not a controller address"),
    (["--controller", "http://h:99999"], "http://h:99999: not a controller address"),
])
def test_bad_input_exits_2_before_anything_is_written(args: list[str], message: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["smoke", "--root", str(tmp_path / "s"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_a_failed_check_still_fails_under_python_O(tmp_path: Path) -> None:
    """The checks' verdicts are not asserts, which `python -O` would drop and report as passed."""
    code = ("import sys; from alas_argo.cli import main; "
            f"sys.exit(main(['smoke', '--root', {str(tmp_path / 's')!r}, '--controller', 'http://127.0.0.1:9']))")
    done = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 1, done.stderr
    assert "FAILED  controller: ready" in done.stdout and "1 of 5 checks failed" in done.stdout
