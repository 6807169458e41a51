"""The log's bucket, created by the controller when it starts (``alas controller --create-bucket``).

Why here and not in a Helm hook: the controller is ready only once its store answers, so a post-install
Job creating the bucket deadlocked ``helm install --wait`` (Helm runs post-install hooks after the wait)
and GitOps tools that wait for health before running hooks. The controller creates the bucket itself,
idempotently, retrying in the background until the store answers; ``/healthz`` answers meanwhile, and
``/readyz`` turns ready as soon as the bucket exists. The log's S3 store never creates buckets: this is the
one explicit place that does, and only when asked.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from alas_argo.errors import StoreError, StoreUnavailable
from alas_argo.log.s3_store import answer_text, transient
from alas_argo.settings import StoreSettings

__all__ = ["create_bucket", "create_bucket_when_reachable"]

log = logging.getLogger(__name__)
_MISSING = {"404", "NoSuchBucket", "NotFound"}
_ALREADY_OURS = {"BucketAlreadyOwnedByYou"}


def _client(settings: StoreSettings) -> Any:
    try:
        import boto3
        import botocore.config
    except ImportError:  # pragma: no cover - the cluster extra brings boto3
        raise StoreError("creating the bucket needs boto3: pip install 'alas-argo[cluster]'") from None
    access = settings.s3_access_key.get_secret_value() if settings.s3_access_key else None
    secret = settings.s3_secret_key.get_secret_value() if settings.s3_secret_key else None
    config = botocore.config.Config(connect_timeout=settings.connect_timeout, read_timeout=settings.read_timeout,
                                    retries={"total_max_attempts": 1}, s3={"addressing_style": "path"})
    return boto3.session.Session().client("s3", endpoint_url=settings.s3_endpoint, region_name=settings.s3_region,
                                          aws_access_key_id=access, aws_secret_access_key=secret, config=config)


def _translate(e: Exception, what: str, where: str) -> StoreError | StoreUnavailable:
    """A botocore failure as the project's error: StoreUnavailable when trying again may help."""
    import botocore.exceptions as errors

    response = getattr(e, "response", None)
    if response is None:
        if isinstance(e, (errors.HTTPClientError, errors.ConnectionError)):  # no answer: refused, DNS, timeout
            return StoreUnavailable(f"{what}: the store did not answer ({type(e).__name__})", where=where)
        if isinstance(e, (errors.NoCredentialsError, errors.PartialCredentialsError)):  # nothing was sent
            return StoreError(f"{what}: no S3 credentials: set ALAS_STORE__S3_ACCESS_KEY and "
                              "ALAS_STORE__S3_SECRET_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", where=where)
        return StoreError(f"{what} failed: {answer_text(e)}", where=where)  # refused before sending: a bad bucket name
    code = str(response.get("Error", {}).get("Code", ""))
    status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
    if transient(code, status) or status == 501:  # bucket creation has always retried every 5xx
        return StoreUnavailable(f"{what}: the store answered {code or status}", where=where)
    return StoreError(f"{what} refused ({code or status}): {answer_text(e)}", where=where)


def create_bucket(settings: StoreSettings) -> bool:
    """Create the store's bucket unless it exists.

    Returns:
        True when this call created it, False when it was there already.

    Raises:
        StoreUnavailable: The store did not answer, or answered a transient error.
        StoreError: The store refused (credentials, policy, a name taken by someone else), or the request
            could not be made (no credentials set, a bucket name botocore refuses).
    """
    import botocore.exceptions

    client, bucket = _client(settings), settings.s3_bucket
    where = f"s3://{bucket}" + (f" at {settings.s3_endpoint}" if settings.s3_endpoint else "")
    failures = (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError)
    try:
        client.head_bucket(Bucket=bucket)
        return False
    except botocore.exceptions.ClientError as e:
        if str(e.response.get("Error", {}).get("Code", "")) not in _MISSING:
            raise _translate(e, "checking the bucket", where) from e
    except failures as e:
        raise _translate(e, "checking the bucket", where) from e
    # us-east-1 is S3's default location and refuses to be named as a constraint.
    location = {} if settings.s3_region == "us-east-1" else {
        "CreateBucketConfiguration": {"LocationConstraint": settings.s3_region}}
    try:
        client.create_bucket(Bucket=bucket, **location)
    except botocore.exceptions.ClientError as e:
        if str(e.response.get("Error", {}).get("Code", "")) in _ALREADY_OURS:
            return False  # another replica got there first
        raise _translate(e, "creating the bucket", where) from e
    except failures as e:
        raise _translate(e, "creating the bucket", where) from e
    return True


def create_bucket_when_reachable(settings: StoreSettings, stop: threading.Event, *, first_delay: float = 1.0,
                                 max_delay: float = 30.0) -> bool:
    """:func:`create_bucket`, retried with capped exponential backoff until it succeeds or ``stop`` is set.

    Meant for a background thread of the controller. A refusal is retried too, logged as an error each
    time: a store that is still starting can refuse what it will accept seconds later (MinIO answers
    requests before its credentials are loaded), and a refusal an operator fixes (a Secret, a policy)
    should not need a restart. The controller stays unready meanwhile, and its log says why.

    Returns:
        True once the bucket exists; False when ``stop`` was set first.
    """
    delay = first_delay
    while not stop.is_set():
        try:
            created = create_bucket(settings)
        except StoreUnavailable as e:
            log.info("bucket %s not created yet (%s); trying again in %gs", settings.s3_bucket, e, delay)
        except StoreError as e:
            log.error("cannot create bucket %s: %s; trying again in %gs", settings.s3_bucket, e, delay)
        else:
            log.info("bucket %s %s", settings.s3_bucket, "created" if created else "exists")
            return True
        stop.wait(delay)
        delay = min(max_delay, delay * 2)
    return False
