"""Reading whole HTTP requests off many connections with one thread, then handing them to a bounded pool.

A thread per connection lets a client that sends one byte a second hold a thread for as long as it likes
(a socket timeout is per read), and a few hundred such clients hold a few hundred threads. Here one selector
thread reads every connection without blocking, and a request reaches a worker only once it is complete:
its headers and the body its ``Content-Length`` announces (up to the size limit). A connection that has not
delivered its request within ``deadline`` seconds of being accepted is closed, however steadily it trickles.
The workers (``workers`` threads) therefore spend their time on requests, never on waiting for clients, and
connections beyond ``max_connections`` are closed at once instead of queueing without bound.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

__all__ = ["MAX_HEADER_BYTES", "ConnectionFront", "PendingRequest"]

log = logging.getLogger(__name__)

#: Largest request head (request line and headers) read before handing the request over; the handler
#: answers what it can of a longer one (414 / 431).
MAX_HEADER_BYTES = 64 * 1024
_LENGTH = re.compile(rb"^content-length:[ \t]*([0-9]{1,12})[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)


@dataclass
class PendingRequest:
    """A connection and the bytes of its request read so far."""

    sock: socket.socket
    address: tuple[str, int]
    deadline: float
    data: bytearray = field(default_factory=bytearray)

    def complete(self, max_body_bytes: int) -> bool:
        """Whether the head and the announced body are in (a head past the limit counts as complete)."""
        end = self.data.find(b"\r\n\r\n")
        if end < 0:
            return len(self.data) > MAX_HEADER_BYTES
        match = _LENGTH.search(bytes(self.data[:end + 2]))
        length = int(match.group(1)) if match else 0
        if length > max_body_bytes:
            length = 0  # the handler refuses it (413) from the head alone
        return len(self.data) >= end + 4 + length


class ConnectionFront:
    """The selector loop in front of a request handler.

    Args:
        sock: The listening socket (bound and listening).
        handle: Called on a worker thread with each complete request; owns nothing after it returns (the
            front closes the connection).
        deadline: Seconds from accept to a complete request.
        max_body_bytes: Largest body waited for.
        workers: Worker threads.
        max_connections: Open connections (waiting or being handled) beyond which new ones are closed.
    """

    def __init__(self, sock: socket.socket, handle: Callable[[PendingRequest], None], *, deadline: float,
                 max_body_bytes: int, workers: int = 8, max_connections: int = 1024) -> None:
        self._sock = sock
        self._sock.setblocking(False)
        self._handle = handle
        self.deadline, self.max_body_bytes, self.max_connections = deadline, max_body_bytes, max_connections
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="alas-controller-worker")
        self._selector = selectors.DefaultSelector()
        self._pending: dict[socket.socket, PendingRequest] = {}
        self._active = 0
        self._active_lock = threading.Lock()
        self._stop = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()
        # A byte on this pair wakes the selector when shutdown() is asked for: without it the loop noticed only
        # at its next poll (0.2 s for ControllerServer.start), which every stop of a replica waited out.
        self._wake, self._waker = socket.socketpair()
        self._wake.setblocking(False)
        self._waker.setblocking(False)

    @property
    def open_connections(self) -> int:
        """Connections waiting for their request or being handled."""
        with self._active_lock:
            return len(self._pending) + self._active

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Accept, read and dispatch until :meth:`shutdown`."""
        self._stopped.clear()
        self._selector.register(self._sock, selectors.EVENT_READ)
        self._selector.register(self._wake, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                for key, _ in self._selector.select(self._wait(poll_interval)):
                    if key.fileobj is self._sock:
                        self._accept()
                    elif key.fileobj is self._wake:
                        with contextlib.suppress(OSError):
                            self._wake.recv(4096)
                    else:
                        self._read(key.fileobj)  # type: ignore[arg-type]
                self._expire(time.monotonic())
        finally:
            self._selector.unregister(self._wake)
            self._selector.unregister(self._sock)
            self._stopped.set()

    def _wait(self, poll_interval: float) -> float:
        if not self._pending:
            return poll_interval
        first = min(p.deadline for p in self._pending.values())
        return max(0.0, min(poll_interval, first - time.monotonic()))

    def _accept(self) -> None:
        while True:
            try:
                conn, address = self._sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # out of file descriptors: keep serving the connections already open
                log.warning("accept failed: %s", e)
                return
            if self.open_connections >= self.max_connections:
                conn.close()
                continue
            conn.setblocking(False)
            self._pending[conn] = PendingRequest(conn, address, time.monotonic() + self.deadline)
            self._selector.register(conn, selectors.EVENT_READ)

    def _read(self, conn: socket.socket) -> None:
        pending = self._pending.get(conn)
        if pending is None:
            return
        try:
            chunk = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away before finishing its request
            self._drop(conn)
            return
        pending.data += chunk
        if pending.complete(self.max_body_bytes):
            self._selector.unregister(conn)
            with self._active_lock:
                del self._pending[conn]
                self._active += 1
            self._pool.submit(self._run, pending).add_done_callback(functools.partial(self._dequeued, pending))

    def _run(self, pending: PendingRequest) -> None:
        try:
            pending.sock.setblocking(True)
            pending.sock.settimeout(self.deadline)  # a client that does not read its answer is cut off too
            self._handle(pending)
        except Exception:  # the handler answers errors itself; this is a bug or a vanished client
            log.info("request from %s ended abnormally", pending.address, exc_info=True)
        finally:
            _close(pending.sock)
            with self._active_lock:
                self._active -= 1

    def _dequeued(self, pending: PendingRequest, future: Future[None]) -> None:
        """A request :meth:`close` cancelled before a worker took it: its client is told now (the connection
        closes), not whenever the socket is collected, and it no longer counts as open."""
        if future.cancelled():
            _close(pending.sock)
            with self._active_lock:
                self._active -= 1

    def _expire(self, now: float) -> None:
        for conn in [c for c, p in self._pending.items() if p.deadline <= now]:
            log.info("request from %s not complete after %.1f s: connection closed",
                     self._pending[conn].address, self.deadline)
            self._drop(conn)

    def _drop(self, conn: socket.socket) -> None:
        self._selector.unregister(conn)
        with self._active_lock:
            del self._pending[conn]
        _close(conn)

    def shutdown(self) -> None:
        """Stop the loop and wait for it (requests already with a worker finish)."""
        self._stop.set()
        with contextlib.suppress(OSError):  # full (a wake-up is already pending) or closed: nothing to add
            self._waker.send(b"\0")
        self._stopped.wait()

    def close(self) -> None:
        """Close every waiting connection and the worker pool (after :meth:`shutdown`): requests a worker holds
        finish, queued ones are closed unanswered (they never ran)."""
        for conn in list(self._pending):
            self._drop(conn)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._selector.close()
        self._wake.close()
        self._waker.close()


def _close(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)
    conn.close()
