"""The layering of docs/architecture.md is held by import-linter, run here so CI enforces it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports is missing: install the dev extra (pip install -e '.[dev]')")
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=None)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout


def test_domain_does_not_import_cloud_libraries() -> None:
    """A direct check too: importing the domain and the IR pulls in none of hera, boto3, kubernetes."""
    code = ("import sys, alas_argo.jssp.validate, alas_argo.jssp.cpsat, alas_argo.jssp.repair, alas_argo.ir; "
            "bad = [m for m in ('hera', 'boto3', 'botocore', 'kubernetes') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
