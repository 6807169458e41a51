"""The keyed seal's byte format: logs already written carry seals in it, so it must never drift.

The other log tests compute and check seals with the same function, so a change of the format (the label,
the separator, the digest, the prefix) passes them all and only breaks logs sealed before the change. Here the
seal is recomputed from its documented definition with the standard library.
"""

from __future__ import annotations

import hashlib
import hmac

import pytest

from alas_argo.log.sealing import SealKind, seal, seal_matches

KEY = b"a log key"
MESSAGE = b"sha256:" + b"ab" * 32


@pytest.mark.parametrize(("kind", "label"), [(SealKind.EVENT, b"alas-event"), (SealKind.HEAD, b"alas-head"),
                                             (SealKind.RECORD, b"alas-record")])
def test_a_seal_is_the_hmac_of_its_label_a_zero_byte_and_the_message(kind: SealKind, label: bytes) -> None:
    expected = "hmac-sha256:" + hmac.new(KEY, label + b"\0" + MESSAGE, hashlib.sha256).hexdigest()
    assert seal(KEY, kind, MESSAGE) == expected
    assert seal_matches(KEY, kind, MESSAGE, expected)


def test_a_seal_verifies_only_for_its_key_kind_and_message() -> None:
    given = seal(KEY, SealKind.EVENT, MESSAGE)
    assert not seal_matches(b"another key", SealKind.EVENT, MESSAGE, given)
    assert not seal_matches(KEY, SealKind.HEAD, MESSAGE, given)  # domain separation
    assert not seal_matches(KEY, SealKind.EVENT, MESSAGE + b"0", given)
    assert not seal_matches(KEY, SealKind.EVENT, MESSAGE, None)
    assert not seal_matches(KEY, SealKind.EVENT, MESSAGE, given.removeprefix("hmac-sha256:"))
