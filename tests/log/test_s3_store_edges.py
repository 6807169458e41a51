"""The S3 backend's own promises at its error boundary, beyond the contract both backends keep (test_store.py)
and the outages of test_s3_failures.py: answers moto never sends, from a scripted S3 endpoint on loopback
(real HTTP, real botocore parsing), and the store built from the settings."""

from __future__ import annotations

import http.server
import random
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from alas_argo import scrubbing
from alas_argo.errors import InputError, StoreError, StoreUnavailable
from alas_argo.log import s3_store
from alas_argo.log.backend import RecordNotFound
from alas_argo.log.s3_store import S3Store, answer_text, transient
from alas_argo.scrubbing import scrub_text
from alas_argo.settings import load_settings
from tests.s3server import free_port

KEY = "runs/r/events/00000000.json"


def _error(code: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>scripted</Message>'
            "<RequestId>1</RequestId></Error>").encode()


class Scripted:
    """An S3 endpoint on loopback that answers each HTTP method as scripted: ``answers[method]`` is a list of
    (status, body) used in turn, the last one repeated (status 0: the connection is closed unanswered). Every
    request is recorded as (method, path), its ``Authorization`` header and its body in ``authorizations`` and
    ``bodies``."""

    def __init__(self) -> None:
        self.answers: dict[str, list[tuple[int, bytes]]] = {}
        self.requests: list[tuple[str, str]] = []
        self.authorizations: list[str] = []
        self.bodies: list[bytes] = []
        scripted = self

        class Handler(http.server.BaseHTTPRequestHandler):
            # HTTP/1.1 answers botocore's "Expect: 100-continue" at once; on HTTP/1.0 each PUT waits 1 s for it
            protocol_version = "HTTP/1.1"

            def _answer(self) -> None:
                scripted.bodies.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                scripted.authorizations.append(self.headers.get("Authorization", ""))
                scripted.requests.append((self.command, self.path))
                queue = scripted.answers.get(self.command, [(500, _error("InternalError"))])
                status, body = queue.pop(0) if len(queue) > 1 else queue[0]
                if status == 0:  # the connection closed without an answer
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            do_GET = do_HEAD = do_PUT = _answer

            def log_message(self, *_args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def store(self, **kwargs: object) -> S3Store:
        """A store on bucket ``b`` of this endpoint that never waits between retries."""
        params: dict[str, object] = {"bucket": "b", "endpoint": self.endpoint, "access_key": "a",
                                     "secret_key": "s", "max_retries": 1, "sleep": lambda _d: None}
        return S3Store(**{**params, **kwargs})  # type: ignore[arg-type]

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    try:
        yield server
    finally:
        server.close()


def test_a_service_without_conditional_writes_is_refused_never_read_as_a_lost_race(scripted: Scripted) -> None:
    # A 501 is not a 412: were it taken for one, the re-read would find nothing and the append would count
    # itself lost forever (or, on a key that exists, silently lose to itself).
    scripted.answers = {"PUT": [(501, _error("NotImplemented"))], "GET": [(404, _error("NoSuchKey"))]}
    store = scripted.store()
    with pytest.raises(StoreError) as info:
        store.put_if_absent(key=KEY, data=b"x")
    assert not isinstance(info.value, StoreUnavailable) and info.value.exit_code == 2
    assert info.value.message == ("the S3 service does not implement this request (put); the log needs "
                                  "conditional writes (If-None-Match: *)")
    assert info.value.where == scripted.endpoint
    assert scripted.methods() == ["PUT"]  # neither retried nor re-read


def test_a_412_without_s3s_error_code_is_still_a_lost_race(scripted: Scripted) -> None:
    # A bodiless 412 (botocore reads its code as "412"): the status alone says the key exists.
    scripted.answers = {"PUT": [(412, b"")], "GET": [(200, b"theirs")]}
    store = scripted.store()
    assert store.put_if_absent(key=KEY, data=b"mine") is False
    assert store.put_if_absent(key=KEY, data=b"theirs") is True  # our own earlier create, its answer lost
    # an answer without an S3 error document drops the pooled connections and is tried once more
    assert scripted.methods() == ["PUT", "PUT", "GET"] * 2
    assert all(path == f"/b/{KEY}" for _, path in scripted.requests)


@pytest.mark.parametrize("conditional", [True, False])
def test_a_refused_write_names_the_record_and_the_reason(scripted: Scripted, conditional: bool) -> None:
    scripted.answers = {"PUT": [(403, _error("AccessDenied"))]}
    store = scripted.store(prefix="team")
    with pytest.raises(StoreError) as info:
        if conditional:
            store.put_if_absent(key=KEY, data=b"x")
        else:
            store.put(key=KEY, data=b"x")
    assert not isinstance(info.value, StoreUnavailable)
    # The object's own address, then the endpoint (not the key after the endpoint, as if it were a URL there).
    assert info.value.where == f"s3://b/team/{KEY} at {scripted.endpoint}" == store.where(KEY)
    assert info.value.message == ("S3 put refused (AccessDenied): An error occurred (AccessDenied) when calling "
                                  "the PutObject operation: scripted; check the S3 credentials "
                                  "(ALAS_STORE__S3_ACCESS_KEY / ALAS_STORE__S3_SECRET_KEY, or AWS_ACCESS_KEY_ID / "
                                  "AWS_SECRET_ACCESS_KEY) and the bucket's policy")
    assert scripted.requests == [("PUT", f"/b/team/{KEY}")]  # a refusal is not retried


def test_a_refused_head_is_an_error_not_a_missing_record(scripted: Scripted) -> None:
    scripted.answers = {"HEAD": [(403, b"")]}
    store = scripted.store()
    with pytest.raises(StoreError) as info:
        store.exists(key=KEY)
    assert info.value.where == store.where(KEY)
    assert info.value.message.startswith("S3 head refused (403): ")
    # A HEAD's 403 has no body to say what is refused: the message points at the credentials.
    assert info.value.message.endswith("; check the S3 credentials (ALAS_STORE__S3_ACCESS_KEY / "
                                       "ALAS_STORE__S3_SECRET_KEY, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) "
                                       "and the bucket's policy")
    assert scripted.methods() == ["HEAD"]  # a HEAD never has an error document: no reconnect, no retry


def test_a_refused_listing_names_the_prefix_once(scripted: Scripted) -> None:
    scripted.answers = {"GET": [(403, _error("AccessDenied"))]}
    store = scripted.store(prefix="team")
    for listing in (lambda: store.list(prefix="runs/"), lambda: store.children(prefix="runs/")):
        with pytest.raises(StoreError) as info:
            listing()
        assert info.value.where == store.where("runs/")  # the store's prefix is in its location already
        assert info.value.message.startswith("S3 list refused (AccessDenied): ")


def test_no_credentials_is_a_store_error_saying_what_to_set(monkeypatch: pytest.MonkeyPatch,
                                                            scripted: Scripted) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "ALAS_STORE__S3_ACCESS_KEY",
                 "ALAS_STORE__S3_SECRET_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(s3_store, "_SESSION", [])  # a session that has not resolved credentials before
    # keys neither in the settings nor anywhere boto3 looks: the store is built, and says so at its first request
    settings = load_settings(store={"kind": "s3", "s3_endpoint": scripted.endpoint, "s3_bucket": "b"}).store
    store = S3Store.from_settings(settings, sleep=lambda _d: None)
    for write in (lambda: store.put_if_absent(key=KEY, data=b"x"), lambda: store.get(key=KEY)):
        with pytest.raises(StoreError) as info:
            write()
        assert not isinstance(info.value, StoreUnavailable) and info.value.exit_code == 2
        assert info.value.message == ("no S3 credentials: set ALAS_STORE__S3_ACCESS_KEY and ALAS_STORE__S3_SECRET_KEY "
                                      "(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
        assert info.value.where == store.location
    assert scripted.requests == []  # nothing unsigned was sent


def test_the_store_from_settings_carries_every_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s3_store, "_SESSION", [])
    settings = load_settings(store={
        "kind": "s3", "s3_endpoint": "http://127.0.0.1:1", "s3_bucket": "bk", "s3_prefix": "/team-X/",
        "s3_region": "eu-west-3", "s3_access_key": "ak", "s3_secret_key": "sk", "connect_timeout": 1.5,
        "read_timeout": 7.0, "max_retries": 2}).store
    store = S3Store.from_settings(settings)
    assert (store.bucket, store.endpoint, store.prefix, store.max_retries) == ("bk", "http://127.0.0.1:1", "team-X/", 2)
    assert store.location == "s3://bk/team-X/ at http://127.0.0.1:1"  # only slashes are stripped
    meta = store._client.meta
    assert meta.region_name == "eu-west-3"
    assert (meta.config.connect_timeout, meta.config.read_timeout) == (1.5, 7.0)
    credentials = store._client._request_signer._credentials
    assert (credentials.access_key, credentials.secret_key) == ("ak", "sk")
    assert S3Store.from_settings(settings, max_retries=0, prefix="").prefix == ""  # keywords override


@pytest.mark.parametrize(("status", "body", "puts"), [
    (501, _error("NotImplemented"), 1),
    (501, b"", 2),  # no error document: the pooled connections are dropped and the PUT tried once more
    (400, _error("NotImplemented"), 1),
], ids=["501-NotImplemented", "bare-501", "400-NotImplemented"])
def test_either_half_of_not_implemented_is_the_conditional_writes_error(
        scripted: Scripted, status: int, body: bytes, puts: int) -> None:
    scripted.answers = {"PUT": [(status, body)], "GET": [(404, _error("NoSuchKey"))]}
    with pytest.raises(StoreError, match=r"needs conditional writes \(If-None-Match: \*\)$") as info:
        scripted.store().put_if_absent(key=KEY, data=b"x")
    assert not isinstance(info.value, StoreUnavailable)
    assert scripted.methods() == ["PUT"] * puts


@pytest.mark.parametrize("endpoint", ["given", "from AWS_ENDPOINT_URL"])
def test_errors_about_the_service_name_its_endpoint(scripted: Scripted, monkeypatch: pytest.MonkeyPatch,
                                                   endpoint: str) -> None:
    # Without an endpoint of its own (AWS, or one boto3 finds in AWS_ENDPOINT_URL) the store says "s3".
    kwargs: dict[str, object] = {}
    if endpoint != "given":
        monkeypatch.setenv("AWS_ENDPOINT_URL", scripted.endpoint)
        kwargs["endpoint"] = None
    store = scripted.store(**kwargs)
    where = scripted.endpoint if endpoint == "given" else "s3"
    assert store.location == ("s3://b/" if endpoint != "given" else f"s3://b/ at {scripted.endpoint}")
    scripted.answers = {"PUT": [(404, _error("NoSuchBucket"))]}
    with pytest.raises(StoreError) as info:
        store.put(key=KEY, data=b"x")
    assert (info.value.message, info.value.where) == ("bucket 'b' does not exist", where)
    scripted.answers = {"PUT": [(501, _error("NotImplemented"))]}
    with pytest.raises(StoreError, match="conditional writes") as info:
        store.put_if_absent(key=KEY, data=b"x")
    assert info.value.where == where
    scripted.answers = {"GET": [(404, b"")]}  # not S3's NoSuchKey
    with pytest.raises(StoreError) as info:
        store.get(key=KEY)
    assert info.value.message == (f"S3 get answered 404 without S3's NoSuchKey (404): is "
                                  f"{scripted.endpoint if endpoint == 'given' else 'the endpoint'} an S3 service, "
                                  "and does the bucket exist there?")
    assert info.value.where == store.where(KEY)
    scripted.answers = {"GET": [(503, _error("SlowDown"))]}
    with pytest.raises(StoreUnavailable) as unavailable:
        store.get(key=KEY)
    assert unavailable.value.where == where
    assert unavailable.value.message.startswith("S3 get failed after 2 attempts: ")


def test_a_missing_record_is_named_by_its_key(s3_store: S3Store) -> None:
    with pytest.raises(RecordNotFound) as info:
        s3_store.get(key=KEY)
    assert (info.value.message, info.value.where) == ("no such record", s3_store.where(KEY))
    assert s3_store.exists(key=KEY) is False


@pytest.mark.parametrize("code", ["SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling",
                                  "ConditionalRequestConflict", "RequestTimeTooSkewed", "ClientDisconnected"])
def test_each_transient_code_is_retried_whatever_its_status(code: str) -> None:
    # Several come with a status that alone would be final: RequestTimeout and Throttling 400,
    # RequestTimeTooSkewed 403, ConditionalRequestConflict 409.
    assert transient(code, 400)


@pytest.mark.parametrize(("status", "retried"), [
    (400, False), (403, False), (404, False), (409, False), (412, False), (429, True), (499, True), (500, True),
    (501, False), (502, True), (503, True), (504, True)])
def test_which_statuses_are_retried(status: int, retried: bool) -> None:
    assert transient("", status) is retried
    assert transient("AccessDenied", status) is retried


def test_requests_sent_counts_every_request_on_the_wire(scripted: Scripted) -> None:
    # The cost figure of `alas bench open`: retries and the reconnect after a non-S3 answer are requests too.
    scripted.answers = {"GET": [(503, _error("SlowDown")), (200, b"{}")], "HEAD": [(200, b"")]}
    store = scripted.store(max_retries=2)
    assert store.requests_sent == 0
    assert store.get(key=KEY) == b"{}"
    assert store.requests_sent == 2
    assert store.exists(key=KEY) and store.requests_sent == 3
    scripted.answers = {"PUT": [(412, b"")], "GET": [(200, b"x")]}
    assert store.put_if_absent(key=KEY, data=b"x") and store.requests_sent == 6
    assert len(scripted.requests) == 6


@pytest.mark.parametrize(("draw", "share"), [(0.0, 0.5), (1.0, 1.0)])
def test_the_backoff_doubles_up_to_5_s_and_jitters_between_half_and_all_of_it(
        scripted: Scripted, monkeypatch: pytest.MonkeyPatch, draw: float, share: float) -> None:
    monkeypatch.setattr(random, "random", lambda: draw)  # the two ends of the jitter's draw
    delays: list[float] = []
    scripted.answers = {"GET": [(503, _error("SlowDown"))]}
    store = scripted.store(max_retries=4, backoff=1.5, sleep=delays.append)
    with pytest.raises(StoreUnavailable, match="after 5 attempts") as info:
        store.get(key=KEY)
    assert "(SlowDown)" in info.value.message and isinstance(info.value.__cause__, ClientError)  # the last answer
    assert delays == [1.5 * share, 3.0 * share, 5.0 * share, 5.0 * share]
    assert len(scripted.requests) == 5


def test_a_conflicting_conditional_write_in_flight_is_tried_again(scripted: Scripted) -> None:
    # 409 ConditionalRequestConflict: its status alone would be final, but who won is still undecided.
    delays: list[float] = []
    scripted.answers = {"PUT": [(409, _error("ConditionalRequestConflict")), (200, b"")]}
    assert scripted.store(sleep=delays.append).put_if_absent(key=KEY, data=b"x") is True
    assert scripted.methods() == ["PUT", "PUT"] and len(delays) == 1


def test_the_reconnect_after_a_non_s3_answer_is_one_extra_try_without_a_wait(scripted: Scripted) -> None:
    delays: list[float] = []
    scripted.answers = {"GET": [(503, b"")]}
    with pytest.raises(StoreUnavailable, match="after 2 attempts"):
        scripted.store(max_retries=1, sleep=delays.append).get(key=KEY)
    assert len(scripted.requests) == 3 and len(delays) == 1  # the reconnect, then one retry after a backoff
    scripted.requests.clear()
    with pytest.raises(StoreUnavailable, match="after 1 attempts"):
        scripted.store(max_retries=0, sleep=delays.append).get(key=KEY)
    assert len(scripted.requests) == 2 and len(delays) == 1


def test_the_secret_key_is_scrubbed_from_then_on(scripted: Scripted, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scrubbing, "_secrets", ())  # not registered by an earlier test in this process
    secret = "s3-secret-key-for-scrubbing-0451"
    assert scrub_text(secret) == secret
    scripted.store(secret_key=secret)
    assert scrub_text(f"ALAS_STORE__S3_SECRET_KEY={secret}") == "ALAS_STORE__S3_SECRET_KEY=[redacted]"


def test_the_constructors_defaults_are_the_settings_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(s3_store, "_SESSION", [])
    defaults = load_settings(store={"kind": "s3"}).store
    store = S3Store(bucket="b", endpoint="http://127.0.0.1:1", access_key="a", secret_key="s")
    config = store._client.meta.config
    assert (store.prefix, store.max_retries, store.backoff) == (defaults.s3_prefix, defaults.max_retries, 0.1)
    assert S3Store(bucket="b", endpoint="http://127.0.0.1:1", prefix="/").prefix == ""  # "/" is no prefix
    assert store._client.meta.region_name == defaults.s3_region
    assert (config.connect_timeout, config.read_timeout) == (defaults.connect_timeout, defaults.read_timeout)
    # boto3 never retries on its own (the backoff is ours) and addresses buckets by path (MinIO, no DNS names)
    assert config.retries["total_max_attempts"] == 1 and config.s3 == {"addressing_style": "path"}


def test_without_boto3_the_error_names_the_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # what `import boto3` meets where it is not installed
    with pytest.raises(ImportError) as info:
        S3Store(bucket="b")
    assert str(info.value) == "the S3 store needs boto3: pip install 'alas-argo[cluster]'"
    assert isinstance(info.value.__cause__, ImportError)


def test_a_record_gone_after_our_lost_race_is_not_ours(scripted: Scripted) -> None:
    scripted.answers = {"PUT": [(412, _error("PreconditionFailed"))], "GET": [(404, _error("NoSuchKey"))]}
    assert scripted.store().put_if_absent(key=KEY, data=b"x") is False
    assert scripted.methods() == ["PUT", "GET"]


def test_a_bucket_name_s3_cannot_take_is_a_store_error_and_nothing_is_sent(scripted: Scripted) -> None:
    store = scripted.store(bucket="Not A Bucket")
    with pytest.raises(StoreError) as info:
        store.put(key=KEY, data=b"x")
    assert not isinstance(info.value, StoreUnavailable) and info.value.where == scripted.endpoint
    assert info.value.message.startswith("S3 put failed: Parameter validation failed:")
    assert "Invalid bucket name" in info.value.message and scripted.requests == []


def test_an_answer_reads_the_same_whatever_botocore_says_of_its_own_retries() -> None:
    # botocore 1.44 puts "(reached max retries: 0)" into a client error whose metadata says the attempts ran out,
    # as they do at once with its retries off; the store retries by itself, so the note would only mislead,
    # and the messages would differ between botocore releases (7 tests failed on a fresh install before).
    from botocore.exceptions import ClientError

    e = ClientError({"Error": {"Code": "AccessDenied", "Message": "scripted"},
                     "ResponseMetadata": {"MaxAttemptsReached": True, "RetryAttempts": 0}}, "PutObject")
    assert answer_text(e) == "An error occurred (AccessDenied) when calling the PutObject operation: scripted"
    assert answer_text(None) == "None"


@pytest.mark.parametrize(("given", "missing"), [("ALAS_STORE__S3_ACCESS_KEY", "s3_secret_key"),
                                                ("ALAS_STORE__S3_SECRET_KEY", "s3_access_key"),
                                                ("AWS_ACCESS_KEY_ID", "s3_secret_key")])
def test_one_key_of_the_pair_is_refused_naming_the_missing_one(monkeypatch: pytest.MonkeyPatch, given: str,
                                                               missing: str) -> None:
    # boto3 takes explicit keys only as a pair: one alone was a PartialCredentialsError traceback.
    for name in ("ALAS_STORE__S3_ACCESS_KEY", "ALAS_STORE__S3_SECRET_KEY", "AWS_ACCESS_KEY_ID",
                 "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(given, "only-one-of-the-pair")
    settings = load_settings(store={"kind": "s3", "s3_endpoint": "http://127.0.0.1:1"}).store
    with pytest.raises(InputError, match=f"store.s3_[a-z]+_key is set but store.{missing} is not: give both S3 "
                                         "keys, or neither") as caught:
        S3Store.from_settings(settings)
    assert caught.value.where == f"ALAS_STORE__{missing.upper()}"
    # Both halves, one from each family of variables, make a pair.
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY" if missing == "s3_secret_key" else "AWS_ACCESS_KEY_ID", "the-other")
    store = S3Store.from_settings(load_settings(store={"kind": "s3", "s3_endpoint": "http://127.0.0.1:1"}).store)
    assert store.location == "s3://alas/ at http://127.0.0.1:1"


@pytest.mark.parametrize(("kwargs", "reason"), [({"region": "a b"}, "region_name 'a b' doesn't match"),
                                                ({"access_key": "only-the-id"}, "Partial credentials")])
def test_a_client_botocore_will_not_build_is_a_store_error_at_the_store(kwargs: dict[str, Any], reason: str) -> None:
    with pytest.raises(StoreError, match=f"cannot set up the S3 client: .*{reason}") as caught:
        S3Store(bucket="b", endpoint="http://127.0.0.1:1", **kwargs)
    assert caught.value.where == "s3://b/ at http://127.0.0.1:1"
