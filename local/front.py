"""The local API's front: whole requests in, then to a worker, as API Gateway does.

In the cloud API Gateway receives and buffers each request before Lambda sees it; locally
the gunicorn workers would read from the client's socket themselves, so a client that
sends a byte every few seconds (or nothing) held a worker, and a few such clients starved
every other one. The front is an asyncio server (one process, any number of connections):
it reads each request with h11, under one deadline for the whole request (not per byte)
and API Gateway's limits, and only a complete request goes on to gunicorn, over a Unix
socket, in one write. A worker therefore never waits on a client, and still serves one
event at a time.

What the front refuses is answered in the API's JSON error shape: a malformed request
(h11's parser: chunk sizes, a missing ``Host`` in HTTP/1.1, two lengths, ...) is 400, a
request line and headers above API Gateway's 10,240 bytes or more than `MAX_HEADERS`
headers 431, a body above 10 MB 413, a request not complete within `REQUEST_SECONDS` 408.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus

import h11

REQUEST_SECONDS = 10.0
"""A whole request (line, headers, body) must arrive within this: a total deadline."""
IDLE_SECONDS = 5.0
"""A connection that sends nothing at all is closed after this."""
MAX_HEAD_BYTES = 10_240
"""API Gateway (REST): the request line and header values, combined, at most 10,240 bytes."""
MAX_HEADERS = 100
MAX_BODY_BYTES = 10 * 1024 * 1024
"""API Gateway's payload limit (the gateway behind refuses above Lambda's 6 MB)."""
UPSTREAM_SECONDS = 60.0
"""What a worker may take to answer one forwarded request (pages are bounded to 3 s)."""
DRAIN_SECONDS = 5.0
READ_BYTES = 65_536
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"expect"}
"""Headers about this hop, not the request: the front answers ``Expect: 100-continue``
itself and forwards the body it has read with one Content-Length."""
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
Read = Callable[[int], Awaitable[bytes]]


class RefusedError(Exception):
    """A request the front answers itself: status, code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code = status, code


