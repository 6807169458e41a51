"""Failure behaviour of the S3 backend against the real loopback server (boto3 over HTTP, nothing mocked)."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading

import pytest

from alas_argo.errors import StoreError, StoreUnavailable
from alas_argo.log.event import Event
from alas_argo.log.execution_log import ExecutionLog, event_key
from alas_argo.log.s3_store import S3Store, transient
from alas_argo.log.store import RecordNotFound
from tests.s3server import LoopbackS3, free_port


def test_endpoint_down_retries_with_backoff_then_names_the_endpoint() -> None:
    delays: list[float] = []
    port = free_port()
    store = S3Store(bucket="b", endpoint=f"http://127.0.0.1:{port}", access_key="a", secret_key="b",
                    connect_timeout=0.5, max_retries=3, backoff=0.1, sleep=delays.append)
    with pytest.raises(StoreUnavailable) as info:
        store.put_if_absent(key="runs/r/events/00000000.json", data=b"x")
    assert info.value.exit_code == 75 and info.value.transient
    assert f"127.0.0.1:{port}" in str(info.value) and "4 attempts" in str(info.value)
    assert isinstance(info.value.__cause__, Exception)  # the botocore error is chained, not lost
    # three retries, exponential: each delay is the base doubled, jittered into [50%, 100%]
    assert len(delays) == 3
    for n, d in enumerate(delays):
        assert 0.05 * 2**n <= d <= 0.1 * 2**n


def test_outage_mid_run_leaves_nothing_half_written() -> None:
    server = LoopbackS3().start()
    try:
        bucket = server.new_bucket()
        kwargs = server.store_kwargs(bucket)
        log = ExecutionLog(S3Store(**kwargs, max_retries=1, backoff=0.01, connect_timeout=0.5), "outage")
        for i in range(3):
            log.append("node.succeeded", payload={"i": i})
        server.stop()
        with pytest.raises(StoreUnavailable):
            log.append("node.succeeded", payload={"i": 3})
        with pytest.raises(StoreUnavailable):
            log.commit_plan({"instance": "x", "makespan": 1, "operations": []})
        server.start()  # same port; moto keeps its state per process
        fresh = ExecutionLog(S3Store(**kwargs), "outage")
        assert [e.payload["i"] for e in fresh.events()] == [0, 1, 2]
        assert fresh.store.list(prefix="runs/outage/plans/") == []
        assert fresh.verify().ok
        # the interrupted writer carries on where it stopped
        log.append("node.succeeded", payload={"i": 3})
        assert [e.seq for e in fresh.events()] == [0, 1, 2, 3]
        assert fresh.verify().ok
    finally:
        server.stop()


def test_missing_bucket_is_a_permanent_error_naming_it(s3_server: LoopbackS3) -> None:
    store = S3Store(**s3_server.store_kwargs("no-such-bucket-here"))
    for call in (lambda: store.put_if_absent(key="a", data=b"x"), lambda: store.get(key="a"),
                 lambda: store.list(prefix="runs/")):
        with pytest.raises(StoreError) as info:
            call()
        assert not isinstance(info.value, StoreUnavailable)
        assert "no-such-bucket-here" in str(info.value)


def test_lost_conditional_race_between_two_clients(s3_server: LoopbackS3, s3_bucket: str) -> None:
    a = S3Store(**s3_server.store_kwargs(s3_bucket))
    b = S3Store(**s3_server.store_kwargs(s3_bucket))
    assert a.put_if_absent(key="k.json", data=b"from a")
    assert not b.put_if_absent(key="k.json", data=b"from b")  # 412 PreconditionFailed -> lost
    assert b.get(key="k.json") == b"from a"
    # a retried request that meets its own earlier success counts as created, not lost
    assert a.put_if_absent(key="k.json", data=b"from a")


def test_append_loser_rereads_and_lands_after_the_winner(s3_server: LoopbackS3, s3_bucket: str) -> None:
    kwargs = s3_server.store_kwargs(s3_bucket)
    slow = ExecutionLog(S3Store(**kwargs), "race")
    slow.append("run.started")
    fast = ExecutionLog(S3Store(**kwargs), "race")
    fast.append("node.started", node_id="fast")  # takes seq 1 behind slow's back
    event = slow.append("node.started", node_id="slow")  # tries seq 1, loses (412), re-reads, takes 2
    assert event.seq == 2 and event.prev_hash == fast.events()[1].hash
    assert [e.node_id for e in slow.events()] == [None, "fast", "slow"]
    assert slow.verify().ok


def test_edited_event_on_s3_is_named_by_verify(s3_store: S3Store) -> None:
    log = ExecutionLog(s3_store, "tamper")
    for i in range(4):
        log.append("node.succeeded", payload={"makespan": 100 + i})
    key = event_key("tamper", 2)
    doc = Event.model_validate_json(s3_store.get(key=key)).model_dump(mode="json")
    doc["payload"]["makespan"] = 1  # an edit that keeps the record well-formed
    s3_store.put(key=key, data=Event.model_validate(doc).to_bytes())
    report = log.verify()
    assert not report.ok
    assert report.first_bad is not None and report.first_bad.seq == 2
    assert report.first_bad.code == "bad_hash" and report.first_bad.key == key
    s3_store.put(key=event_key("tamper", 1), data=b"{not json")
    assert log.verify().first_bad.code == "unreadable"  # type: ignore[union-attr]


def test_error_translation_of_responses_moto_never_sends() -> None:
    """5xx is retried then StoreUnavailable; 501 (no conditional writes) is a permanent, explicit error."""
    from botocore.exceptions import ClientError

    store = S3Store(bucket="b", endpoint="http://127.0.0.1:1", access_key="a", secret_key="b", max_retries=2,
                    sleep=lambda _d: None)
    calls: list[int] = []

    def fail(status: int, code: str) -> None:
        calls.append(status)
        raise ClientError({"Error": {"Code": code, "Message": "x"}, "ResponseMetadata": {"HTTPStatusCode": status}},
                          "PutObject")

    with pytest.raises(StoreUnavailable):
        store._call("put", "k", lambda: fail(503, "SlowDown"))
    assert calls == [503, 503, 503]
    calls.clear()
    with pytest.raises(StoreError, match="conditional writes") as info:
        store._call("put", "k", lambda: fail(501, "NotImplemented"))
    assert calls == [501] and not isinstance(info.value, StoreUnavailable)


def test_minio_abandoning_a_request_as_it_shuts_down_is_retried_not_refused() -> None:
    """MinIO answers ClientDisconnected (HTTP 499) for the requests it abandons while it shuts down. Seen on the
    cluster with the MinIO pod deleted under the controller: read as a refusal, the controller answered 500 for
    a disruption that the next try committed. It is retried, then StoreUnavailable (the controller's 503)."""
    from botocore.exceptions import ClientError

    store = S3Store(bucket="b", endpoint="http://127.0.0.1:1", access_key="a", secret_key="b", max_retries=2,
                    sleep=lambda _d: None)
    answers = [499, 499]

    def shutting_down() -> str:
        if answers:
            status = answers.pop()
            raise ClientError({"Error": {"Code": "ClientDisconnected", "Message": "Client disconnected before "
                                         "response was ready"}, "ResponseMetadata": {"HTTPStatusCode": status}},
                              "PutObject")
        return "stored"

    assert store._call("put", "k", shutting_down) == "stored"
    answers.extend([499] * 3)
    with pytest.raises(StoreUnavailable, match="after 3 attempts"):
        store._call("put", "k", shutting_down)
    assert transient("ClientDisconnected", 499) and transient("", 499)
    assert not transient("AccessDenied", 403) and not transient("NotImplemented", 501)


class _NotS3(http.server.BaseHTTPRequestHandler):
    """An HTTP server that is not S3 (a misrouted Service, a proxy's error page): 404 text for everything."""

    def _not_found(self) -> None:
        body = b"404 page not found\n"
        self.send_response(404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_HEAD = do_PUT = _not_found

    def log_message(self, *_args: object) -> None:
        pass


def test_a_404_that_is_not_s3s_no_such_key_is_an_error_not_an_empty_run() -> None:
    """Only S3's NoSuchKey (or a HEAD's 404) means a missing record; a bare 404 from something that is not S3
    must not make a stored run read as empty (its head "missing") or a listing read as "no such record"."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _NotS3)
    # A short poll, so shutdown() below returns in 0.05 s instead of up to serve_forever's default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        store = S3Store(bucket="alas", endpoint=endpoint, access_key="a", secret_key="b", max_retries=0)
        for read in (lambda: store.get(key=event_key("r", 0)), lambda: store.list(prefix="runs/")):
            with pytest.raises(StoreError, match="404 without S3's NoSuchKey") as info:
                read()
            assert not isinstance(info.value, RecordNotFound) and endpoint in str(info.value)
        with pytest.raises(StoreError, match="NoSuchKey"):
            ExecutionLog(store, "r").head()
        assert store.exists(key=event_key("r", 0)) is False  # a HEAD carries no code: its 404 is all there is
    finally:
        server.shutdown()
        server.server_close()


class _FirstConnectionElsewhere:
    """A TCP front for the loopback S3 whose first connection reaches something that is not S3 and stays open:
    what a client meets when it connects to a Kubernetes Service before kube-proxy routes it (seen on the
    project's cluster: a transparent proxy, ``Server: keryx``, answered every request on that kept-alive
    connection with an empty 404, and the controller stayed unready for good while a fresh process in the
    same pod listed the bucket). Every later connection is relayed to S3."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            handler = self._not_s3 if self.connections == 1 else self._relay
            threading.Thread(target=handler, args=(conn,), daemon=True).start()

    @staticmethod
    def _not_s3(conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            while True:
                length = 0
                line = reader.readline()
                if not line:
                    return
                while (header := reader.readline()) not in (b"\r\n", b""):
                    if header.lower().startswith(b"content-length:"):
                        length = int(header.split(b":")[1])
                reader.read(length)
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nServer: keryx\r\nContent-Length: 0\r\n\r\n")

    def _relay(self, conn: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.target_port))

        def pipe(a: socket.socket, b: socket.socket) -> None:
            with contextlib.suppress(OSError):
                while data := a.recv(65536):
                    b.sendall(data)
            for end in (a, b):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

        back = threading.Thread(target=pipe, args=(upstream, conn), daemon=True)
        back.start()
        pipe(conn, upstream)
        back.join(timeout=5)
        conn.close()
        upstream.close()

    def close(self) -> None:
        self.listener.close()


def test_a_kept_alive_connection_to_something_that_is_not_s3_is_dropped_and_the_next_reaches_s3(
        s3_server: LoopbackS3, s3_bucket: str) -> None:
    front = _FirstConnectionElsewhere(s3_server.port)
    try:
        kwargs = {**s3_server.store_kwargs(s3_bucket), "endpoint": f"http://127.0.0.1:{front.port}"}
        store = S3Store(**kwargs, max_retries=0)
        S3Store(**s3_server.store_kwargs(s3_bucket)).put(key="runs/r/events/00000000.json", data=b"{}")
        # The first answer is not S3's: the pooled connection goes, the same call reconnects and lists.
        for _ in range(3):
            assert store.list(prefix="runs/") == ["runs/r/events/00000000.json"]
        assert store.get(key="runs/r/events/00000000.json") == b"{}"
        assert front.connections >= 2  # the first, kept alive by the peer that is not S3, was given up
    finally:
        front.close()
