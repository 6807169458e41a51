"""The edges of plan objects (alas_argo.log.plans): the inflation bound to the byte, gzip members, what a
refusal says and where, the timestamp-free bytes, the hash's stored form and diffs without a makespan."""

from __future__ import annotations

import gzip
import hashlib
import tracemalloc
import zlib
from typing import Any

import pytest

from alas_argo.errors import IntegrityError
from alas_argo.log.event import canonical_json
from alas_argo.log.plans import MAX_PLAN_BYTES, decode_plan, diff_plans, encode_plan, plan_hash

WHERE = "runs/r/plans/3"
HEAD = b'{"format":"alas-plan/1","doc":{"instance":"x"'
OP = {"job": 0, "step": 0, "machine": 1, "start": 0, "end": 2}


def _member(head: bytes, spaces: int, tail: bytes = b"}}") -> bytes:
    """One gzip member of ``head``, ``spaces`` blanks and ``tail``, built without holding the blanks."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b" " * 2**20
    out = [deflate.compress(head)]
    for _ in range(spaces // len(chunk)):
        out.append(deflate.compress(chunk))
    out += [deflate.compress(b" " * (spaces % len(chunk))), deflate.compress(tail), deflate.flush()]
    return b"".join(out)


def _refusal(data: bytes) -> IntegrityError:
    with pytest.raises(IntegrityError) as caught:
        decode_plan(data, where=WHERE)
    return caught.value


def test_a_plan_object_of_exactly_the_limit_decodes_and_one_byte_more_is_refused() -> None:
    pad = MAX_PLAN_BYTES - len(HEAD) - 2
    assert decode_plan(_member(HEAD, pad), where=WHERE) == {"instance": "x"}
    error = _refusal(_member(HEAD, pad + 1))
    assert (error.message, error.where) == (f"plan object inflates to more than {MAX_PLAN_BYTES} bytes", WHERE)


def test_a_plan_object_of_several_gzip_members_decodes_as_gzip_reads_it() -> None:
    doc = {"instance": "ft06", "makespan": 7, "operations": [OP, {**OP, "job": 1, "start": 2, "end": 7}]}
    text = gzip.decompress(encode_plan(doc))
    members = b"".join(gzip.compress(text[i:i + 9], mtime=0) for i in range(0, len(text), 9))
    assert gzip.decompress(members) == text
    assert decode_plan(members, where=WHERE) == doc


def test_the_limit_counts_every_member_together() -> None:
    # Two members of 10 MiB each: each is under the limit, the object is not.
    error = _refusal(_member(HEAD, 10 * 2**20, b"") + _member(b"", 10 * 2**20))
    assert error.message == f"plan object inflates to more than {MAX_PLAN_BYTES} bytes"


@pytest.mark.parametrize("first_member", [0, 15 * 2**20], ids=["one member", "after a 15 MiB member"])
def test_a_bomb_is_refused_without_inflating_past_the_limit(first_member: int) -> None:
    # 64 MiB of blanks stored in about 64 KB: decoding stops at the limit instead of inflating all of it
    # (the output and its one copy, about twice the limit at most).
    bomb = (_member(HEAD, first_member, b"") + _member(b"", 64 * 2**20) if first_member
            else _member(HEAD, 64 * 2**20))
    tracemalloc.start()
    try:
        error = _refusal(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.message.startswith("plan object inflates to more than")
    assert peak < 3 * MAX_PLAN_BYTES, f"peak {peak / MAX_PLAN_BYTES:.1f} x the limit"


def _columns(lengths: list[int]) -> dict[str, Any]:
    return {"format": "alas-plan/1", "doc": {},
            "columns": {c: list(range(n)) for c, n in zip(("job", "step", "machine", "start", "end"), lengths,
                                                            strict=True)}}


@pytest.mark.parametrize(("data", "message"), [
    (gzip.compress(b"{}", mtime=0)[:-9], "unreadable plan object: truncated gzip stream"),
    (zlib.compress(canonical_json({"format": "alas-plan/1", "doc": {}})), "unreadable plan object: "),
    (gzip.compress(b"[1, 2]", mtime=0), "unreadable plan object: not an object"),
    (gzip.compress(b'{"format": "alas-plan/2", "doc": {}}', mtime=0),
     "unreadable plan object: unknown format 'alas-plan/2'"),
    (gzip.compress(b'{"doc": {}}', mtime=0), "unreadable plan object: unknown format None"),
    (gzip.compress(b"[" * 100 + b"]" * 100, mtime=0),
     "unreadable plan object: nested more than 64 levels deep"),
    (gzip.compress(b'{"format": "alas-plan/1"}', mtime=0), "unreadable plan object: 'doc'"),
    (gzip.compress(canonical_json(_columns([2, 2, 2, 2, 1])), mtime=0), "unreadable plan object: "),
], ids=["truncated", "zlib, not gzip", "array", "other format", "no format", "too deep", "no doc",
        "columns of unequal length"])
def test_what_is_not_a_plan_object_is_refused_naming_the_object(data: bytes, message: str) -> None:
    error = _refusal(data)
    assert error.message.startswith(message) and error.where == WHERE, (error.message, error.where)
    assert str(error).startswith(f"{WHERE}: unreadable plan object")


@pytest.mark.parametrize("operations", [
    5, "abcde", {"job": 1}, [], None, [3], [[0, 0, 1, 0, 2]], [{**OP, "note": 7}], [{**OP, "end": None}],
    [{k: v for k, v in OP.items() if k != "end"}], [{**OP, "start": True}], [OP, "late"],
], ids=["int", "str", "dict", "empty", "null", "int op", "list op", "extra int field", "null field",
        "missing field", "bool field", "one odd op"])
def test_operations_of_any_other_shape_come_back_as_they_went_in(operations: Any) -> None:
    doc = {"instance": "t", "operations": operations}
    back = decode_plan(encode_plan(doc), where=WHERE)
    assert canonical_json(back) == canonical_json(doc)  # bytes, so True does not pass for 1


def test_the_stored_bytes_carry_no_timestamp() -> None:
    # RFC 1952: bytes 4-7 of a gzip member are its MTIME; 0 means none, so equal plans give equal bytes
    # whenever they are encoded.
    data = encode_plan({"instance": "t", "operations": [OP]})
    assert data[:4] == b"\x1f\x8b\x08\x00" and data[4:8] == bytes(4)


def test_the_plan_hash_is_sha256_of_the_canonical_json_in_its_stored_form() -> None:
    doc = {"operations": [OP], "makespan": 2}
    canonical = b'{"makespan":2,"operations":[{"end":2,"job":0,"machine":1,"start":0,"step":0}]}'
    assert plan_hash(doc) == "sha256:" + hashlib.sha256(canonical).hexdigest()


@pytest.mark.parametrize(("mk_a", "mk_b"), [(5, None), (None, 5), (None, None)])
def test_a_diff_without_both_makespans_has_no_makespan_change(mk_a: int | None, mk_b: int | None) -> None:
    a = {"operations": [OP]} if mk_a is None else {"makespan": mk_a, "operations": [OP]}
    b = {"operations": [{**OP, "start": 1, "end": 3}]} if mk_b is None else {
        "makespan": mk_b, "operations": [{**OP, "start": 1, "end": 3}]}
    diff = diff_plans(a, b, version_a=1, version_b=2)
    assert (diff.makespan_a, diff.makespan_b, diff.makespan_change) == (mk_a, mk_b, None)
    assert diff.moved_operations == [(0, 0, 0, 1)] and diff.total_start_shift == 1


def test_a_plan_object_that_is_not_json_is_refused_naming_the_line_and_column() -> None:
    error = _refusal(gzip.compress(b'{"format": "alas-plan/1",\n "doc": [1,,2]}', mtime=0))
    assert error.message == "unreadable plan object: invalid JSON: Expecting value"
    assert error.where == f"{WHERE} line 2 column 12"
