"""The bucket creation's promises at its edges (``alas_argo.controller.bucket``), against a scripted S3 endpoint
on loopback (real HTTP, real botocore parsing): which answers mean "there already", "ours" and "create it",
which failures are worth trying again and what each error says, the request the creation sends, and the
background loop's backoff and log lines (its waits are recorded, never slept)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from alas_argo.controller import create_bucket, create_bucket_when_reachable
from alas_argo.controller.bucket import _client
from alas_argo.errors import StoreError, StoreUnavailable
from alas_argo.settings import StoreSettings
from tests.log.test_s3_store_edges import Scripted
from tests.s3server import free_port

LOGGER = "alas_argo.controller.bucket"


def _error(code: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>scripted</Message>'
            "<RequestId>1</RequestId></Error>").encode()


def settings_at(endpoint: str, **changes: object) -> StoreSettings:
    return StoreSettings.model_validate({
        "kind": "s3", "s3_endpoint": endpoint, "s3_bucket": "b", "s3_region": "us-east-1",
        "s3_access_key": "AKIDSCRIPTED", "s3_secret_key": "s", "connect_timeout": 1.5, "read_timeout": 2.5,
        **changes})


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    try:
        yield server
    finally:
        server.close()


class Waits(threading.Event):
    """A stop event that records the loop's waits instead of waiting, and is set after ``rounds`` of them."""

    def __init__(self, rounds: int) -> None:
        super().__init__()
        self.rounds, self.waits = rounds, list[float]()

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None
        self.waits.append(timeout)
        if len(self.waits) >= self.rounds:
            self.set()
        return self.is_set()


# ---- what the store's answers mean ----------------------------------------------------------------------------

def test_a_missing_bucket_is_created_in_the_settings_region(scripted: Scripted) -> None:
    scripted.answers = {"HEAD": [(404, b"")], "PUT": [(200, b"")]}
    assert create_bucket(settings_at(scripted.endpoint, s3_region="eu-central-1")) is True
    assert scripted.requests == [("HEAD", "/b"), ("PUT", "/b")]  # path style: the endpoint's host, not b.<host>
    assert b"<LocationConstraint>eu-central-1</LocationConstraint>" in scripted.bodies[1]
    assert all("Credential=AKIDSCRIPTED/" in a and "/eu-central-1/s3/" in a for a in scripted.authorizations)


def test_us_east_1_is_not_named_as_a_location(scripted: Scripted) -> None:
    # S3's default location refuses to be named as a constraint.
    scripted.answers = {"HEAD": [(404, b"")], "PUT": [(200, b"")]}
    assert create_bucket(settings_at(scripted.endpoint)) is True
    assert scripted.requests == [("HEAD", "/b"), ("PUT", "/b")] and scripted.bodies[1] == b""


def test_a_bucket_there_already_is_left_alone(scripted: Scripted) -> None:
    scripted.answers = {"HEAD": [(200, b"")]}
    assert create_bucket(settings_at(scripted.endpoint)) is False
    assert scripted.requests == [("HEAD", "/b")]


def test_a_bucket_another_replica_created_first_counts_as_there(scripted: Scripted) -> None:
    scripted.answers = {"HEAD": [(404, b"")], "PUT": [(409, _error("BucketAlreadyOwnedByYou"))]}
    assert create_bucket(settings_at(scripted.endpoint)) is False


