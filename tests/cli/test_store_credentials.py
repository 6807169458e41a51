"""`--store s3` without credentials: one line naming what to set, exit 2 (botocore's error wrapped at the store)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ALAS_"))}
    env.update(HOME=str(tmp_path), AWS_EC2_METADATA_DISABLED="true",  # no credential source anywhere
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"), AWS_CONFIG_FILE=str(tmp_path / "none"),
               ALAS_STORE__S3_ENDPOINT="http://127.0.0.1:9", PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return env


@pytest.mark.timeout(60)  # 5.1 s measured in the whole suite at load 5; loaded runs go past 3x
@pytest.mark.parametrize("argv", [["log", "ls"], ["run", "ft06", "--planner", "heuristic"], ["log", "verify", "r1"]])
def test_no_s3_credentials_is_one_line_and_exit_2(tmp_path: Path, argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-c", "from alas_argo.cli import main; raise SystemExit(main())",
                           *argv, "--store", "s3"], env=_clean_env(tmp_path), cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "no S3 credentials" in done.stderr and "AWS_ACCESS_KEY_ID" in done.stderr
