"""moto's DynamoDB server on 127.0.0.1: the fallback engine where no Java 17+ runs, and the
server for what DynamoDB Local does not serve (Secrets Manager, the delivery queue, the
event bus, SES), its SQS held to SQS's limits (`local.events.strict_sqs`), with a stand-in
for End User Messaging's SMS and voice in front (`local.engines.sms_voice`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

import local.events.strict_sqs  # noqa: F401 - moto's SQS held to SQS's limits
from local.engines.clients import free_port
from local.engines.slack import SlackFront
from local.engines.sms_voice import SmsVoiceFront

WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
MEMORY_CAP_MB = 2048
"""What ``make dev``'s moto fallback may hold before it refuses writes. moto deep-copies
the whole table in every ``TransactWriteItems`` and its memory keeps growing (measured:
about 25 MB a create at 100 demo incidents, 70 MB with the table's stream): without a cap a
long session grew past 20 GB until the kernel killed it."""


def resident_mb() -> float:
    """This process's resident memory (Linux ``VmRSS``), in MB; 0 where unknown."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class OneRequestAtATime:
    """WSGI middleware that lets one request at a time into moto's backend.

    DynamoDB applies every request atomically, and a transaction is serializable with
    the single-item writes around it. moto's backend has no locks, so its threaded server
    can interleave a ``TransactWriteItems`` (check, then write) with another thread's
    ``PutItem``; tests of races would then test moto. Connections are still accepted
    concurrently; moto is bound by the GIL anyway, so little throughput is lost.
    """

    def __init__(
        self,
        app: Callable[..., Iterable[bytes]],
        memory_cap_mb: float | None = None,
        after_sqs: Callable[[], None] | None = None,
    ) -> None:
        self._app = app
        self._lock = threading.Lock()
        self._cap = memory_cap_mb
        self._after_sqs = after_sqs

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        target = str(environ.get("HTTP_X_AMZ_TARGET", ""))
        if self._cap is not None and target.endswith(WRITES) and resident_mb() > self._cap:
            return _refused(start_response, self._cap)
        with self._lock:
            answer = list(self._app(environ, start_response))
            if self._after_sqs is not None and target.startswith("AmazonSQS."):
                self._after_sqs()  # before the answer leaves: what it acknowledged is kept
            return answer


def _refused(start_response: Callable[..., Any], cap: float) -> list[bytes]:
    """DynamoDB's answer to a request over a limit, naming this one."""
    body = json.dumps(
        {
            "__type": "com.amazonaws.dynamodb.v20120810#LimitExceededException",
            "message": f"the moto fallback holds over {cap:,.0f} MB: restart make dev, or "
            "install Java 17 for DynamoDB Local",
        }
    ).encode()
    start_response("400 Bad Request", [("Content-Type", "application/x-amz-json-1.0")])
    return [body]


@contextmanager
def moto_server(
    port: int | None = None,
    memory_cap_mb: float | None = None,
    after_sqs: Callable[[], None] | None = None,
) -> Iterator[str]:
    """Run moto's server on 127.0.0.1 and yield its endpoint URL; with `memory_cap_mb`,
    writes are refused once this process holds more; `after_sqs` runs after each SQS
    request, before its answer (`local.events.queue_journal`)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    chosen = port or free_port()
    backends = DomainDispatcherApplication(create_backend_app)
    moto = OneRequestAtATime(backends, memory_cap_mb, after_sqs)
    app = SlackFront(SmsVoiceFront(moto))
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
