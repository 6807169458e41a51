"""The S3 backend of the store (MinIO in the chart, any S3-compatible service), through boto3.

This module is the one boundary where botocore errors enter the project; each is translated here, chained
with ``from e``:

- ``412 PreconditionFailed`` on a conditional create: the key exists, the caller lost the race (False);
- ``409 ConditionalRequestConflict``: a concurrent conditional write was in flight; retried like a
  transient error, because its outcome decides whether we won or lost;
- connection errors, timeouts, 429 and 5xx: retried with exponential backoff and jitter, then
  :class:`~alas_argo.errors.StoreUnavailable` naming the endpoint;
- missing credentials and other client-side botocore errors: :class:`~alas_argo.errors.StoreError` saying
  what to set (exit 2), never a traceback;
- ``NoSuchBucket``: :class:`~alas_argo.errors.StoreError` naming the bucket; ``NoSuchKey``:
  :class:`~alas_argo.log.backend.RecordNotFound`; ``501 NotImplemented`` (a service without conditional
  writes): a StoreError saying so, never a silent unconditional write.

boto3's own retries are switched off so that the backoff is ours: bounded, observable and testable.
"""

from __future__ import annotations

import builtins
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from alas_argo.errors import InputError, StoreError, StoreUnavailable
from alas_argo.log.backend import RecordNotFound, Store, check_key, check_record_size, is_key, read_record
from alas_argo.scrubbing import register_secret
from alas_argo.settings import StoreSettings

__all__ = ["S3Store", "answer_text", "transient"]

