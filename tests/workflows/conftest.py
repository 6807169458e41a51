"""The loopback S3 server (moto, server mode) standing in for MinIO, and the project installed from its wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from alas_argo.engines.rendering import repo_root
from tests.s3server import s3_bucket, s3_server

__all__ = ["installed", "s3_bucket", "s3_server"]


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a venv holding the project's wheel (dependencies from the running interpreter's site-packages)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"  # a copy, so the build leaves nothing (build/, *.egg-info) in the checkout
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "NOTICE"):
        shutil.copy(repo_root() / name, src / name)
    shutil.copytree(repo_root() / "alas_argo", src / "alas_argo", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp / "dist"), str(src)], check=True, env=env, cwd=tmp)
    wheel = next((tmp / "dist").glob("alas_argo-*.whl"))
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(tmp / "venv")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(tmp / "venv/bin/python"), "install", "--no-deps",
                    "--no-index", "-q", str(wheel)], check=True, env=env, cwd=tmp)
    return tmp / "venv" / "bin"
