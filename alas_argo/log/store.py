"""The store interface under the execution log, and the factory that picks a backend.

The interface itself (:class:`Store`, :class:`RecordNotFound`, :func:`check_key`) lives in
:mod:`alas_argo.log.backend` so that the backends can implement it without importing this module, which
imports them: the factory knows every backend, no backend knows the factory. It is re-exported here, the
path the rest of the code uses.
"""

from __future__ import annotations

from alas_argo.errors import InputError
from alas_argo.log.backend import RecordNotFound, Store, check_key
from alas_argo.settings import Settings, StoreKind, StoreSettings

__all__ = ["RecordNotFound", "Store", "check_key", "open_store"]


def open_store(settings: Settings | StoreSettings) -> Store:
    """Build the store the settings ask for (enum plus factory: one place knows every backend).

    The S3 backend imports boto3 lazily, so the embedded default works without the ``cluster`` extra.
    """
    store = settings.store if isinstance(settings, Settings) else settings
    backend: Store
    if store.kind is StoreKind.FS:
        from alas_argo.log.fs_store import FsStore

        backend = FsStore(store.root)
    elif store.kind is StoreKind.S3:
        from alas_argo.log.s3_store import S3Store

        backend = S3Store.from_settings(store)
    else:  # pragma: no cover
        raise InputError(f"unknown store kind {store.kind!r}", where="settings.store.kind")
    if store.log_key is not None:
        backend.seal_key = store.log_key.get_secret_value().encode()
    return backend