#: S3 error codes that say the credentials (or the bucket's policy) are what is wrong.
_CREDENTIAL_CODES = frozenset({"AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "Forbidden"})

T = TypeVar("T")

_TRANSIENT_CODES = {"SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling",
                    "ConditionalRequestConflict", "RequestTimeTooSkewed", "ClientDisconnected"}


def answer_text(e: BaseException | None) -> str:
    """A botocore error in one line, without botocore's retry count: newer releases (1.44) put "(reached max
    retries: 0)" into every client error, though the store turns botocore's retries off and retries by itself,
    saying how often where it matters."""
    return re.sub(r" \(reached max retries: \d+\)", "", str(e))


def transient(code: str, status: int) -> bool:
    """Whether an S3 error answer (its error code and HTTP status) is worth trying again.

    Throttling, timeouts and 5xx (but 501, a request the service does not implement), and MinIO's
    ``ClientDisconnected`` (HTTP 499): MinIO answers it for the requests it abandons while it shuts down.
    Seen on the project's cluster when the MinIO pod was deleted under the controller (tests/cluster/
    test_replicas.py): the controller answered 500 for a disruption that a retry would have committed.
    """
    return code in _TRANSIENT_CODES or status in (429, 499) or (status >= 500 and status != 501)


_SESSION_LOCK = threading.Lock()
_SESSION: list[Any] = []


def _client(**kwargs: Any) -> Any:
    """A new S3 client from one shared session: building a session re-reads botocore's service models
    (~0.3 s), and sessions are not thread-safe, so clients are created under a lock."""
    boto3, _ = _boto3()
    with _SESSION_LOCK:
        if not _SESSION:
            _SESSION.append(boto3.session.Session())
        return _SESSION[0].client("s3", **kwargs)


def _boto3() -> Any:
    try:
        import boto3
        import botocore.config
        import botocore.exceptions
    except ImportError as e:  # the cluster extra is not installed
        raise ImportError("the S3 store needs boto3: pip install 'alas-argo[cluster]'") from e
    return boto3, botocore


class S3Store(Store):
    """A store in an S3 bucket, under an optional key prefix.

    Args:
        bucket: Bucket name; it must exist (the store never creates buckets behind the operator's back).
        endpoint: Endpoint URL (``http://127.0.0.1:9000`` for MinIO); None for AWS.
        prefix: Key prefix inside the bucket (no leading or trailing ``/`` needed).
        region: Region for the client.
        access_key: Access key id; None uses boto3's default credential chain.
        secret_key: Secret access key.
        connect_timeout: Seconds to wait for a connection.
        read_timeout: Seconds to wait for a response.
        max_retries: Retries of a transient failure before giving up with StoreUnavailable.
        backoff: Base delay in seconds; attempt ``n`` waits about ``backoff * 2**n`` (jittered, capped 5 s).
        sleep: Injected sleep, so tests can observe the backoff without waiting for it.
    """

    kind = "s3"

    def __init__(self, *, bucket: str, endpoint: str | None = None, prefix: str = "", region: str = "us-east-1",
                 access_key: str | None = None, secret_key: str | None = None, connect_timeout: float = 3.0,
                 read_timeout: float = 10.0, max_retries: int = 4, backoff: float = 0.1,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        _, botocore = _boto3()
        register_secret(secret_key)  # scrubbed from every printed line and stored event
        self._errors = botocore.exceptions
        self.bucket = bucket
        self.endpoint = endpoint
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.max_retries = max_retries
        self.backoff = backoff
        self._sleep = sleep
        self.location = f"s3://{bucket}/{self.prefix}" + (f" at {endpoint}" if endpoint else "")
        config = botocore.config.Config(connect_timeout=connect_timeout, read_timeout=read_timeout,
                                        retries={"total_max_attempts": 1}, s3={"addressing_style": "path"})
        try:
            self._client = _client(
                endpoint_url=endpoint, region_name=region, aws_access_key_id=access_key,
                aws_secret_access_key=secret_key, config=config)
        except botocore.exceptions.BotoCoreError as e:  # a bad region, one key of a pair: before any request
            raise StoreError(f"cannot set up the S3 client: {e}", where=self.location) from e
        self._sent = 0
        self._sent_lock = threading.Lock()
        # Every HTTP request this client puts on the wire (retries included): the cost figure of
        # `alas bench open`, counted where botocore sends, so no request can be missed or double-counted.
        self._client.meta.events.register("before-send.s3", self._count_request)

    def where(self, key: str) -> str:
        """The object's own address, ``s3://<bucket>/<prefix><key>``, then the endpoint (``<location>/<key>`` put
        the key after the endpoint, where it read as a URL the object is not at)."""
        return f"s3://{self.bucket}/{self.prefix}{key}" + (f" at {self.endpoint}" if self.endpoint else "")

    def _count_request(self, **_: Any) -> None:
        with self._sent_lock:
            self._sent += 1

    @property
    def requests_sent(self) -> int:
        """HTTP requests this store's client has sent so far (each retry counts)."""
        with self._sent_lock:
            return self._sent

    @classmethod
    def from_settings(cls, settings: StoreSettings, **kwargs: Any) -> S3Store:
        """Build the store from the ``store`` group of the settings (extra keyword arguments override)."""
        access = settings.s3_access_key.get_secret_value() if settings.s3_access_key else None
        secret = settings.s3_secret_key.get_secret_value() if settings.s3_secret_key else None
        if (access is None) != (secret is None):
            # boto3 takes explicit keys only as a pair; one alone is a PartialCredentialsError from inside its
            # client constructor. Checked here, after the conventional AWS_* variables filled in what they could.
            given, missing = ("s3_access_key", "s3_secret_key") if secret is None else ("s3_secret_key",
                                                                                        "s3_access_key")
            raise InputError(f"store.{given} is set but store.{missing} is not: give both S3 keys, or neither "
                             "to use boto3's default credential chain", where=f"ALAS_STORE__{missing.upper()}")
        params: dict[str, Any] = dict(
            bucket=settings.s3_bucket, endpoint=settings.s3_endpoint, prefix=settings.s3_prefix,
            region=settings.s3_region, access_key=access, secret_key=secret,
            connect_timeout=settings.connect_timeout, read_timeout=settings.read_timeout,
            max_retries=settings.max_retries)
        params.update(kwargs)
        return cls(**params)

    # -- the error boundary ------------------------------------------------------------------------------

    def _call(self, what: str, key: str, fn: Callable[[], T]) -> T:
        """Run one S3 request, retrying transient failures with backoff, translating the rest."""
        e_mod = self._errors
        last: Exception | None = None
        attempt, reconnected = 0, False
        while attempt <= self.max_retries:
            if attempt:
                delay = min(5.0, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
                self._sleep(delay)
            attempt += 1
            try:
                return fn()
            except (e_mod.HTTPClientError, e_mod.ConnectionError) as e:
                last = e
            except e_mod.ClientError as e:
                code = str(e.response.get("Error", {}).get("Code", ""))
                status = int(e.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
                if what != "head" and code in ("", str(status)):
                    # An error with no S3 error document came from something that is not S3 (a HEAD never has
                    # one): on a kept-alive connection, that peer answers every later request too. Seen on the
                    # project's cluster: a connection opened to a Service before kube-proxy routed it reached a
                    # transparent proxy whose empty 404s kept the controller unready for good. Drop the pooled
                    # connections; a new one is routed afresh, and this request gets one more try on it.
                    self._drop_connections()
                    if not reconnected:
                        reconnected = True
                        attempt -= 1
                        continue
                if transient(code, status):
                    last = e
                    continue
                raise self._permanent(what, key, code, status, e) from e
            except (e_mod.NoCredentialsError, e_mod.PartialCredentialsError) as e:
                raise StoreError("no S3 credentials: set ALAS_STORE__S3_ACCESS_KEY and ALAS_STORE__S3_SECRET_KEY "
                                 "(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", where=self.location) from e
            except e_mod.BotoCoreError as e:  # a bad endpoint URL, an unsigned request: retrying cannot help
                raise StoreError(f"S3 {what} failed: {answer_text(e)}", where=self.endpoint or "s3") from e
        raise StoreUnavailable(
            f"S3 {what} failed after {self.max_retries + 1} attempts: {answer_text(last)}",
            where=self.endpoint or "s3") from last

    def _drop_connections(self) -> None:
        """Close every pooled connection of this store's client; the next request connects anew (botocore has
        no public call for it: its endpoint's HTTP session clears its pools on close and builds new ones)."""
        session = getattr(getattr(self._client, "_endpoint", None), "http_session", None)
        if session is not None:
            session.close()

    def _permanent(self, what: str, key: str, code: str, status: int, e: Exception) -> StoreError:
        if code == "NoSuchBucket":
            return StoreError(f"bucket {self.bucket!r} does not exist", where=self.endpoint or "s3")
        if code == "NotImplemented" or status == 501:
            # Older MinIO releases and some S3 clones reject If-None-Match; without it appends could
            # silently overwrite each other, so refuse loudly instead of degrading.
            return StoreError(f"the S3 service does not implement this request ({what}); the log needs "
                              "conditional writes (If-None-Match: *)", where=self.endpoint or "s3")
        # A missing key is S3's NoSuchKey (a HEAD has no body, so only its status says it). Any other 404 is
        # not a missing record: read as one, a misrouted endpoint would make a stored run look empty.
        if code == "NoSuchKey" or (what == "head" and status == 404):
            return RecordNotFound("no such record", where=self.where(key))
        if status == 404:
            return StoreError(f"S3 {what} answered 404 without S3's NoSuchKey ({code or 'no code'}): is "
                              f"{self.endpoint or 'the endpoint'} an S3 service, and does the bucket exist there?",
                              where=self.where(key))
        # A refusal of the credentials (a HEAD's 403 has no body to say so) points at the two settings to check.
        hint = ("; check the S3 credentials (ALAS_STORE__S3_ACCESS_KEY / ALAS_STORE__S3_SECRET_KEY, or "
                "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and the bucket's policy"
                if status == 403 or code in _CREDENTIAL_CODES else "")
        return StoreError(f"S3 {what} refused ({code or status}): {answer_text(e)}{hint}", where=self.where(key))

    # -- the interface -----------------------------------------------------------------------------------

    def put_if_absent(self, *, key: str, data: bytes) -> bool:
        """Conditional create (``If-None-Match: *``); False on ``412 PreconditionFailed``.

        A retried request whose first response was lost (a read timeout) may have created the object
        itself, and then meets its own 412; so on 412 the existing object is compared with ``data`` and
        identical bytes count as created, or a writer would append its own event twice.
        """
        full = self.prefix + check_key(key)
        check_record_size(len(data), self.where(key))
        try:
            self._call("put", key, lambda: self._client.put_object(
                Bucket=self.bucket, Key=full, Body=data, IfNoneMatch="*"))
        except StoreError as e:
            cause = e.__cause__
            if isinstance(cause, self._errors.ClientError) and (
                    cause.response.get("Error", {}).get("Code") == "PreconditionFailed"
                    or cause.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 412):
                try:
                    return self.get(key=key) == data
                except RecordNotFound:  # created then gone (nothing here deletes records): not ours
                    return False
            raise
        return True

    def put(self, *, key: str, data: bytes) -> None:
        """Unconditional put; S3 publishes an object atomically."""
        full = self.prefix + check_key(key)
        check_record_size(len(data), self.where(key))
        self._call("put", key, lambda: self._client.put_object(Bucket=self.bucket, Key=full, Body=data))

    def get(self, *, key: str) -> bytes:
        """The object's bytes; RecordNotFound when missing."""
        full = self.prefix + check_key(key)
        where = self.where(key)

        def fetch() -> bytes:
            answer = self._client.get_object(Bucket=self.bucket, Key=full)
            stream = answer["Body"]
            try:
                # The announced length first, so an oversized object is refused before any of it is read;
                # then the bounded read, should the answer carry more than it announced.
                announced = answer.get("ContentLength")
                check_record_size(int(announced or 0), where)
                return read_record(stream, where, expected=None if announced is None else int(announced))
            finally:
                stream.close()

        return self._call("get", key, fetch)

    def exists(self, *, key: str) -> bool:
        """Whether the object exists (a HEAD request)."""
        full = self.prefix + check_key(key)
        try:
            self._call("head", key, lambda: self._client.head_object(Bucket=self.bucket, Key=full))
        except RecordNotFound:
            return False
        return True

    def _pages(self, prefix: str, **params: Any) -> builtins.list[dict[str, Any]]:
        """Every page of a listing; ``prefix`` is the caller's (without the store's prefix), for errors to name."""
        def run() -> builtins.list[dict[str, Any]]:
            paginator = self._client.get_paginator("list_objects_v2")
            return list(paginator.paginate(Bucket=self.bucket, **params))

        return self._call("list", prefix, run)

    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        """Keys under ``prefix``, sorted (S3 lists in UTF-8 binary order, which is ours)."""
        params: dict[str, Any] = {"Prefix": self.prefix + check_key(prefix, prefix=True)}
        if start_after is not None:
            params["StartAfter"] = self.prefix + start_after
        keys = [obj["Key"][len(self.prefix):] for page in self._pages(prefix, **params)
                for obj in page.get("Contents", [])]
        return sorted(k for k in keys if is_key(k))  # an object under another name is not the log's

    def children(self, *, prefix: str) -> builtins.list[str]:
        """Immediate "directories" under ``prefix`` via a delimiter listing (no full walk)."""
        full = self.prefix + check_key(prefix, prefix=True)
        pages = self._pages(prefix, Prefix=full, Delimiter="/")
        names = (p["Prefix"][len(full):].rstrip("/") for page in pages for p in page.get("CommonPrefixes", []))
        return sorted(n for n in names if is_key(n))
