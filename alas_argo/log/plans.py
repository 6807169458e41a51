"""Plan versions as stored objects: a compact, lossless encoding, its hash, and the diff of two versions.

A 50x20 schedule is 1000 operations; as pretty JSON that is ~60 kB per version, and a run keeps every
version. The stored form is therefore columnar when the operations have the plain schedule
shape (five integer columns instead of 1000 five-key objects) and gzip-compressed (mtime 0, so equal
plans give equal bytes). Any other document is stored as-is, still compressed: the encoding never loses
a field. The plan hash is taken over the canonical JSON of the decoded document, so it does not depend on
the compression.
"""

from __future__ import annotations

import gzip
import hashlib
import zlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import InputError, IntegrityError
from alas_argo.json_limits import load_json
from alas_argo.log.event import canonical_json

__all__ = ["MAX_PLAN_BYTES", "PlanDiff", "decode_plan", "diff_plans", "encode_plan", "plan_hash"]

_COLUMNS = ("job", "step", "machine", "start", "end")
#: Largest decoded plan object (a 200x50 plan is about 0.5 MB of JSON; anything this big is not a plan).
MAX_PLAN_BYTES = 16 * 1024 * 1024
_FORMAT = "alas-plan/1"


def plan_hash(doc: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a plan document."""
    return "sha256:" + hashlib.sha256(canonical_json(doc)).hexdigest()


def _columnar(ops: Any) -> dict[str, list[int]] | None:
    """Operations as five integer columns, or None when they carry anything else (kept verbatim then)."""
    if not isinstance(ops, list) or not ops:
        return None
    for op in ops:
        if not isinstance(op, dict) or tuple(sorted(op)) != tuple(sorted(_COLUMNS)) or not all(
                type(op[c]) is int for c in _COLUMNS):
            return None
    return {c: [op[c] for op in ops] for c in _COLUMNS}


def encode_plan(doc: dict[str, Any]) -> bytes:
    """The stored bytes of a plan document (lossless; see the module docstring)."""
    body = dict(doc)
    columns = _columnar(body.get("operations"))
    envelope: dict[str, Any] = {"format": _FORMAT}
    if columns is not None:
        body.pop("operations")
        envelope["columns"] = columns
    envelope["doc"] = body
    return gzip.compress(canonical_json(envelope), compresslevel=9, mtime=0)


def _gunzip(data: bytes, *, where: str) -> bytes:
    """Decompress at most :data:`MAX_PLAN_BYTES`: a small object must not inflate to gigabytes."""
    out = bytearray()
    rest = data
    while rest:  # one gzip member after another, as gzip.decompress reads them
        inflater = zlib.decompressobj(wbits=31)
        out += inflater.decompress(rest, MAX_PLAN_BYTES + 1 - len(out))
        if len(out) > MAX_PLAN_BYTES or inflater.unconsumed_tail:
            raise IntegrityError(f"plan object inflates to more than {MAX_PLAN_BYTES} bytes", where=where)
        if not inflater.eof:
            raise IntegrityError("unreadable plan object: truncated gzip stream", where=where)
        rest = inflater.unused_data
    return bytes(out)


def decode_plan(data: bytes, *, where: str) -> dict[str, Any]:
    """The plan document stored in ``data``.

    Raises:
        IntegrityError: The bytes are not a plan object, or inflate past :data:`MAX_PLAN_BYTES`, or break
            the limits of :mod:`alas_argo.json_limits` (naming ``where``).
    """
    try:
        envelope = load_json(_gunzip(data, where=where), where=where)
        if not isinstance(envelope, dict):
            raise ValueError("not an object")
        if envelope.get("format") != _FORMAT:
            raise ValueError(f"unknown format {envelope.get('format')!r}")
        doc: dict[str, Any] = dict(envelope["doc"])
        cols = envelope.get("columns")
        if cols is not None:
            doc["operations"] = [dict(zip(_COLUMNS, row, strict=True))
                                 for row in zip(*(cols[c] for c in _COLUMNS), strict=True)]
    except InputError as e:  # the JSON reader's where: the object's key with the line and column
        raise IntegrityError(f"unreadable plan object: {e.message}", where=e.where or where) from None
    except (zlib.error, OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise IntegrityError(f"unreadable plan object: {e}", where=where) from None
    return doc


class PlanDiff(BaseModel):
    """What changed between two plan versions."""

    model_config = ConfigDict(frozen=True)

    version_a: int = Field(description="The earlier (or left) version.")
    version_b: int = Field(description="The later (or right) version.")
    makespan_a: int | None = Field(description="Makespan of version A.")
    makespan_b: int | None = Field(description="Makespan of version B.")
    makespan_change: int | None = Field(description="makespan_b - makespan_a.")
    moved_operations: list[tuple[int, int, int, int]] = Field(
        description="(job, step, start_a, start_b) of every operation whose start differs.")
    machine_changes: list[tuple[int, int, int, int]] = Field(
        description="(job, step, machine_a, machine_b) of every operation that changed machine.")
    added: list[tuple[int, int]] = Field(description="(job, step) only in B.")
    removed: list[tuple[int, int]] = Field(description="(job, step) only in A.")
    total_start_shift: int = Field(description="Sum of |start_b - start_a| over moved operations.")

    def to_json(self) -> dict[str, Any]:
        """The diff as a JSON document (tuples as lists)."""
        return self.model_dump(mode="json")


def _ops(doc: dict[str, Any]) -> dict[tuple[int, int], dict[str, Any]]:
    return {(int(o["job"]), int(o["step"])): o for o in doc.get("operations") or []}


def diff_plans(a: dict[str, Any], b: dict[str, Any], *, version_a: int, version_b: int) -> PlanDiff:
    """Compare two schedule documents operation by operation."""
    ops_a, ops_b = _ops(a), _ops(b)
    common = sorted(ops_a.keys() & ops_b.keys())
    moved = [(j, s, int(ops_a[j, s]["start"]), int(ops_b[j, s]["start"])) for j, s in common
             if ops_a[j, s]["start"] != ops_b[j, s]["start"]]
    machines = [(j, s, int(ops_a[j, s]["machine"]), int(ops_b[j, s]["machine"])) for j, s in common
                if ops_a[j, s].get("machine") != ops_b[j, s].get("machine")]
    mk_a, mk_b = a.get("makespan"), b.get("makespan")
    return PlanDiff(
        version_a=version_a, version_b=version_b, makespan_a=mk_a, makespan_b=mk_b,
        makespan_change=None if mk_a is None or mk_b is None else mk_b - mk_a,
        moved_operations=moved, machine_changes=machines,
        added=sorted(ops_b.keys() - ops_a.keys()), removed=sorted(ops_a.keys() - ops_b.keys()),
        total_start_shift=sum(abs(sb - sa) for _, _, sa, sb in moved))
