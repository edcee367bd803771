"""A webhook receiver for ``make dev``: verifies each delivery's signature with the
`standardwebhooks` package (as a receiver of yours would) and prints it.

    python -m local.webhook_receiver --port 9000 --secret whsec_...

Answers 204 to a verified delivery, 401 to one whose signature or timestamp does not
verify. The suites use `Receiver` itself, with an answer of their choosing (fail for a
while, hang), and read what it received; each listens on a path of its own, so a delivery
still owed to an earlier test's receiver on a port the system handed out again is
answered 404 and not kept.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from secrets import token_hex
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from incidents.models import parse_timestamp

RECEIVER_URL = "http://127.0.0.1:9000/hooks"
"""Where the receiver listens by default (``--port 9000``)."""

Answer = Callable[["Received"], int]
"""Chooses the status to answer a verified delivery with (it may also wait)."""


@dataclass(frozen=True)
class Received:
    """One delivery as it arrived."""

    webhook_id: str
    headers: dict[str, str]
    body: dict[str, Any]
    verified: bool
    at: float
    status: int
    """What the receiver answered."""

    @property
    def accepted(self) -> bool:
        """Answered 2xx."""
        return 200 <= self.status < 300

    @property
    def latency(self) -> float:
        """Seconds from the event (the body's ``timestamp``) to its arrival."""
        return self.at - parse_timestamp(self.body["timestamp"]).timestamp()


def unique_path() -> str:
    """A path no other receiver listens on."""
    return f"/hooks/{token_hex(8)}"


@dataclass
class Receiver:
    """An HTTP server on 127.0.0.1 that verifies deliveries and keeps them."""

    secrets: list[str]
    answer: Answer = lambda _: 204
    path: str | None = field(default_factory=unique_path)
    """The path it answers on; any path when None (``python -m local.webhook_receiver``)."""
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def verify(self, headers: dict[str, str], raw: bytes) -> bool:
        """Whether any of the secrets verifies the delivery (signature and timestamp)."""
        for secret in self.secrets:
            try:
                Webhook(secret).verify(raw, headers)
                return True
            except WebhookVerificationError:
                continue
        return False

    def handle(self, headers: dict[str, str], raw: bytes) -> int:
        """Keep one delivery and choose its answer."""
        verified = self.verify(headers, raw)
        body = json.loads(raw) if raw else {}
        got = Received(headers.get("webhook-id", ""), headers, body, verified, time.time(), 401)
        if verified:
            got = dataclasses.replace(got, status=self.answer(got))
        else:
            print(f"refused {got.webhook_id}: signature or timestamp", file=sys.stderr, flush=True)
        with self.lock:
            self.received.append(got)
        return got.status

    def verified(self) -> list[Received]:
        """The verified deliveries so far, in the order they were answered."""
        with self.lock:
            return [r for r in self.received if r.verified]

    def accepted(self) -> list[Received]:
        """The verified deliveries answered 2xx, in the order they were answered."""
        return [r for r in self.verified() if r.accepted]


def out_of_order(received: list[Received]) -> list[str]:
    """The contract's breaches: each delivery of an incident's event n+1 that arrived
    before event n had been accepted (named ``<incident> #<seq> before #<missing>``)."""
    accepted: dict[str, set[int]] = {}
    breaches = []
    for got in received:
        event = got.body["data"]["event"]
        seen = accepted.setdefault(event["incident_id"], set())
        missing = [n for n in range(1, event["seq"]) if n not in seen]
        if missing:
            breaches.append(f"{event['incident_id']} #{event['seq']} before #{missing}")
        if got.accepted:
            seen.add(event["seq"])
    return breaches


def _handler_for(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", "0")))
            status = 404
            if receiver.path is None or self.path == receiver.path:
                status = receiver.handle({k.lower(): v for k, v in self.headers.items()}, raw)
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the receiver prints deliveries, not requests."""

    return Handler


@contextmanager
def serving(receiver: Receiver, port: int = 0) -> Iterator[str]:
    """Serve `receiver` on 127.0.0.1 (`port`, or a free one); yields its URL (its path,
    or ``/hooks`` when it answers on any)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(receiver))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="receiver", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{receiver.path or '/hooks'}"
    finally:
        server.shutdown()
        server.server_close()


def _print(got: Received) -> int:
    body = got.body
    event = body.get("data", {}).get("event", {})
    summary = f"#{event.get('seq')} of {event.get('incident_id')}" if event else ""
    print(f"verified {got.webhook_id} {body.get('type')} {summary}", flush=True)
    print(json.dumps(body, indent=2), flush=True)
    return 204


def main() -> None:
    """Serve until Ctrl-C, printing each verified delivery."""
    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started ignoring it
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", action="append", required=True, help="whsec_...")
    args = parser.parse_args()
    receiver = Receiver(secrets=args.secret, answer=_print, path=None)
    with serving(receiver, args.port) as url:
        print(f"receiving on {url} (any path); Ctrl-C stops", file=sys.stderr, flush=True)
        with suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
