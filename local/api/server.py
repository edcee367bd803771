"""The local API's HTTP server: a front that reads whole requests, and gunicorn workers
shaped like Lambda's concurrency model behind it.

The front (`local.api.front`, in this process) accepts every connection and reads each request
completely, under one deadline, before a worker sees it, as API Gateway does; a slow, idle
or reopening client costs the front a coroutine, never a worker. Complete requests go to
gunicorn over a Unix socket. gunicorn's master runs in a child process (so it reaps only
its workers, not the engine's JVM), and every worker is one container: it imports the
handlers once (its cold start, logged with its duration) and serves one event at a time,
so `DEV_CONCURRENCY` workers serve that many requests at once. Workers and master die with
their parent (`local.engines.orphans`). Ctrl-C or SIGTERM drains: the front answers what it has
begun (at most `DRAIN_SECONDS`), then the workers stop. Why gunicorn, and why its sync
workers: docs/decisions/007-local-server-gunicorn-sync-workers.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, cast

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from gunicorn.util import close_on_exec, write_nonblock
from gunicorn.workers.sync import SyncWorker

from lambdas.settings import SettingsError
from local.api.front import run_front
from local.api.gateway import LocalGateway
from local.api.whole_request import MAX_HEADERS
from local.engines.orphans import exit_with_parent

DRAIN_SECONDS = 5
"""In-flight requests may finish for this long after Ctrl-C; then workers are killed."""
IDLE_SECONDS = 5
"""A connection that sends nothing (or stalls mid-request) is closed after this long."""
WORKER_TIMEOUT_SECONDS = 30
"""A worker that stops answering its master's heartbeat for this long is replaced."""
ACCESS_LOG_FORMAT = '"%(r)s" %(s)s %(b)s %(M)sms'
FRONT_BACKLOG = 512


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
        """A connection from the front carries one whole request: it is read at once (the
        timeout only guards against a front that died mid-write)."""
        client, addr = listener.accept()
        close_on_exec(client.fileno())
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
    """A master that stops when its parent says so (SIGTERM, after the front has drained):
    a terminal's Ctrl-C reaches the whole process group, and gunicorn's quick shutdown on
    SIGINT would drop the requests the front is still handing over."""

    def handle_int(self) -> None:
        """Ignored: the parent drains the front first, then sends SIGTERM."""


class LocalServer(BaseApplication):
    """gunicorn run from Python: `gateway` is called in each worker after the fork (its cold
    start); `on_ready` runs in each worker once that is done and it serves (the first to
    call it is when a request would first be answered, seconds after the master listens)."""

    def __init__(
        self,
        gateway: Callable[[], LocalGateway],
        bind: str,
        workers: int,
        on_ready: Callable[[], None],
    ) -> None:
        self._gateway, self._bind, self._workers, self._on_ready = gateway, bind, workers, on_ready
        super().__init__()

    def load_config(self) -> None:
        on_ready = self._on_ready
        settings = {
            "bind": self._bind,
            "post_fork": lambda _server, _worker: exit_with_parent(),
            "workers": self._workers,
            "worker_class": f"{__name__}.LambdaLikeWorker",
            "timeout": WORKER_TIMEOUT_SECONDS,
            "graceful_timeout": DRAIN_SECONDS,
            "backlog": 256,
            "accesslog": "-",
            "access_log_format": ACCESS_LOG_FORMAT,
            "loglevel": "warning",
            "post_worker_init": lambda _worker: on_ready(),
            "proc_name": "incidents-local",
            # The front enforces API Gateway's limits; what it forwards is within them.
            "limit_request_line": 0,
            "limit_request_field_size": 0,
            "limit_request_fields": MAX_HEADERS + 10,
            # gunicorn trusts forwarding headers (SCRIPT_NAME, X-Forwarded-Proto) from a
            # Unix socket's peer; the front forwards clients' headers: trust none.
            "forwarder_headers": "",
            "secure_scheme_headers": {},
            "forwarded_allow_ips": "",
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
        """Serve until SIGTERM, then drain; returns in the master (gunicorn would exit). A
        worker leaves here too, with gunicorn's SystemExit: it must end at once, not unwind
        into the master's code."""
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


def serve(
    gateway: Callable[[], LocalGateway],
    address: tuple[str, int],
    workers: int,
    on_ready: Callable[[str], None],
) -> None:
    """The front on `address` and `workers` gunicorn workers behind it, until Ctrl-C or
    SIGTERM; then the front drains, the workers stop, and this returns."""
    listener = socket.create_server(address, backlog=FRONT_BACKLOG)
    folder = tempfile.mkdtemp(prefix="incidents-local-")
    upstream = os.path.join(folder, "workers.sock")
    master = _start_master(gateway, upstream, workers, listener)
    try:
        host, port = listener.getsockname()[:2]
        on_ready(f"http://{host}:{port}")
        run_front(listener, upstream)
    finally:
        listener.close()
        _stop_master(master)
        shutil.rmtree(folder, ignore_errors=True)


def _start_master(
    gateway: Callable[[], LocalGateway], upstream: str, workers: int, listener: socket.socket
) -> int:
    """Fork gunicorn's master (it dies with this process); returns once its workers serve."""
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the master
        listener.close()
        os.close(ready_read)
        exit_with_parent(signal.SIGTERM)
        server = LocalServer(gateway, f"unix:{upstream}", workers, lambda: _say_ready(ready_write))
        code = 0
        try:
            server.run()
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(ready_write)
    with os.fdopen(ready_read, "rb") as ready:
        if ready.read(1) != b"1":
            os.waitpid(pid, 0)
            raise RuntimeError("the local API's workers did not start (see the log above)")
    return pid


def _say_ready(pipe: int) -> None:
    """A worker serves: say so (only the first is read; the reader is gone by the next)."""
    with contextlib.suppress(OSError):
        os.write(pipe, b"1")


def _stop_master(pid: int) -> None:
    """SIGTERM gunicorn's master (it drains its workers) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + DRAIN_SECONDS + 5
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
