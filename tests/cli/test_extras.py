"""The embedded default installs without the `cluster` extra: `alas run` works, and commands that need the
extra fail with one line naming it (exit 2), never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BLOCK = "import sys; [sys.modules.__setitem__(m, None) for m in ('hera', 'boto3', 'botocore', 'kubernetes')]; "


def _alas(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    code = BLOCK + f"from alas_argo.cli import main; sys.exit(main({argv!r}))"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=240)


@pytest.mark.timeout(60)  # 5.5 s measured in the whole suite at load 5; loaded runs go past 3x
def test_main_job_runs_without_the_cluster_extra(tmp_path: Path) -> None:
    proc = _alas(["run", "ft06", "--disrupt", "breakdown", "--time-limit", "1", "--repair-budget", "1",
                  "--root", str(tmp_path / "store"), "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert '"final_valid": true' in proc.stdout


@pytest.mark.parametrize("argv", [["engines", "matrix"], ["log", "ls", "--store", "s3"]])
def test_cluster_commands_name_the_extra(tmp_path: Path, argv: list[str]) -> None:
    proc = _alas(argv, tmp_path)
    assert proc.returncode == 2
    assert "pip install 'alas-argo[cluster]'" in proc.stderr and "Traceback" not in proc.stderr
