"""moto's DynamoDB server on 127.0.0.1: the fallback engine where no Java 17+ runs, and the
server for what DynamoDB Local does not serve (Secrets Manager).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

from local.clients import free_port


class OneRequestAtATime:
    """WSGI middleware that lets one request at a time into moto's backend.

    DynamoDB applies every request atomically, and a transaction is serializable with
    the single-item writes around it. moto's backend has no locks, so its threaded server
    can interleave a ``TransactWriteItems`` (check, then write) with another thread's
    ``PutItem``; tests of races would then test moto. Connections are still accepted
    concurrently; moto is bound by the GIL anyway, so little throughput is lost.
    """

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self._app = app
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        with self._lock:
            return list(self._app(environ, start_response))


@contextmanager
def moto_server(port: int | None = None) -> Iterator[str]:
    """Run moto's DynamoDB server on 127.0.0.1 and yield its endpoint URL."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    chosen = port or free_port()
    app = OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
    server = make_server(
        "127.0.0.1", chosen, app, threaded=True, request_handler=MotoRequestHandler
    )
    thread = threading.Thread(target=server.serve_forever, name="dynamodb", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{chosen}"
    finally:
        server.shutdown()
        thread.join()
