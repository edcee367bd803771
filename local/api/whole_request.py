"""A whole HTTP/1.1 request read from a client, checked as API Gateway checks it, within
bounded work and memory: what the local front (`local.api.front`) forwards to a worker.

What is refused is a `RefusedError` (status, code, message): a malformed request (h11's
parser: chunk sizes, a missing ``Host`` in HTTP/1.1, two ``Content-Length`` headers or a
list of lengths, even equal ones, ...) is 400, a request line and headers above API
Gateway's 10,240 bytes or more than `MAX_HEADERS` headers 431, a body above 10 MB or in
more than `MAX_CHUNKS` chunks (or more than `MAX_SMALL_CHUNKS` of them under
`SMALL_CHUNK_BYTES`) 413, a body past the front's `Budget` 503.

The work a request may cost is bounded, not only its time: every read is followed by a
turn of the event loop (one thread serves every connection, and none keeps it), a chunked
body pays for a bounded number of chunks (a storm of 1-byte chunks is refused after a few
dozen bytes), and a body is read into one buffer, held in the
front's `Budget` until it is forwarded.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import functools
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import h11

MAX_HEAD_BYTES = 10_240
"""API Gateway (REST): the request line and header values, combined, at most 10,240 bytes."""
MAX_HEADERS = 100
MAX_CHUNKS = 1024
"""Chunks of one chunked body: each is parsing work, so 1-byte chunks cost a thousand
times what the same bytes in one chunk cost. Clients send chunks of kilobytes (a 10 MB
body in 1,024 chunks is 10 KB a chunk); a body in more is 413."""
SMALL_CHUNK_BYTES = 1024
MAX_SMALL_CHUNKS = 16
"""Chunks under `SMALL_CHUNK_BYTES` one body may have (a writer's last flushes); past them a
body is 413 at once, so that a storm of 1-byte chunks costs the front a few dozen bytes of
parsing per connection, not `MAX_CHUNKS` events."""
STORM_PAUSE_SECONDS = 1.0
"""The 413 of a chunk storm is answered after this: the connection then costs the front a
sleeping coroutine (what it sends meanwhile is not read), and a client reconnecting at once
cannot make the front parse more than a few dozen bytes a second for it (measured: about
1,000 refused storm connections a second without the pause)."""
MAX_BUFFERED_BYTES = 128 * 1024 * 1024
"""Request bodies all connections may hold at once; a request whose body would go past it
is 503 with ``Retry-After`` (a ``Content-Length`` is reserved before its body is read)."""
TRIM_AFTER_BYTES = 16 * 1024 * 1024
"""Bodies held at once from which the heap is trimmed once they are all given back."""
MAX_BODY_BYTES = 10 * 1024 * 1024
"""API Gateway's payload limit (the gateway behind refuses above Lambda's 6 MB)."""
READ_BYTES = 65_536
HOP_BY_HOP = {b"connection", b"keep-alive", b"transfer-encoding", b"te", b"upgrade", b"expect"}
"""Headers about this hop, not the request: the front answers ``Expect: 100-continue``
itself and forwards the body it has read with one Content-Length."""
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
Read = Callable[[int], Awaitable[bytes]]


class Budget:
    """Bytes of request bodies every connection holds together, and open connections.

    When every body is given back after large ones were held, the heap's free pages go back
    to the system (glibc's ``malloc_trim``): the freed buffers are scattered among the
    process's other allocations, and without it the front stayed some 70 MB above its idle
    footprint after a burst of large uploads."""

    def __init__(self, max_bytes: int = MAX_BUFFERED_BYTES) -> None:
        self.max_bytes, self.held, self.connections, self.peak = max_bytes, 0, 0, 0

    def take(self, size: int) -> None:
        """Hold `size` more bytes, or `RefusedError` 503 if all bodies would pass the cap."""
        if self.held + size > self.max_bytes:
            message = "the local API is receiving too many large bodies; retry shortly"
            raise RefusedError(503, "unavailable", message)
        self.held += size
        self.peak = max(self.peak, self.held)

    def give_back(self, size: int) -> None:
        self.held -= size
        if self.held == 0 and self.peak >= TRIM_AFTER_BYTES:
            self.peak = 0
            _trim_heap()


def _trim_heap() -> None:
    """Free heap pages back to the system where the C library can (glibc)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, looked up once (None where the C library has none)."""
    name = ctypes.util.find_library("c")
    trim: Callable[[int], int] | None = (
        getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
    )
    return trim


class RefusedError(Exception):
    """A request the front answers itself: status, code and message; `pause` seconds before
    the answer for a request whose shape is abuse (see `STORM_PAUSE_SECONDS`)."""

    def __init__(self, status: int, code: str, message: str, pause: float = 0.0) -> None:
        super().__init__(message)
        self.status, self.code, self.pause = status, code, pause


@dataclass(frozen=True)
class WholeRequest:
    """A request as read completely: what the worker receives."""

    method: bytes
    target: bytes
    headers: list[tuple[bytes, bytes]]
    body: bytearray

    def head(self) -> bytes:
        """HTTP/1.1 with one Content-Length and ``Connection: close`` (chunks decoded);
        header names with an underscore left out."""
        kept = [
            (k, v)
            for k, v in self.headers
            if k not in HOP_BY_HOP | {b"content-length"} and b"_" not in k
        ]
        lines = [b"%s %s HTTP/1.1" % (self.method, self.target)]
        lines += [b"%s: %s" % (k, v) for k, v in kept]
        lines += [b"Content-Length: %d" % len(self.body), b"Connection: close"]
        return b"\r\n".join(lines) + b"\r\n\r\n"


async def read_request(
    read: Read, send: Callable[[bytes], None], budget: Budget | None = None
) -> WholeRequest:
    """One request from `read`, parsed and checked by h11 (`send` answers a client that
    waits for ``100 Continue``); `RefusedError` if it is not a request this API takes. The
    body's bytes are held in `budget` until the request is read (the caller gives them
    back once forwarded, `WholeRequest.body`'s length)."""
    parser = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
    reading = _Body(budget or Budget(MAX_BODY_BYTES))
    try:
        return await _read(parser, reading, read, send)
    except BaseException:
        reading.release()
        raise


async def _read(
    parser: h11.Connection, reading: _Body, read: Read, send: Callable[[bytes], None]
) -> WholeRequest:
    request: h11.Request | None = None
    head = bytearray()
    while True:
        try:
            event = parser.next_event()
        except h11.RemoteProtocolError as error:
            raise _refusal(error) from None
        if event is h11.NEED_DATA:
            if parser.they_are_waiting_for_100_continue:
                send(CONTINUE)
            reading.expect(_chunk_remaining(parser))
            data = await read(READ_BYTES)
            if request is None:  # the head, bounded by h11's MAX_HEAD_BYTES
                head += data
            parser.receive_data(data)
            await asyncio.sleep(0)  # a turn for every other connection: none keeps the loop
            continue
        if isinstance(event, h11.Request):
            _one_length(bytes(head).partition(b"\r\n\r\n")[0])
            request = _checked(event)
            reading.declared(_content_length(request))
        elif isinstance(event, h11.Data):
            reading.add(event)
        elif isinstance(event, h11.EndOfMessage) and request is not None:
            headers = list(request.headers)
            return WholeRequest(request.method, request.target, headers, reading.whole())
        elif isinstance(event, h11.ConnectionClosed):
            raise RefusedError(400, "bad_request", "the connection closed mid-request")


class _Body:
    """A request body as it arrives: one buffer, its bytes held in the front's `Budget` (a
    ``Content-Length`` as soon as it is declared), its chunks counted."""

    def __init__(self, budget: Budget) -> None:
        self.budget, self.buffer, self.held = budget, bytearray(), 0
        self.chunks = self.small_chunks = self.chunk_bytes = 0

    def declared(self, length: int | None) -> None:
        if length:
            self._hold(length)

    def expect(self, announced: int) -> None:
        if len(self.buffer) + announced > MAX_BODY_BYTES:
            raise RefusedError(413, "payload_too_large", "the request body is above 10 MB")

    def add(self, data: h11.Data) -> None:
        self._count(data)
        size = len(self.buffer) + len(data.data)
        if size > MAX_BODY_BYTES:
            raise RefusedError(413, "payload_too_large", "the request body is above 10 MB")
        self._hold(size - self.held)
        self.buffer += data.data

    def _count(self, data: h11.Data) -> None:
        """Counts chunks, and the small ones: too many of either is 413."""
        if data.chunk_start:
            self.chunks, self.chunk_bytes = self.chunks + 1, 0
        self.chunk_bytes += len(data.data)
        if data.chunk_end and self.chunk_bytes < SMALL_CHUNK_BYTES:
            self.small_chunks += 1
        if self.chunks > MAX_CHUNKS or self.small_chunks > MAX_SMALL_CHUNKS:
            message = (
                f"a chunked body has at most {MAX_CHUNKS:,} chunks, {MAX_SMALL_CHUNKS} of "
                f"them under {SMALL_CHUNK_BYTES:,} bytes; send larger chunks or a "
                "Content-Length"
            )
            raise RefusedError(413, "payload_too_large", message, STORM_PAUSE_SECONDS)

    def _hold(self, more: int) -> None:
        if more > 0:
            self.budget.take(more)
            self.held += more

    def whole(self) -> bytearray:
        """The body; its bytes stay held until the caller gives them back."""
        return self.buffer

    def release(self) -> None:
        """Gives the bytes back and drops the buffer: a refused request's exception keeps
        this frame (and so this object) until the cyclic collector runs, its buffer not."""
        self.budget.give_back(self.held)
        self.held, self.buffer = 0, bytearray()


def _content_length(request: h11.Request) -> int | None:
    for name, value in request.headers:
        if name == b"content-length":
            return int(value)
    return None


def _chunk_remaining(parser: h11.Connection) -> int:
    """Bytes the chunk being read still announces (h11 0.16's chunked reader keeps them):
    a chunk size of 20 hex digits is refused at once instead of waited for."""
    return int(getattr(getattr(parser, "_reader", None), "_bytes_in_chunk", 0) or 0)


def _one_length(head: bytes) -> None:
    """Refuses a head with two ``Content-Length`` lines or a list of lengths, even of equal
    values (h11 merges those before a `h11.Request` shows its headers). RFC 9112 6.3
    allows accepting identical values; refusing every repeat is simpler to state, and no
    client sends one."""
    lengths = re.findall(rb"\r\ncontent-length[ \t]*:([^\r]*)", head, flags=re.IGNORECASE)
    if len(lengths) > 1 or any(b"," in value for value in lengths):
        raise RefusedError(400, "bad_request", "more than one Content-Length")


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
