"""Fixtures of the log tests: a real S3 protocol server on loopback (moto, over HTTP) and a store per
backend, so that every behaviour is checked on the filesystem and on S3 alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.log.fs_store import FsStore
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import Store
from tests.s3server import LoopbackS3

__all__ = ["fs_store", "s3_store", "store"]


@pytest.fixture
def s3_store(s3_server: LoopbackS3, s3_bucket: str) -> S3Store:
    """An S3Store on a fresh bucket, with fast backoff."""
    return S3Store(**s3_server.store_kwargs(s3_bucket), backoff=0.01, max_retries=2)


@pytest.fixture
def fs_store(tmp_path: Path) -> FsStore:
    """A filesystem store in a fresh temporary directory."""
    return FsStore(tmp_path / "store")


@pytest.fixture(params=["fs", "s3"])
def store(request: pytest.FixtureRequest) -> Store:
    """Each backend in turn."""
    fixture = "fs_store" if request.param == "fs" else "s3_store"
    result: Store = request.getfixturevalue(fixture)
    return result
