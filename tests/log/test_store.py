"""The store contract, checked on both backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.errors import InputError, StoreError
from alas_argo.log.fs_store import FsStore
from alas_argo.log.s3_store import S3Store
from alas_argo.log.store import RecordNotFound, Store, check_key, open_store
from alas_argo.settings import load_settings
from tests.s3server import LoopbackS3


def test_put_if_absent_creates_once(store: Store) -> None:
    assert store.put_if_absent(key="runs/a/events/00000000.json", data=b"first")
    assert not store.put_if_absent(key="runs/a/events/00000000.json", data=b"second")
    assert store.get(key="runs/a/events/00000000.json") == b"first"
    assert store.exists(key="runs/a/events/00000000.json")
    assert not store.exists(key="runs/a/events/00000001.json")


def test_put_overwrites(store: Store) -> None:
    store.put(key="x/y.json", data=b"1")
    store.put(key="x/y.json", data=b"2")
    assert store.get(key="x/y.json") == b"2"


def test_missing_key_is_a_keyerror_and_a_store_error(store: Store) -> None:
    with pytest.raises(RecordNotFound) as info:
        store.get(key="runs/none/events/00000000.json")
    assert isinstance(info.value, KeyError) and isinstance(info.value, StoreError)
    assert "runs/none/events/00000000.json" in str(info.value)


def test_list_prefix_start_after_and_children(store: Store) -> None:
    for key in ["runs/a/events/00000001.json", "runs/a/events/00000000.json", "runs/a/plans/v0001.json",
                "runs/b/events/00000000.json", "other/z.json"]:
        store.put(key=key, data=b"x")
    assert store.list(prefix="runs/a/events/") == ["runs/a/events/00000000.json", "runs/a/events/00000001.json"]
    assert store.list(prefix="runs/a/events/", start_after="runs/a/events/00000000.json") == [
        "runs/a/events/00000001.json"]
    assert store.list(prefix="runs/a/") == ["runs/a/events/00000000.json", "runs/a/events/00000001.json",
                                           "runs/a/plans/v0001.json"]
    assert store.list(prefix="nothing/") == []
    assert store.children(prefix="runs/") == ["a", "b"]


@pytest.mark.parametrize("bad", ["../etc/passwd", "/abs", "a//b", "a/.hidden", "", "a b", "a/../b"])
def test_bad_keys_are_rejected(store: Store, bad: str) -> None:
    with pytest.raises(InputError):
        store.put(key=bad, data=b"x")
    with pytest.raises(InputError):
        check_key(bad)


def test_fs_leaves_no_temp_files_and_hides_them(tmp_path: Path) -> None:
    store = FsStore(tmp_path)
    store.put_if_absent(key="a/b.json", data=b"1")
    store.put_if_absent(key="a/b.json", data=b"2")
    store.put(key="a/c.json", data=b"3")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b.json", "c.json"]
    (tmp_path / "a" / ".tmp-d.json.123").write_bytes(b"half")  # a crashed writer's leftover
    assert store.list(prefix="a/") == ["a/b.json", "a/c.json"]


def test_open_store_picks_the_backend(tmp_path: Path, s3_server: object) -> None:
    fs = open_store(load_settings(store={"kind": "fs", "root": str(tmp_path)}))
    assert isinstance(fs, FsStore) and fs.root == tmp_path
    s3 = open_store(load_settings(store={"kind": "s3", "s3_endpoint": "http://127.0.0.1:1", "s3_bucket": "bk",
                                         "s3_access_key": "a", "s3_secret_key": "b"}))
    assert isinstance(s3, S3Store) and s3.bucket == "bk" and s3.endpoint == "http://127.0.0.1:1"


def test_s3_prefix_keeps_runs_apart(s3_server: LoopbackS3, s3_bucket: str) -> None:
    a = S3Store(**s3_server.store_kwargs(s3_bucket), prefix="team-a")
    b = S3Store(**s3_server.store_kwargs(s3_bucket), prefix="team-b/")
    a.put(key="runs/x/events/00000000.json", data=b"a")
    assert b.list(prefix="runs/") == []
    assert a.list(prefix="runs/") == ["runs/x/events/00000000.json"]
    raw = s3_server.client().list_objects_v2(Bucket=s3_bucket)["Contents"]
    assert [o["Key"] for o in raw] == ["team-a/runs/x/events/00000000.json"]


def test_list_takes_any_string_prefix(store: Store) -> None:
    # A prefix is a string, not a directory: it may be empty, stop inside a segment or name a key at the top.
    keys = ["runs/a/events/00000000.json", "runs/a/events/00000001.json", "runs/a/head.json", "runs/ab/head.json",
            "top.json"]
    for key in keys:
        store.put(key=key, data=b"x")
    assert store.list(prefix="") == keys
    assert store.list(prefix="", start_after="runs/ab/head.json") == ["top.json"]
    assert store.list(prefix="run") == keys[:4]
    assert store.list(prefix="runs/a") == keys[:4]
    assert store.list(prefix="runs/a/") == keys[:3]
    assert store.list(prefix="runs/a/events/0000000") == keys[:2]
    assert store.list(prefix="runs/a/events/00000001.json") == keys[1:2]
    assert store.list(prefix="t") == ["top.json"]


def test_a_prefix_through_a_record_has_no_keys_and_no_children(store: Store) -> None:
    store.put(key="runs/r/head.json", data=b"{}")
    assert store.list(prefix="runs/r/head.json/") == []
    assert store.children(prefix="runs/r/head.json/") == []


def test_children_are_whole_names_one_level_down(store: Store) -> None:
    # A name keeps every character it has, however it ends (S3's common prefixes end in "/", stripped once).
    for key in ["runs/RUN-X/head.json", "runs/a.b/events/00000000.json", "runs/x_/plans/v0001.json", "runs/top.json"]:
        store.put(key=key, data=b"x")
    assert store.children(prefix="runs/") == ["RUN-X", "a.b", "x_"]
    assert store.children(prefix="runs/a.b/") == ["events"]


def _plant(store: Store, name: str) -> None:
    """Put an object under ``name``, which no writer of the log could have chosen, behind the store's back."""
    if isinstance(store, FsStore):
        path = store.root.joinpath(*name.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"{}")
    else:
        assert isinstance(store, S3Store)
        store._client.put_object(Bucket=store.bucket, Key=store.prefix + name, Body=b"{}")


@pytest.mark.parametrize("name", ["runs/r/idempotency/.hidden", "runs/r/events/a b.json", "runs/r/é.json",
                                  "runs/a run/events/00000000.json", "runs/.r/head.json"])
def test_a_listing_holds_only_names_a_reader_can_open(store: Store, name: str) -> None:
    """Guards `log verify` and `log ls`: a dot file among a run's records was listed, and reading it back
    refused its name, so verify ended in "invalid store key" (exit 2) instead of judging the run."""
    store.put(key="runs/r/events/00000000.json", data=b"{}")
    _plant(store, name)
    assert store.list(prefix="runs/") == ["runs/r/events/00000000.json"]
    assert store.children(prefix="runs/") == ["r"]
    assert all(store.get(key=k) == b"{}" for k in store.list(prefix=""))
