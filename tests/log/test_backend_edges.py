"""The store interface's own code (alas_argo/log/backend.py): the key rule both backends apply, the error that
names a refused key, and the default ``children`` a backend inherits when it does not answer from a delimiter
listing (both shipped backends override it, so only a test calling the default reaches it)."""

from __future__ import annotations

import builtins
import contextlib

import pytest

from alas_argo.errors import InputError, StoreError
from alas_argo.log import backend
from alas_argo.log.backend import RecordNotFound, Store, check_key, check_record_size


class _Memory(Store):
    """The least a backend must write: the five abstract operations over a dict, nothing overridden."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}

    def put_if_absent(self, *, key: str, data: bytes) -> bool:
        if check_key(key) in self.objects:
            return False
        self.objects[key] = data
        return True

    def put(self, *, key: str, data: bytes) -> None:
        self.objects[check_key(key)] = data

    def get(self, *, key: str) -> bytes:
        try:
            return self.objects[check_key(key)]
        except KeyError:
            raise RecordNotFound("no such record", where=f"memory/{key}") from None

    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        check_key(prefix, prefix=True)
        return sorted(k for k in self.objects if k.startswith(prefix) and (start_after is None or k > start_after))

    def exists(self, *, key: str) -> bool:
        return check_key(key) in self.objects


@pytest.mark.parametrize("bad", ["a b", "runs/../x", "-lead"])
def test_a_refused_key_is_named_whole_and_the_error_is_about_the_store(bad: str) -> None:
    # The caller's message is all that tells which of its keys was wrong: the whole key, quoted, under "store".
    with pytest.raises(InputError) as info:
        check_key(bad)
    assert info.value.where == "store"
    assert info.value.message == f"invalid store key {bad!r}"
    assert str(info.value) == f"store: invalid store key {bad!r}"


@pytest.mark.parametrize("good", ["a", "runs/RUN-1/events/00000000.json", "x_/a.b", "_lead", "k=v", "0/9-.="])
def test_legal_keys_come_back_unchanged(good: str) -> None:
    # The alphabet is [A-Za-z0-9._=-], a segment may start with a letter, a digit or "_".
    assert check_key(good) == good
    assert check_key(good, prefix=True) == good


@pytest.mark.parametrize("bad", ["a/", "runs/", ".hidden", "a/.b", "-x", "a/-x", "a\\b", "a:b", "é", "a/b c"])
def test_a_key_is_refused_for_any_segment_outside_the_rule(bad: str) -> None:
    # "a/" is a prefix, not a key: only a listing may end in "/".
    with pytest.raises(InputError):
        check_key(bad)


@pytest.mark.parametrize("prefix", ["", "runs/", "runs/a", "runs/a/events/", "runs/a/events/0000"])
def test_a_prefix_may_be_empty_stop_inside_a_segment_or_end_in_a_slash(prefix: str) -> None:
    assert check_key(prefix, prefix=True) == prefix


@pytest.mark.parametrize("bad", ["runs/../", "a b/", "../", "runs//", "runs/.x/"])
def test_a_prefix_ending_in_a_slash_is_checked_whole(bad: str) -> None:
    # Only the one trailing "/" is let off: everything before it must be a key, or a listing could climb out of
    # the store's root ("../") or walk a hidden directory.
    with pytest.raises(InputError) as info:
        check_key(bad, prefix=True)
    assert info.value.message == f"invalid store key {bad!r}"


@pytest.mark.parametrize("bad", ["runs/../", "../"])
def test_both_backends_refuse_a_listing_that_climbs_out(store: Store, bad: str) -> None:
    store.put(key="runs/a/head.json", data=b"{}")
    with pytest.raises(InputError):
        store.list(prefix=bad)
    with pytest.raises(InputError):
        store.children(prefix=bad)


KEYS = ["runs/B/head.json", "runs/a/events/00000000.json", "runs/a/events/00000001.json", "runs/a/head.json",
        "runs/c.d/plans/deep/v0001.json", "runs/top.json", "other/z.json", "top.json"]


def test_the_default_children_are_the_sorted_names_one_level_down() -> None:
    # A key directly under the prefix is a record, not a child; a name is cut at its first "/" only, whatever
    # its depth below, and comes once however many keys it holds; the order is byte order ("B" < "a").
    memory = _Memory()
    for key in KEYS:
        assert memory.put_if_absent(key=key, data=b"x")
    assert memory.children(prefix="runs/") == ["B", "a", "c.d"]
    assert memory.children(prefix="runs/a/") == ["events"]
    assert memory.children(prefix="runs/c.d/") == ["plans"]
    assert memory.children(prefix="runs/c.d/plans/") == ["deep"]
    assert memory.children(prefix="") == ["other", "runs"]
    assert memory.children(prefix="runs/a/events/") == []
    assert memory.children(prefix="nothing/") == []


def test_the_default_children_agree_with_each_backends_own(store: Store) -> None:
    # Both backends answer without a full walk; the default, run on the same keys through their own list(),
    # must give the same names (the default is what a third backend inherits).
    for key in KEYS:
        store.put(key=key, data=b"x")
    for prefix in ["runs/", "runs/a/", "runs/c.d/plans/", "", "runs/a/events/", "nothing/"]:
        assert Store.children(store, prefix=prefix) == store.children(prefix=prefix), prefix


def test_the_default_lease_holds_nothing_and_never_refuses() -> None:
    # A backend without a crash-released lock leaves runs to their callers: the same lease twice is no conflict.
    memory = _Memory()
    with memory.hold(name="run-1"), memory.hold(name="run-1"):
        assert memory.put_if_absent(key="runs/run-1/head.json", data=b"{}")
    assert isinstance(memory.hold(name="run-1"), contextlib.AbstractContextManager)
    assert memory.kind == "store" and memory.location == "store" and memory.seal_key is None


@pytest.mark.parametrize("bad", ["a\n", "runs/r1\n/head.json", "runs/r1/head.json\n"])
def test_a_trailing_newline_is_outside_the_alphabet(store: Store, bad: str) -> None:
    # A regex "$" also matches before a final newline: "r1\n" passed the rule and became a directory of that
    # name on the filesystem (a run id with a newline reaches the store as a key segment).
    with pytest.raises(InputError) as info:
        check_key(bad)
    assert info.value.message == f"invalid store key {bad!r}"
    with pytest.raises(InputError):
        store.put(key=bad, data=b"x")
    assert store.list(prefix="") == []
    with pytest.raises(InputError):
        store.list(prefix="runs/r1\n/")


def test_a_lone_slash_is_no_prefix_on_either_backend(store: Store) -> None:
    # "/" is an empty segment before the slash, like "runs//": refused, not read as "" (the filesystem listed
    # the store's top names under it, S3 none, so one prefix meant different things on the two backends).
    store.put(key="runs/a/head.json", data=b"{}")
    with pytest.raises(InputError) as info:
        check_key("/", prefix=True)
    assert info.value.message == "invalid store key '/'"
    with pytest.raises(InputError):
        store.children(prefix="/")
    with pytest.raises(InputError):
        store.list(prefix="/")


def test_a_record_past_the_limit_is_refused_naming_the_limit_in_mib(monkeypatch: pytest.MonkeyPatch) -> None:
    # The message states the limit an operator must stay under: whole MiB of the configured bound (3 MiB here,
    # so the divisor shows; the default's 256 MiB would need a 256 MiB record to reach the message).
    monkeypatch.setattr(backend, "MAX_RECORD_BYTES", 3 * 2**20)
    check_record_size(3 * 2**20, "here")  # at the limit: a record
    with pytest.raises(StoreError) as info:
        check_record_size(3 * 2**20 + 1, "runs/r/plans/big.json")
    assert info.value.message == ("record larger than the store's limit of 3 MiB (3145729 bytes): not a record of "
                                  "the log")
    assert info.value.where == "runs/r/plans/big.json"
