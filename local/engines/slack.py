"""A Slack incoming webhook's stand-in for ``make dev`` and the suites, in front of moto's
server: every POST below `WEBHOOKS_PATH` is one channel's webhook. It keeps each message
and answers as Slack does: ``ok``; ``400 invalid_payload`` for a body without ``text``;
``429`` with ``Retry-After`` past one message a second to a channel (Slack's limit, short
bursts aside). Its messages are listed as JSON at `MESSAGES_PATH` (the outbox reads it)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

WEBHOOKS_PATH = "/_stand-in/slack/services/"
MESSAGES_PATH = "/_stand-in/slack/messages.json"
MIN_GAP_SECONDS = 1.0
"""One message a second to a channel."""
Handler = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass
class SlackStandIn:
    """What the stand-in was sent, and when each channel last took a message."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    last: dict[str, float] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    lock: threading.Lock = field(default_factory=threading.Lock)

    def post(self, url: str, body: bytes) -> tuple[str, list[tuple[str, str]], bytes]:
        """Slack's answer to `body` posted to the webhook at `url`: status, headers, body."""
        try:
            text = json.loads(body or b"{}").get("text")
        except (ValueError, AttributeError):
            text = None
        if not isinstance(text, str) or not text:
            return "400 Bad Request", [], b"invalid_payload"
        with self.lock:
            now = self.clock()
            waited = now - self.last.get(url, -MIN_GAP_SECONDS)
            if waited < MIN_GAP_SECONDS:
                return "429 Too Many Requests", [("Retry-After", "1")], b"rate_limited"
            self.last[url] = now
            self.messages.append({"channel": "slack", "to": url, "body": text,
                                  "message_id": f"slack-{len(self.messages) + 1}"})  # fmt: skip
        return "200 OK", [], b"ok"


SLACK = SlackStandIn()
"""The stand-in of this process's server (one server a process)."""


class SlackFront:
    """WSGI middleware: posts to a Slack webhook path to `SLACK`, the rest to `app`."""

    def __init__(self, app: Handler) -> None:
        self._app = app

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        path = str(environ.get("PATH_INFO", ""))
        if path == MESSAGES_PATH:
            start_response("200 OK", [("Content-Type", "application/json")])
            return [json.dumps({"messages": SLACK.messages}).encode()]
        if not path.startswith(WEBHOOKS_PATH) or environ.get("REQUEST_METHOD") != "POST":
            return self._app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        host = environ.get("HTTP_HOST", "127.0.0.1")
        posted = environ["wsgi.input"].read(length)
        status, headers, body = SLACK.post(f"http://{host}{path}", posted)
        start_response(status, [("Content-Type", "text/plain"), *headers])
        return [body]
