"""An HTTPS front for the local API: clients that accept only ``https://`` base URLs (the
official PagerDuty SDK) reach ``make dev`` through it, trusting a test CA (trustme)."""

from __future__ import annotations

import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import trustme

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "host", "content-length"}


def _forwarding(target: str) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        """Each request sent on to `target` as it came, its answer back as it went."""

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            request = urllib.request.Request(
                target + self.path, data=body, method=self.command, headers=headers
            )
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    status, answer, text = response.status, response.headers, response.read()
            except urllib.error.HTTPError as error:
                status, answer, text = error.code, error.headers, error.read()
            self.send_response(status)
            for name, value in answer.items():
                if name.lower() not in HOP_BY_HOP:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the local API logs each request."""

    return Forward


@contextmanager
def https_front(target: str) -> Iterator[tuple[str, ssl.SSLContext]]:
    """An ``https://127.0.0.1:<port>`` URL forwarding to `target`, and a client context
    that trusts its certificate."""
    ca = trustme.CA()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _forwarding(target))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    trusted = ssl.create_default_context()
    ca.configure_trust(trusted)
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", trusted
    finally:
        server.shutdown()
        server.server_close()
