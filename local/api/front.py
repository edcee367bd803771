"""The local API's front: whole requests in, then to a worker, as API Gateway does.

In the cloud API Gateway receives and buffers each request before Lambda sees it; locally
the gunicorn workers would read from the client's socket themselves, so a client that
sends a byte every few seconds (or nothing) held a worker, and a few such clients starved
every other one. The front is an asyncio server (one process, any number of connections):
it reads each request (`local.api.whole_request`: h11 and API Gateway's limits) under one
deadline for the whole request (not per byte), and only a complete request goes on to
gunicorn, over a Unix socket. A worker therefore never waits on a client, and still serves
one event at a time.

What the front refuses is answered in the API's JSON error shape (`local.api.whole_request`
lists what), a request not complete within `REQUEST_SECONDS` 408. All connections together
hold at most `MAX_BUFFERED_BYTES` of bodies and `MAX_CONNECTIONS` connections (beyond
either, 503 with ``Retry-After`` before the body is read); a body is forwarded from its one
buffer in pieces, never copied whole. Header names with an underscore are dropped, as
nginx and gunicorn do by default: a proxy must not let ``SCRIPT_NAME: /x`` pass for its own
forwarding header.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
from collections.abc import Callable
from http import HTTPStatus

from local.api.whole_request import Budget, RefusedError, WholeRequest, read_request

REQUEST_SECONDS = 10.0
"""A whole request (line, headers, body) must arrive within this: a total deadline."""
IDLE_SECONDS = 5.0
"""A connection that sends nothing at all is closed after this."""
MAX_CONNECTIONS = 1024
"""Connections open at once; the next is answered 503 with ``Retry-After`` and closed."""
RETRY_AFTER_SECONDS = 1
FORWARD_BYTES = 256 * 1024
"""A body goes to the worker in pieces of this size, each sent before the next is taken
(the transport copies only what it could not send at once)."""
UPSTREAM_SECONDS = 60.0
"""What a worker may take to answer one forwarded request (pages are bounded to 3 s)."""
DRAIN_SECONDS = 5.0


def json_error(status: int, code: str, message: str) -> bytes:
    """A complete response in the API's error shape; the connection closes after it (a 503
    says when to retry)."""
    body = json.dumps({"code": code, "message": message}).encode()
    retry = f"Retry-After: {RETRY_AFTER_SECONDS}\r\n" if status == 503 else ""
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
        f"{retry}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("latin-1") + body


class Front:
    """Accepts on `host`:`port`, forwards whole requests to the Unix socket `upstream`."""

    def __init__(self, host: str, port: int, upstream: str) -> None:
        self.host, self.port, self.upstream = host, port, upstream
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.Task[None]] = set()
        self.budget = Budget()
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
        self.budget.connections += 1
        try:
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            writer.write(await self._answer(reader, writer))
            await writer.drain()
        except (ConnectionError, OSError):
            pass  # the client went away: nothing to answer
        except asyncio.CancelledError:
            return  # the front stopped after its drain: this connection ends unanswered
        finally:
            self.budget.connections -= 1
            self._open.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
        unwelcome = self._unwelcome()
        if unwelcome:
            return unwelcome
        first = await _first_byte(reader)
        if not first:
            return b""  # a connection that says nothing is closed without a word
        pending = [first]

        async def read(size: int) -> bytes:
            return pending.pop() if pending else await reader.read(size)

        try:
            request = await asyncio.wait_for(
                read_request(read, writer.write, self.budget), REQUEST_SECONDS
            )
        except TimeoutError:
            message = f"the whole request must arrive within {REQUEST_SECONDS:.0f} s"
            return json_error(408, "request_timeout", message)
        except RefusedError as refused:
            await asyncio.sleep(refused.pause)
            return json_error(refused.status, refused.code, str(refused))
        try:
            return await self._forward(request)
        finally:
            self.budget.give_back(len(request.body))
            request.body.clear()

    def _unwelcome(self) -> bytes:
        """A 503 for a connection the front takes no request from (stopping, or full)."""
        if self.stopping:
            return json_error(503, "shutting_down", "the local API is stopping; retry later")
        if self.budget.connections > MAX_CONNECTIONS:
            message = f"more than {MAX_CONNECTIONS:,} connections are open; retry shortly"
            return json_error(503, "unavailable", message)
        return b""

    async def _forward(self, request: WholeRequest) -> bytes:
        """The worker's whole answer (gunicorn closes the connection after it)."""
        try:
            reader, writer = await asyncio.open_unix_connection(self.upstream)
        except OSError:
            return json_error(503, "unavailable", "the local API is not serving")
        try:
            writer.write(request.head())
            body = memoryview(request.body)
            for start in range(0, len(body), FORWARD_BYTES):
                writer.write(body[start : start + FORWARD_BYTES])
                await writer.drain()
            await writer.drain()
            return await asyncio.wait_for(reader.read(), UPSTREAM_SECONDS)
        except TimeoutError:
            return json_error(504, "timeout", "the handler did not answer in time")
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


async def _first_byte(reader: asyncio.StreamReader) -> bytes:
    """The connection's first byte, or nothing if it sends none within `IDLE_SECONDS`."""
    try:
        return await asyncio.wait_for(reader.read(1), IDLE_SECONDS)
    except TimeoutError:
        return b""


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
