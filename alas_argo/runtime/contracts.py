"""Checking inputs and outputs against a node's JSON Schema contracts (validators compiled once)."""

from __future__ import annotations

import threading
from typing import Any

import jsonschema

from alas_argo.errors import ContractError
from alas_argo.ir.base import canonical_json

__all__ = ["ContractChecker"]


class ContractChecker:
    """Compiles each distinct schema once and checks documents against it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, Any] = {}

    def _validator(self, schema: dict[str, Any]) -> Any:
        key = canonical_json(schema)
        with self._lock:
            v = self._cache.get(key)
            if v is None:
                v = jsonschema.validators.validator_for(schema)(schema)
                self._cache[key] = v
            return v

    def check(self, schema: dict[str, Any] | None, doc: Any, *, node_id: str, what: str) -> None:
        """ContractError naming the node and the first violation unless ``doc`` satisfies ``schema``."""
        if schema is None:
            return
        error = jsonschema.exceptions.best_match(self._validator(schema).iter_errors(doc))
        if error is not None:
            at = "/".join(str(p) for p in error.absolute_path) or "(root)"
            raise ContractError(f"{what} breaks its contract at {at}: {error.message}",
                                where={"node": node_id})
