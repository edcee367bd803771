"""The local API's HTTP server: gunicorn, shaped like Lambda's concurrency model.

Each worker process is one container: it imports the handlers once (its cold start, logged
with its duration) and serves one event at a time: gunicorn's sync worker accepts a
connection only when it is idle, so `DEV_CONCURRENCY` workers serve that many requests at
once and a slow page in one never delays another's. gunicorn parses HTTP (chunked bodies,
a single Content-Length, request line and header limits); a connection carries one request
(``Connection: close``), and one that stays idle is closed; what gunicorn refuses is
answered in the API's JSON error shape. Ctrl-C or SIGTERM drains in-flight requests (at most
`DRAIN_SECONDS`) before the workers stop. Why gunicorn, and why its sync workers:
docs/decisions/007-local-server-gunicorn-sync-workers.md.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any, cast

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from gunicorn.util import close_on_exec, write_nonblock
from gunicorn.workers.sync import SyncWorker

from lambdas.settings import SettingsError
from local.gateway import LocalGateway

DRAIN_SECONDS = 5
"""In-flight requests may finish for this long after Ctrl-C; then workers are killed."""
IDLE_SECONDS = 5
"""A connection that sends nothing (or stalls mid-request) is closed after this long."""
WORKER_TIMEOUT_SECONDS = 30
"""A worker that stops answering its master's heartbeat for this long is replaced."""
ACCESS_LOG_FORMAT = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms'


def default_concurrency() -> int:
    """`DEV_CONCURRENCY`, else the machine's cores, at least 2."""
    configured = os.environ.get("DEV_CONCURRENCY", "")
    if configured:
        if not configured.isdecimal() or int(configured) < 1:
            raise SettingsError(f"DEV_CONCURRENCY must be a whole number from 1: {configured!r}")
        return int(configured)
    return max(2, os.cpu_count() or 1)


class LambdaLikeWorker(SyncWorker):
    """gunicorn's sync worker (accepts a connection only when idle, serves one request,
    closes), deaf to the terminal's Ctrl-C (the master drains it with SIGTERM), with idle
    clients cut off and the errors it answers itself in the API's JSON shape."""

    def init_signals(self) -> None:
        super().init_signals()
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def accept(self, listener: socket.socket) -> None:
        """A connection that sends nothing for `IDLE_SECONDS` is closed, and no read of its
        request may stall longer: an idle client must not hold a worker."""
        client, addr = listener.accept()
        close_on_exec(client.fileno())
        # The status line and headers go out before the body: without this, Nagle's
        # algorithm holds the body back until the client's delayed ACK (about 9 ms a page).
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not select.select([client], [], [], IDLE_SECONDS)[0]:
            client.close()
            return
        client.settimeout(IDLE_SECONDS)
        self.handle(listener, client, addr)

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """gunicorn logs and decides the status; the body is JSON, not its HTML page."""
        json_client = cast(socket.socket, _JsonErrorSocket(client, str(exc)))
        super().handle_error(req, json_client, addr, exc)


class _JsonErrorSocket:
    """Stands in for the client socket while gunicorn writes an error page: what it writes
    is replaced by a JSON error of the same status."""

    def __init__(self, sock: Any, message: str) -> None:
        self._sock, self._message = sock, message

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def sendall(self, data: bytes) -> None:
        self.send(data)

    def send(self, data: bytes) -> int:
        head = data.split(b"\r\n", 1)[0].decode("latin-1")  # "HTTP/1.1 400 Bad Request"
        status = int(head.split()[1])
        code = ERROR_CODES.get(status, "bad_request")
        body = json.dumps({"code": code, "message": self._message or head}).encode()
        response = (
            f"{head}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1") + body
        write_nonblock(self._sock, response)
        return len(data)


ERROR_CODES = {
    400: "bad_request",
    403: "forbidden",
    417: "expectation_failed",
    431: "headers_too_large",
    500: "internal_error",
    501: "not_implemented",
}


class _DrainingArbiter(Arbiter):
    """A master whose Ctrl-C (SIGINT) drains like SIGTERM, instead of gunicorn's quick
    shutdown that drops in-flight requests."""

    def handle_int(self) -> None:
        self.handle_term()


class LocalServer(BaseApplication):
    """gunicorn run from Python: `gateway` is called in each worker after the fork (its cold
    start); `on_ready` runs in the master once it listens."""

    def __init__(
        self,
        gateway: Callable[[], LocalGateway],
        bind: str,
        workers: int,
        on_ready: Callable[[str], None],
    ) -> None:
        self._gateway, self._bind, self._workers, self._on_ready = gateway, bind, workers, on_ready
        super().__init__()

    def load_config(self) -> None:
        on_ready = self._on_ready

        def when_ready(server: Arbiter) -> None:
            host, port = server.LISTENERS[0].sock.getsockname()[:2]
            on_ready(f"http://{host}:{port}")

        settings = {
            "bind": self._bind,
            "workers": self._workers,
            "worker_class": f"{__name__}.LambdaLikeWorker",
            "timeout": WORKER_TIMEOUT_SECONDS,
            "graceful_timeout": DRAIN_SECONDS,
            "backlog": 256,
            "accesslog": "-",
            "access_log_format": ACCESS_LOG_FORMAT,
            "loglevel": "warning",
            "when_ready": when_ready,
            "proc_name": "incidents-local",
        }
        for name, value in settings.items():
            self.cfg.set(name, value)

    def load(self) -> LocalGateway:
        """Runs in each worker: import the handlers and build the gateway (the cold start)."""
        started = time.perf_counter()
        gateway = self._gateway()
        elapsed = (time.perf_counter() - started) * 1000
        print(f"worker {os.getpid()}: cold start {elapsed:.0f} ms", file=sys.stderr, flush=True)
        return gateway

    def run(self) -> None:
        """Serve until Ctrl-C or SIGTERM, then drain; returns in the master (gunicorn would
        exit). A worker leaves here too, with gunicorn's SystemExit: it must end at once,
        not unwind into the master's code (which stops the engine)."""
        master = os.getpid()
        try:
            _DrainingArbiter(self).run()
        except SystemExit as stop:
            if os.getpid() != master:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(stop.code if isinstance(stop.code, int) else 1)
            if stop.code not in (0, None):
                raise
