"""The one pydantic base model every IR type derives from.

Fields are snake_case in Python and camelCase on the wire (the spelling Argo and most JSON tooling expect),
both spellings are accepted when parsing, unknown fields are rejected (a typo in a policy must not be
silently ignored), and documents are dumped with ``by_alias=True, exclude_none=True``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["FrozenIRModel", "IRModel", "canonical_json", "content_hash"]


class IRModel(BaseModel):
    """Base of the IR models: camelCase aliases, strict field names, JSON dumps by alias."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_assignment=True,
    )

    def to_json(self) -> dict[str, Any]:
        """The wire form: camelCase keys, ``None`` fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class FrozenIRModel(IRModel):
    """An IR model that cannot change once built (plan versions)."""

    model_config = ConfigDict(frozen=True, validate_assignment=False)


def canonical_json(doc: Any) -> str:
    """A byte-stable JSON text (sorted keys, no whitespace) so equal documents hash equally."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(doc: Any) -> str:
    """The SHA-256 of :func:`canonical_json` of ``doc``, as 64 hex digits."""
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()