@pytest.mark.parametrize(("head", "put", "message"), [
    ((403, b""), None,
     "checking the bucket refused (403): An error occurred (403) when calling the HeadBucket operation: Forbidden"),
    ((400, b""), None, "checking the bucket refused (400): An error occurred (400) when calling the HeadBucket "
                       "operation: Bad Request"),
    ((404, b""), (409, _error("BucketAlreadyExists")),
     "creating the bucket refused (BucketAlreadyExists): An error occurred (BucketAlreadyExists) when calling "
     "the CreateBucket operation: scripted"),
    ((404, b""), (403, _error("AccessDenied")),
     "creating the bucket refused (AccessDenied): An error occurred (AccessDenied) when calling the CreateBucket "
     "operation: scripted"),
], ids=["head-403", "head-400", "name-taken", "put-denied"])
def test_a_refusal_is_a_store_error_naming_the_step_and_the_code(
        scripted: Scripted, head: tuple[int, bytes], put: tuple[int, bytes] | None, message: str) -> None:
    scripted.answers = {"HEAD": [head], **({"PUT": [put]} if put else {})}
    with pytest.raises(StoreError) as refused:
        create_bucket(settings_at(scripted.endpoint))
    assert not isinstance(refused.value, StoreUnavailable)
    assert (refused.value.message, refused.value.where) == (message, f"s3://b at {scripted.endpoint}")
    assert [m for m, _ in scripted.requests] == ["HEAD"] + (["PUT"] if put else [])  # never retried here


@pytest.mark.parametrize(("head", "put", "message"), [
    ((503, b""), None, "checking the bucket: the store answered 503"),
    ((500, b""), None, "checking the bucket: the store answered 500"),
    ((404, b""), (500, _error("InternalError")), "creating the bucket: the store answered InternalError"),
    ((404, b""), (503, _error("SlowDown")), "creating the bucket: the store answered SlowDown"),
    ((404, b""), (501, _error("NotImplemented")), "creating the bucket: the store answered NotImplemented"),
    ((404, b""), (501, b""), "creating the bucket: the store answered 501"),
    ((404, b""), (400, _error("RequestTimeout")), "creating the bucket: the store answered RequestTimeout"),
], ids=["head-503", "head-500", "put-500", "put-slowdown", "put-501", "put-501-bodiless", "put-timeout-code"])
def test_a_transient_answer_is_store_unavailable(scripted: Scripted, head: tuple[int, bytes],
                                                 put: tuple[int, bytes] | None, message: str) -> None:
    # Every 5xx, 501 too: a store that is still starting answers what it will not later.
    scripted.answers = {"HEAD": [head], **({"PUT": [put]} if put else {})}
    with pytest.raises(StoreUnavailable) as unavailable:
        create_bucket(settings_at(scripted.endpoint))
    assert (unavailable.value.message, unavailable.value.where) == (message, f"s3://b at {scripted.endpoint}")
    # botocore does not retry on its own: the background loop does, with its backoff and its log line
    assert [m for m, _ in scripted.requests] == ["HEAD"] + (["PUT"] if put else [])


def test_a_store_that_does_not_answer_is_named_as_such(scripted: Scripted) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(StoreUnavailable) as unavailable:
        create_bucket(settings_at(endpoint))
    assert unavailable.value.message == "checking the bucket: the store did not answer (EndpointConnectionError)"
    assert unavailable.value.where == f"s3://b at {endpoint}"
    scripted.answers = {"HEAD": [(404, b"")], "PUT": [(0, b"")]}  # gone between the check and the creation
    with pytest.raises(StoreUnavailable) as unavailable:
        create_bucket(settings_at(scripted.endpoint))
    assert unavailable.value.message == "creating the bucket: the store did not answer (ConnectionClosedError)"
    assert unavailable.value.where == f"s3://b at {scripted.endpoint}"
    assert scripted.requests == [("HEAD", "/b"), ("PUT", "/b")]