@dataclass(frozen=True)
class WholeRequest:
    """A request as read completely: what the worker receives."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytes

    def to_bytes(self) -> bytes:
        """HTTP/1.1 with one Content-Length and ``Connection: close`` (chunks decoded)."""
        kept = [(k, v) for k, v in self.headers if k not in HOP_BY_HOP | {b"content-length"}]
        lines = [b"%s %s HTTP/1.1" % (self.method, self.target)]
        lines += [b"%s: %s" % (k, v) for k, v in kept]
        lines += [b"Content-Length: %d" % len(self.body), b"Connection: close"]
        return b"\r\n".join(lines) + b"\r\n\r\n" + self.body


async def read_request(read: Read, send: Callable[[bytes], None]) -> WholeRequest:
    """One request from `read`, parsed and checked by h11 (`send` answers a client that
    waits for ``100 Continue``); `RefusedError` if it is not a request this API takes."""
    parser = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
    request: h11.Request | None = None
    body = bytearray()
    while True:
        try:
            event = parser.next_event()
        except h11.RemoteProtocolError as error:
            raise _refusal(error) from None
        if event is h11.NEED_DATA:
            if parser.they_are_waiting_for_100_continue:
                send(CONTINUE)
            if len(body) + _chunk_remaining(parser) > MAX_BODY_BYTES:
                raise RefusedError(413, "payload_too_large", "the request body is above 10 MB")
            parser.receive_data(await read(READ_BYTES))
            continue
        if isinstance(event, h11.Request):
            request = _checked(event)
        elif isinstance(event, h11.Data):
            body += event.data
            if len(body) > MAX_BODY_BYTES:
                raise RefusedError(413, "payload_too_large", "the request body is above 10 MB")
        elif isinstance(event, h11.EndOfMessage) and request is not None:
            headers = list(request.headers)
            return WholeRequest(request.method, request.target, headers, bytes(body))
        elif isinstance(event, h11.ConnectionClosed):
            raise RefusedError(400, "bad_request", "the connection closed mid-request")


def _chunk_remaining(parser: h11.Connection) -> int:
    """Bytes the chunk being read still announces (h11 0.16's chunked reader keeps them):
    a chunk size of 20 hex digits is refused at once instead of waited for."""
    return int(getattr(getattr(parser, "_reader", None), "_bytes_in_chunk", 0) or 0)


def _checked(request: h11.Request) -> h11.Request:
    names = {name for name, _ in request.headers}
    if {b"content-length", b"transfer-encoding"} <= names:
        # RFC 9112 6.1: ought to be handled as an error (the way requests are smuggled).
        raise RefusedError(400, "bad_request", "Content-Length and Transfer-Encoding together")
    size = len(request.method) + len(request.target) + 10  # "GET <target> HTTP/1.1"
    size += sum(len(name) + len(value) + 4 for name, value in request.headers)
    if size > MAX_HEAD_BYTES:
        message = f"the request line and headers are above {MAX_HEAD_BYTES:,} bytes"
        raise RefusedError(431, "headers_too_large", message)
    if len(request.headers) > MAX_HEADERS:
        raise RefusedError(431, "headers_too_large", f"more than {MAX_HEADERS} headers")
    for name, value in request.headers:
        if name == b"content-length" and int(value) > MAX_BODY_BYTES:
            raise RefusedError(413, "payload_too_large", "the request body is above 10 MB")
    return request


def _refusal(error: h11.RemoteProtocolError) -> RefusedError:
    status = error.error_status_hint
    if status == 431 or "exceeds" in str(error).lower():
        message = f"the request line and headers are above {MAX_HEAD_BYTES:,} bytes"
        return RefusedError(431, "headers_too_large", message)
    return RefusedError(status if 400 <= status < 500 else 400, "bad_request", str(error)[:200])


def json_error(status: int, code: str, message: str) -> bytes:
    """A complete response in the API's error shape; the connection closes after it."""
    body = json.dumps({"code": code, "message": message}).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class Front:
    """Accepts on `host`:`port`, forwards whole requests to the Unix socket `upstream`."""

    def __init__(self, host: str, port: int, upstream: str) -> None:
        self.host, self.port, self.upstream = host, port, upstream
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.Task[None]] = set()
        self.stopping = False
        """Draining: requests begun are answered, new connections refused with a 503."""

    async def start(self, sock: socket.socket | None = None) -> None:
        """Listen (on `sock` if given, already bound)."""
        if sock is not None:
            self._server = await asyncio.start_server(self._connection, sock=sock, backlog=512)
        else:
            self._server = await asyncio.start_server(
                self._connection, self.host, self.port, backlog=512, reuse_address=True
            )

    async def stop(self) -> None:
        """Answer the requests begun (at most `DRAIN_SECONDS`), refusing new connections
        meanwhile (those waiting in the backlog get a 503, not a reset), then close."""
        self.stopping = True
        begun = set(self._open)
        if begun:
            await asyncio.wait(begun, timeout=DRAIN_SECONDS)
        await asyncio.sleep(0.1)  # connections already queued are accepted and refused
        if self._server is not None:
            self._server.close()
        await asyncio.sleep(0.05)  # connections accepted last start, and are refused
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:  # each ends within IDLE_SECONDS (a refusal is immediate)
            await asyncio.wait(others, timeout=IDLE_SECONDS)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._open.add(task)
        try:
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            writer.write(await self._answer(reader, writer))
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the client went away: nothing to answer
        except asyncio.CancelledError:
            return  # the front stopped after its drain: this connection ends unanswered
        finally:
            self._open.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        if self.stopping:
            return json_error(503, "shutting_down", "the local API is stopping; retry later")
        try:
            first = await asyncio.wait_for(reader.read(1), IDLE_SECONDS)
        except TimeoutError:
            return b""  # a connection that says nothing is closed without a word
        if not first:
            return b""
        pending = [first]

        async def read(size: int) -> bytes:
            return pending.pop() if pending else await reader.read(size)

        try:
            request = await asyncio.wait_for(read_request(read, writer.write), REQUEST_SECONDS)
        except TimeoutError:
            message = f"the whole request must arrive within {REQUEST_SECONDS:.0f} s"
            return json_error(408, "request_timeout", message)
        except RefusedError as refused:
            return json_error(refused.status, refused.code, str(refused))
        return await self._forward(request)

    async def _forward(self, request: WholeRequest) -> bytes:
        """The worker's whole answer (gunicorn closes the connection after it)."""
        try:
            reader, writer = await asyncio.open_unix_connection(self.upstream)
        except OSError:
            return json_error(503, "unavailable", "the local API is not serving")
        try:
            writer.write(request.to_bytes())
            await writer.drain()
            return await asyncio.wait_for(reader.read(), UPSTREAM_SECONDS)
        except TimeoutError:
            return json_error(504, "timeout", "the handler did not answer in time")
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


def run_front(
    sock: socket.socket, upstream: str, on_stop: Callable[[], None] | None = None
) -> None:
    """Serve on the bound `sock` until SIGTERM or SIGINT, then drain and return."""

    async def main() -> None:
        front = Front("", 0, upstream)
        await front.start(sock)
        stopping = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopping.set)
        await stopping.wait()
        await front.stop()

    asyncio.run(main())
