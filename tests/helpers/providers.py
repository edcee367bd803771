"""Stand-ins for the providers that carry messages to people: a Slack incoming webhook on
127.0.0.1 answering as Slack does, and what moto's SES v2 server sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends


@dataclass
class Slack:
    """A Slack incoming webhook's stand-in: keeps each JSON body and answers the next of
    `answers` (then 200 ``ok``), a 429 with ``Retry-After`` as Slack sends it."""

    answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str]]:
        self.bodies.append(body)
        return self.answers.pop(0) if self.answers else (200, {})


@contextmanager
def serving_slack() -> Iterator[Slack]:
    """A `Slack` stand-in served until the block ends."""
    stand_in = Slack()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            status, headers = stand_in.answer(json.loads(raw))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(b"ok" if status == 200 else b"rate_limited")

        def log_message(self, *_: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    stand_in.url = f"http://127.0.0.1:{server.server_address[1]}/services/T0/B0/x"
    try:
        yield stand_in
    finally:
        server.shutdown()
        server.server_close()


def emails_sent() -> list[Any]:
    """Every message moto's SES (in this process's server) has sent."""
    return list(ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages)
