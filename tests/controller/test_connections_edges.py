"""The selector front's own promises (``alas_argo.controller.connections``), with a recording handler instead of
the HTTP one: when a request counts as whole, that it reaches a worker once and whole however it is split, the
total deadline (also for a client that never reads its answer), the connection cap counting the requests being
handled, and what shutting down closes. Nothing here measures time: a deadline is shown by the connection being
closed without an answer, a wait is bounded by a socket timeout or by a number of polls."""

from __future__ import annotations

import contextlib
import errno
import logging
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from alas_argo.controller.connections import MAX_HEADER_BYTES, ConnectionFront, PendingRequest

HEAD = b"POST /runs/r/disruptions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n"
#: A whole request and what the recording handler answers to it (its length).
REQUEST, ANSWER = HEAD + b"12345", str(len(HEAD) + 5).encode()


# ---- when a request is whole -------------------------------------------------------------------------------

def _complete(data: bytes, max_body_bytes: int = 100) -> bool:
    with socket.socket() as sock:
        return PendingRequest(sock, ("127.0.0.1", 1), 0.0, bytearray(data)).complete(max_body_bytes)


@pytest.mark.parametrize(("data", "whole"), [
    (b"GET / HTTP/1.1\r\nHost: x\r\n", False),  # the head is not over
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", True),  # no Content-Length: no body to wait for
    (b"\r\n\r\n", True),  # an empty head is whole too (the handler answers it 400)
    (HEAD + b"1234", False),
    (HEAD + b"12345", True),
    (HEAD + b"123456", True),  # bytes after the body (a pipelined request) do not hold it back
    (b"POST / HTTP/1.1\r\ncontent-LENGTH:\t5 \r\nHost: x\r\n\r\n1234", False),  # any case, blanks around the value
    (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n1234", False),  # the last header line
    (b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n\r\n\r\nx", True),  # a body that holds a blank line
    (b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n\r\n\r\n", False),
    (b"POST / HTTP/1.1\r\nX-Content-Length: 5\r\n\r\n", True),  # another header that ends in the name
    (b"POST / HTTP/1.1\r\nHost: x\r\n\r\nContent-Length: 5\r\n\r\n", True),  # in the body, not a header
    (b"POST / HTTP/1.1\r\nContent-Length: 1234567890123\r\n\r\n", True),  # not a number it reads: the handler's 400
], ids=["open-head", "no-length", "empty-head", "body-short", "body-exact", "body-and-more", "case-and-blanks",
        "length-last", "blank-line-in-body", "blank-line-in-body-short", "other-header", "length-in-body",
        "length-too-long"])
def test_a_request_is_whole_once_its_head_and_announced_body_are_in(data: bytes, whole: bool) -> None:
    assert _complete(data) is whole


def test_a_body_over_the_limit_is_not_waited_for() -> None:
    # The handler answers 413 from the head alone; a body at the limit is waited for.
    head = b"POST / HTTP/1.1\r\nContent-Length: %d\r\n\r\n"
    assert _complete(head % 11, max_body_bytes=10) is True
    assert _complete(head % 10, max_body_bytes=10) is False
    assert _complete(head % 10 + b"x" * 10, max_body_bytes=10) is True


def test_a_head_past_the_limit_counts_as_whole() -> None:
    # The handler answers what it can of it (414, 431); a head at the limit may still end.
    assert _complete(b"G" * MAX_HEADER_BYTES) is False
    assert _complete(b"G" * (MAX_HEADER_BYTES + 1)) is True


# ---- a front with a recording handler ----------------------------------------------------------------------

class Recorder:
    """A handler that records each request it gets (its bytes and the worker's name) and answers with the
    request's length; ``block`` makes it wait for ``release`` first, ``fail`` makes it raise."""

    def __init__(self) -> None:
        self.requests: list[bytes] = []
        self.workers: list[str] = []
        self.started = threading.Semaphore(0)
        self.release = threading.Event()
        self.block = False
        self.fail = False
        self.reply: bytes | None = None

    def __call__(self, pending: PendingRequest) -> None:
        self.requests.append(bytes(pending.data))
        self.workers.append(threading.current_thread().name)
        self.started.release()
        if self.block:
            assert self.release.wait(timeout=30)
        if self.fail:
            raise RuntimeError("a handler bug")
        pending.sock.sendall(self.reply if self.reply is not None else str(len(pending.data)).encode())


class Served:
    """A :class:`ConnectionFront` serving a :class:`Recorder` on a loopback port from a thread."""

    def __init__(self, poll_interval: float = 0.05, handle: Callable[[PendingRequest], None] | None = None,
                 listener: socket.socket | None = None, **kwargs: Any) -> None:
        self.recorder = Recorder()
        self.listener = listener or socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        kwargs = {"deadline": 30.0, "max_body_bytes": 100, **kwargs}
        self.front = ConnectionFront(self.listener, handle or self.recorder, **kwargs)
        self.thread = threading.Thread(target=self.front.serve_forever, args=(poll_interval,), daemon=True)
        self.thread.start()

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def ask(self, data: bytes) -> bytes:
        """Send a request; everything the front answers before it closes the connection."""
        with self.connect() as sock:
            sock.sendall(data)
            return read_all(sock)

    def buffered(self) -> int:
        """Bytes the front holds of requests not yet whole."""
        return sum(len(p.data) for p in list(self.front._pending.values()))

    def stop(self) -> None:
        # A connection wakes the selector, which waits up to the poll interval otherwise.
        stopping = threading.Thread(target=self.front.shutdown)
        stopping.start()
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
        stopping.join(timeout=30)
        self.recorder.release.set()
        self.front.close()
        self.listener.close()
        self.thread.join(timeout=30)


def read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (an orderly close or a reset ends it)."""
    reply = b""
    try:
        while chunk := sock.recv(65536):
            reply += chunk
    except ConnectionResetError:
        pass
    return reply


def until(condition: Callable[[], bool], what: str, attempts: int = 3000) -> None:
    """Poll ``condition`` (bounded by a number of attempts, not by a time measurement)."""
    for _ in range(attempts):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"never: {what}")


@pytest.fixture
def serve_front() -> Iterator[Callable[..., Served]]:
    made: list[Served] = []

    def make(**kwargs: Any) -> Served:
        made.append(Served(**kwargs))
        return made[-1]

    yield make
    for served in made:
        served.stop()


def test_a_request_sent_in_pieces_reaches_the_handler_once_and_whole(serve_front: Callable[..., Served]) -> None:
    served = serve_front()
    request = HEAD + b"12345"
    pieces = [request[:10], request[10:len(HEAD) - 1], request[len(HEAD) - 1:len(HEAD) + 2], request[len(HEAD) + 2:]]
    with served.connect() as sock:
        sent = 0
        for piece in pieces[:-1]:
            sock.sendall(piece)
            sent += len(piece)
            until(lambda: served.buffered() == sent, f"{sent} bytes buffered")  # noqa: B023 - used at once
            assert served.recorder.requests == []  # not whole yet: no worker has it
        sock.sendall(pieces[-1])
        assert read_all(sock) == str(len(request)).encode()
    assert served.recorder.requests == [request]
    until(lambda: served.front.open_connections == 0, "the answered connection closed")


def test_a_client_gone_before_its_request_is_whole_is_forgotten(serve_front: Callable[..., Served]) -> None:
    served = serve_front(max_connections=1)
    with served.connect() as sock:
        sock.sendall(HEAD)
        until(lambda: served.buffered() == len(HEAD), "the head buffered")
    until(lambda: served.front.open_connections == 0, "the closed connection dropped")
    reset, head = served.connect(), HEAD.replace(b"Content-Length: 5", b"Content-Length: 4")
    reset.sendall(head)
    until(lambda: served.buffered() == len(head), "the head buffered")
    reset.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    reset.close()  # a reset, not an orderly close: nothing of it may pass for the 4 bytes of body awaited
    until(lambda: served.front.open_connections == 0, "the reset connection dropped")
    assert served.recorder.requests == []
    assert served.ask(REQUEST) == ANSWER  # its place (the cap is 1) is free again


def test_shutdown_wakes_the_loop_itself_instead_of_waiting_for_its_next_poll(
        serve_front: Callable[..., Served]) -> None:
    """No connection arrives to wake the selector here (Served.stop makes one; a replica being stopped has
    none): shutdown() must end a loop that polls once an hour. Before the wake-up pair, every stop of a
    controller waited out the poll of ControllerServer.start (0.2 s)."""
    served = serve_front(poll_interval=3600.0)
    assert served.ask(REQUEST) == ANSWER  # the loop is running, and goes back to waiting on its selector
    stopping = threading.Thread(target=served.front.shutdown, daemon=True)
    stopping.start()
    stopping.join(timeout=10)  # a bound on the wait, as the socket timeouts here are: far inside the hour
    assert not stopping.is_alive(), "shutdown() waited for the loop's next poll"
    served.thread.join(timeout=30)
    assert not served.thread.is_alive()


def test_a_request_not_whole_within_the_deadline_is_closed_unanswered(serve_front: Callable[..., Served],
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    # The poll interval is far longer than the socket's timeout: the front wakes for the deadline itself.
    served = serve_front(deadline=0.3, poll_interval=60.0)
    with caplog.at_level(logging.INFO, logger="alas_argo.controller.connections"), served.connect() as sock:
        sock.sendall(HEAD + b"12")
        assert read_all(sock) == b""
        client = sock.getsockname()
    until(lambda: served.front.open_connections == 0, "the expired connection dropped")
    assert served.recorder.requests == []
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "alas_argo.controller.connections"] == [
        (logging.INFO, f"request from {client!r} not complete after 0.3 s: connection closed")]
    assert served.ask(REQUEST) == ANSWER


def test_a_client_trickling_its_request_is_cut_off_too(serve_front: Callable[..., Served]) -> None:
    served = serve_front(deadline=0.3)
    with served.connect() as sock:
        for byte in HEAD[:-1] * 100:  # at a byte every 10 ms: the head would take minutes, never ending
            try:
                sock.sendall(bytes([byte]))
            except OSError:  # reset or broken pipe: the front closed the connection
                break
            time.sleep(0.01)
        else:
            pytest.fail("the trickling client was never cut off")
    assert served.recorder.requests == []


def test_the_selector_waits_for_the_first_deadline_and_expires_at_it() -> None:
    # On a front that is not serving, so that nothing else reads or drops the connections meanwhile; the
    # deadlines are hundreds of seconds apart, so that no pause of this process can change the answers.
    with socket.create_server(("127.0.0.1", 0)) as listener, socket.socket() as late, socket.socket() as soon:
        front = ConnectionFront(listener, Recorder(), deadline=1.0, max_body_bytes=10)
        assert front._wait(poll_interval=5.0) == 5.0  # nothing waiting
        now = time.monotonic()
        for sock, deadline in ((late, now + 1000.0), (soon, now + 500.0)):
            front._pending[sock] = PendingRequest(sock, ("127.0.0.1", 1), deadline)
            front._selector.register(sock, selectors.EVENT_READ)
        # nothing due: the selector waits the poll interval, or up to the first deadline
        assert front._wait(poll_interval=5.0) == 5.0 and 400.0 < front._wait(poll_interval=2000.0) <= 500.0
        front._pending[soon].deadline = now - 1.0
        assert front._wait(poll_interval=5.0) == 0.0  # overdue: no waiting at all
        due = front._pending[soon].deadline = 12345.0
        front._pending[late].deadline = due + 1.0
        front._expire(due - 0.001)
        assert set(front._pending) == {late, soon}
        front._expire(due)  # due at its deadline, not after it
        assert set(front._pending) == {late} and soon.fileno() == -1 and late.fileno() != -1
        front.close()
        assert front._pending == {} and late.fileno() == -1


def test_the_cap_counts_the_requests_being_handled(serve_front: Callable[..., Served]) -> None:
    served = serve_front(max_connections=1)
    served.recorder.block = True
    with served.connect() as first:
        first.sendall(REQUEST)
        assert served.recorder.started.acquire(timeout=30)
        assert served.front.open_connections == 1
        assert served.ask(REQUEST) == b""  # over the cap while the first is with a worker
        served.recorder.release.set()
        assert read_all(first) == ANSWER
    until(lambda: served.front.open_connections == 0, "the handled connection counted off")
    assert served.ask(REQUEST) == ANSWER
    assert len(served.recorder.requests) == 2


@contextlib.contextmanager
def busy_and_queued(served: Served) -> Iterator[tuple[socket.socket, socket.socket]]:
    """Two connections to a front of one worker: the first's request with the (blocked) worker, the second's
    queued behind it (no longer waiting to be whole, and counted with the one being handled)."""
    served.recorder.block = True
    with served.connect() as first, served.connect() as second:
        first.sendall(REQUEST)
        assert served.recorder.started.acquire(timeout=30)
        second.sendall(REQUEST)
        until(lambda: not served.front._pending and served.front.open_connections == 2, "the second request queued")
        yield first, second


def test_the_workers_are_bounded_and_named(serve_front: Callable[..., Served]) -> None:
    served = serve_front(workers=1)
    with busy_and_queued(served) as (first, second):
        served.recorder.release.set()
        assert (read_all(first), read_all(second)) == (ANSWER, ANSWER)
    assert served.recorder.workers == ["alas-controller-worker_0"] * 2  # the second waited for the one worker


def test_a_failing_handler_costs_its_connection_only(serve_front: Callable[..., Served],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    served = serve_front(max_connections=1)
    served.recorder.fail = True
    with caplog.at_level(logging.INFO, logger="alas_argo.controller.connections"):
        assert served.ask(REQUEST) == b""
        until(lambda: served.front.open_connections == 0, "the failed request counted off")
    [record] = [r for r in caplog.records if r.name == "alas_argo.controller.connections"]
    message = record.getMessage()
    assert record.levelno == logging.INFO and message.startswith("request from ('127.0.0.1', ")
    assert message.endswith(") ended abnormally")
    assert record.exc_info is not None and str(record.exc_info[1]) == "a handler bug"
    served.recorder.fail = False
    assert served.ask(REQUEST) == ANSWER


def test_a_client_that_does_not_read_its_answer_is_cut_off(serve_front: Callable[..., Served]) -> None:
    served = serve_front(deadline=0.5)
    served.recorder.reply = b"x" * (64 << 20)  # far more than the socket buffers hold
    with served.connect() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.sendall(REQUEST)
        until(lambda: len(served.recorder.requests) == 1 and served.front.open_connections == 0,
              "the worker gave up on the client")


def test_the_answer_ends_with_the_connection_even_if_the_handler_keeps_a_file(
        serve_front: Callable[..., Served]) -> None:
    kept: list[Any] = []

    def handle(pending: PendingRequest) -> None:
        out = pending.sock.makefile("wb")  # as the HTTP handler's wfile: the socket stays open while it lives
        out.write(b"done")
        out.flush()
        kept.append(out)

    served = serve_front(handle=handle)
    assert served.ask(REQUEST) == b"done"
    assert len(kept) == 1


def test_shutting_down_closes_the_waiting_connections(serve_front: Callable[..., Served]) -> None:
    served = serve_front()
    with served.connect() as sock:
        sock.sendall(HEAD)
        until(lambda: served.buffered() == len(HEAD), "the head buffered")
        served.front.shutdown()
        # the loop has stopped when shutdown returns: the listening socket is no longer watched
        assert served.listener not in [key.fileobj for key in served.front._selector.get_map().values()]
        served.front.close()
        assert read_all(sock) == b""
    assert served.front.open_connections == 0 and served.recorder.requests == []


def test_closing_does_not_wait_for_the_requests_being_handled(serve_front: Callable[..., Served]) -> None:
    served = serve_front()
    served.recorder.block = True
    with served.connect() as sock:
        sock.sendall(REQUEST)
        assert served.recorder.started.acquire(timeout=30)
        served.front.shutdown()
        served.front.close()  # returns with the handler still blocked
        assert served.front.open_connections == 1
        served.recorder.release.set()
        assert read_all(sock) == ANSWER  # the worker still finishes it
    until(lambda: served.front.open_connections == 0, "the handled connection counted off")


def test_closing_closes_the_requests_still_queued_unanswered(serve_front: Callable[..., Served]) -> None:
    """A request queued behind a busy worker never ran: closing the front closes its connection at once (it was
    left open until the socket was collected) and counts it off; the one being handled still finishes."""
    served = serve_front(workers=1)
    with busy_and_queued(served) as (first, second):
        served.front.shutdown()
        served.front.close()
        assert read_all(second) == b""  # closed unanswered, without waiting for the first
        assert served.front.open_connections == 1
        served.recorder.release.set()
        assert read_all(first) == ANSWER
    until(lambda: served.front.open_connections == 0, "the handled connection counted off")
    assert served.recorder.requests == [REQUEST]


def test_a_front_that_never_served_shuts_down_at_once() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        front = ConnectionFront(listener, Recorder(), deadline=1.0, max_body_bytes=10)
        stopping = threading.Thread(target=front.shutdown, daemon=True)
        stopping.start()
        stopping.join(timeout=30)
        assert not stopping.is_alive()
        front.close()


class _OutOfFiles(socket.socket):
    """A listening socket whose first accept fails as it does when the process has no file descriptor left."""

    failed = False

    def accept(self) -> tuple[socket.socket, Any]:
        if not self.failed:
            self.failed = True
            raise OSError(errno.EMFILE, "Too many open files")
        return super().accept()


def test_a_failed_accept_is_logged_and_the_front_serves_on(serve_front: Callable[..., Served],
                                                           caplog: pytest.LogCaptureFixture) -> None:
    listener = _OutOfFiles(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    with caplog.at_level(logging.INFO, logger="alas_argo.controller.connections"):
        served = serve_front(listener=listener)
        assert served.ask(REQUEST) == ANSWER  # the connection waited in the backlog for the next round
        assert served.ask(REQUEST) == ANSWER
    assert [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "alas_argo.controller.connections"] == [
        (logging.WARNING, "accept failed: [Errno 24] Too many open files")]  # an empty backlog is no failure