def test_an_error_without_an_endpoint_names_the_bucket_alone(scripted: Scripted,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # No endpoint in the settings: AWS's own (here botocore's AWS_ENDPOINT_URL_S3 points it at the scripted one).
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", scripted.endpoint)
    scripted.answers = {"HEAD": [(403, b"")]}
    with pytest.raises(StoreError) as refused:
        create_bucket(settings_at(scripted.endpoint, s3_endpoint=None))
    assert refused.value.where == "s3://b" and scripted.requests == [("HEAD", "/b")]


def test_missing_credentials_are_a_refusal_not_an_outage(scripted: Scripted, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing to try again until an operator provides them: a StoreError, logged as an error by the loop.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(StoreError) as refused:
        create_bucket(settings_at(scripted.endpoint, s3_access_key=None, s3_secret_key=None))
    assert not isinstance(refused.value, StoreUnavailable)
    assert refused.value.message == ("checking the bucket: no S3 credentials: set ALAS_STORE__S3_ACCESS_KEY and "
                                     "ALAS_STORE__S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
    assert refused.value.where == f"s3://b at {scripted.endpoint}"
    assert scripted.requests == []


def test_a_bucket_name_botocore_refuses_is_a_refusal_not_an_outage(scripted: Scripted) -> None:
    with pytest.raises(StoreError) as refused:
        create_bucket(settings_at(scripted.endpoint, s3_bucket="alas logs"))
    assert not isinstance(refused.value, StoreUnavailable)
    assert refused.value.message.startswith('checking the bucket failed: Parameter validation failed:\nInvalid '
                                            'bucket name "alas logs"')
    assert refused.value.where == f"s3://alas logs at {scripted.endpoint}"
    assert scripted.requests == []


def test_the_client_follows_the_settings() -> None:
    settings = settings_at("http://127.0.0.1:9", s3_region="eu-west-3")
    client = _client(settings)
    config = client.meta.config
    assert (client.meta.endpoint_url, client.meta.region_name) == ("http://127.0.0.1:9", "eu-west-3")
    assert (config.connect_timeout, config.read_timeout) == (1.5, 2.5)
    assert config.retries["total_max_attempts"] == 1 and config.s3 == {"addressing_style": "path"}


# ---- the background loop ---------------------------------------------------------------------------------------

def test_the_loop_backs_off_exponentially_up_to_its_cap(caplog: pytest.LogCaptureFixture) -> None:
    stop, endpoint = Waits(rounds=7), f"http://127.0.0.1:{free_port()}"
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert create_bucket_when_reachable(settings_at(endpoint), stop) is False
    assert stop.waits == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]  # the defaults: what the controller runs
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]
    assert [level for level, _ in lines] == [logging.INFO] * 7
    assert lines[0][1] == (f"bucket b not created yet (s3://b at {endpoint}: checking the bucket: the store did "
                           "not answer (EndpointConnectionError)); trying again in 1s")
    assert lines[-1][1].endswith("; trying again in 30s")
    stop = Waits(rounds=3)
    create_bucket_when_reachable(settings_at(f"http://127.0.0.1:{free_port()}"), stop, first_delay=0.5, max_delay=1.5)
    assert stop.waits == [0.5, 1.0, 1.5]


def test_the_loop_logs_a_refusal_as_an_error_and_a_success_once(scripted: Scripted,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    scripted.answers = {"HEAD": [(403, b""), (503, b""), (404, b"")], "PUT": [(200, b"")]}
    stop = Waits(rounds=10)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert create_bucket_when_reachable(settings_at(scripted.endpoint), stop, first_delay=2.0) is True
    assert stop.waits == [2.0, 4.0]
    where = f"s3://b at {scripted.endpoint}"
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER] == [
        (logging.ERROR, f"cannot create bucket b: {where}: checking the bucket refused (403): An error occurred "
                        "(403) when calling the HeadBucket operation: Forbidden; trying again in 2s"),
        (logging.INFO, f"bucket b not created yet ({where}: checking the bucket: the store answered 503); trying "
                       "again in 4s"),
        (logging.INFO, "bucket b created")]


def test_the_loop_ends_at_once_on_a_bucket_there_already(scripted: Scripted,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    scripted.answers = {"HEAD": [(200, b"")]}
    stop = Waits(rounds=10)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert create_bucket_when_reachable(settings_at(scripted.endpoint), stop) is True
    assert stop.waits == [] and scripted.requests == [("HEAD", "/b")]
    assert [r.getMessage() for r in caplog.records if r.name == LOGGER] == ["bucket b exists"]


def test_a_loop_stopped_before_it_starts_asks_nothing(scripted: Scripted) -> None:
    stop = Waits(rounds=10)
    stop.set()
    assert create_bucket_when_reachable(settings_at(scripted.endpoint), stop) is False
    assert scripted.requests == [] and stop.waits == []
