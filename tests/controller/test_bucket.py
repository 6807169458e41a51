"""The controller creates the log's bucket itself (issue 14, point 5): no install hook to wait for, so
`helm install --wait` cannot deadlock on the controller's readiness, which needs the bucket."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

from alas_argo.controller import RepairService, create_bucket, create_bucket_when_reachable, serve
from alas_argo.errors import StoreError, StoreUnavailable
from alas_argo.log.s3_store import S3Store
from alas_argo.settings import StoreSettings
from tests.s3server import LoopbackS3, free_port


def settings_for(server: LoopbackS3, bucket: str, **changes: object) -> StoreSettings:
    kw = server.store_kwargs(bucket)
    return StoreSettings.model_validate({
        "kind": "s3", "s3_endpoint": kw["endpoint"], "s3_bucket": bucket, "s3_region": kw["region"],
        "s3_access_key": kw["access_key"], "s3_secret_key": kw["secret_key"], "connect_timeout": 1,
        "read_timeout": 2, **changes})


def bucket_exists(server: LoopbackS3, bucket: str) -> bool:
    return bucket in {b["Name"] for b in server.client().list_buckets()["Buckets"]}


def fresh_name() -> str:
    return f"alas-new-{uuid.uuid4().hex[:10]}"


def test_create_bucket_is_idempotent(s3_server: LoopbackS3) -> None:
    name = fresh_name()
    assert not bucket_exists(s3_server, name)
    assert create_bucket(settings_for(s3_server, name)) is True
    assert bucket_exists(s3_server, name)
    assert create_bucket(settings_for(s3_server, name)) is False  # there already: nothing to do


def test_an_unreachable_store_is_transient() -> None:
    with pytest.raises(StoreUnavailable):
        create_bucket(StoreSettings.model_validate({"kind": "s3", "s3_endpoint": f"http://127.0.0.1:{free_port()}",
                                                    "s3_access_key": "a", "s3_secret_key": "b",
                                                    "connect_timeout": 0.5, "read_timeout": 0.5}))


def test_an_invalid_name_is_refused_for_good(s3_server: LoopbackS3) -> None:
    with pytest.raises(StoreError) as refused:
        create_bucket(settings_for(s3_server, "ab"))
    assert not isinstance(refused.value, StoreUnavailable)


def test_a_refusal_is_logged_and_tried_again_until_stopped(s3_server: LoopbackS3) -> None:
    """A store still starting can refuse what it accepts seconds later: the background creation logs each
    refusal as an error and keeps trying (the controller stays unready) instead of giving up for good."""
    stop, refusals = threading.Event(), []

    class StopAfterThree(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            refusals.append(record)
            if len(refusals) == 3:
                stop.set()

    logger, handler = logging.getLogger("alas_argo.controller.bucket"), StopAfterThree()
    logger.addHandler(handler)
    try:
        assert create_bucket_when_reachable(settings_for(s3_server, "ab"), stop, first_delay=0.01) is False
    finally:
        logger.removeHandler(handler)
    assert len(refusals) == 3
    assert all(r.levelno == logging.ERROR and "cannot create bucket ab" in r.getMessage() for r in refusals)


def test_readiness_follows_the_bucket(s3_server: LoopbackS3) -> None:
    """/readyz answers 503 while the bucket is missing and 200 once the controller created it."""
    name = fresh_name()
    store = S3Store(**s3_server.store_kwargs(name), backoff=0.01, max_retries=0)
    server = serve(RepairService(store), "127.0.0.1", 0, token="t" * 20)
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with pytest.raises(urllib.error.HTTPError) as unready:
            urllib.request.urlopen(f"{base}/readyz", timeout=10)
        body = unready.value.read().decode()
        assert unready.value.code == 503 and "does not exist" in body and name not in body
        unready.value.close()
        assert create_bucket_when_reachable(settings_for(s3_server, name), threading.Event()) is True
        with urllib.request.urlopen(f"{base}/readyz", timeout=10) as resp:
            assert resp.status == 200
    finally:
        server.shutdown()
        server.server_close()


class _Seen(logging.Handler):
    """Sets ``event`` when a record containing ``text`` is logged."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text, self.event = text, threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.event.set()


def test_the_store_coming_up_late_is_waited_for() -> None:
    """The store is down when the controller starts (MinIO still starting): the background creation keeps
    trying, and succeeds once it answers."""
    late = LoopbackS3()
    settings = settings_for(late, fresh_name())
    seen = _Seen("not created yet")
    logger = logging.getLogger("alas_argo.controller.bucket")
    logger.addHandler(seen)
    logger.setLevel(logging.INFO)
    stop = threading.Event()
    results: list[bool] = []
    worker = threading.Thread(target=lambda: results.append(
        create_bucket_when_reachable(settings, stop, first_delay=0.05, max_delay=0.2)))
    try:
        worker.start()
        assert seen.event.wait(timeout=60), "no failed attempt against the stopped store"
        late.start()
        worker.join(timeout=60)
        assert results == [True]
        assert bucket_exists(late, settings.s3_bucket)
    finally:
        stop.set()
        worker.join(timeout=10)
        logger.removeHandler(seen)
        late.stop()


@pytest.mark.timeout(60)  # 5.2 s measured in the whole suite at load 5; loaded runs go past 3x
def test_alas_controller_create_bucket_turns_ready(s3_server: LoopbackS3, tmp_path: Path) -> None:
    """The command the chart runs: `alas controller --create-bucket` against a store without the bucket."""
    name = fresh_name()
    kw = s3_server.store_kwargs(name)
    env = {**os.environ, "ALAS_CONTROLLER__TOKEN": "t0k3n-t0k3n-t0k3n", "ALAS_STORE__KIND": "s3",
           "ALAS_STORE__S3_ENDPOINT": kw["endpoint"], "ALAS_STORE__S3_BUCKET": name,
           "AWS_ACCESS_KEY_ID": kw["access_key"], "AWS_SECRET_ACCESS_KEY": kw["secret_key"],
           "AWS_DEFAULT_REGION": kw["region"], "ALAS_STORE__MAX_RETRIES": "0"}
    script = "import sys; from alas_argo.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", script, "controller", "--port", "0", "--create-bucket"],
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stderr is not None
        line = ""
        while "listening on" not in line:
            line = proc.stderr.readline()
            assert line, "the controller exited before listening"
        base = line.split("listening on ", 1)[1].split()[0]
        ready = False
        for _ in range(600):  # until ready, bounded by attempts, not by a time measurement
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=10) as resp:
                    ready = resp.status == 200
            except urllib.error.HTTPError as e:
                e.close()
            if ready:
                break
            time.sleep(0.1)
        assert ready and bucket_exists(s3_server, name)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()


def test_create_bucket_needs_the_s3_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.cli import main

    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", "t0k3n-t0k3n-t0k3n")
    assert main(["controller", "--port", "0", "--store", "fs", "--root", str(tmp_path), "--create-bucket"]) == 2
    assert "--create-bucket needs the s3 store" in capsys.readouterr().err
