"""`open_store` takes the store group alone (`StoreSettings`) as well as the whole `Settings`, as its signature
says; the tests gave it whole settings only. The key to seal the log with is applied in both forms, and a store
without one has none (its records are unsealed)."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from alas_argo.log.fs_store import FsStore
from alas_argo.log.store import open_store
from alas_argo.settings import StoreKind, StoreSettings


def test_the_store_group_alone_opens_its_backend(tmp_path: Path) -> None:
    store = open_store(StoreSettings(kind=StoreKind.FS, root=tmp_path))
    assert isinstance(store, FsStore) and store.root == tmp_path and store.seal_key is None


def test_the_store_groups_seal_key_is_applied(tmp_path: Path) -> None:
    store = open_store(StoreSettings(kind=StoreKind.FS, root=tmp_path, log_key=SecretStr("s" * 16)))
    assert store.seal_key == b"s" * 16
