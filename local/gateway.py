"""A local stand-in for API Gateway: HTTP on 127.0.0.1 in, proxy events to the real
handlers, their responses back out.

Requests are matched against the shared route table, and the Cognito authorizer is
emulated with dev tokens: ``Authorization: <token>`` (or ``Bearer <token>``) becomes
the same claims the deployed API passes on; anything else is a 401, as in the cloud.

Connections are served on threads, but the handlers see one event at a time, as a Lambda
container does: Powertools keeps the event being served on the ``BaseRouter`` class
(``current_event``, ``lambda_context``), shared by every resolver of the process, so two
events in flight would read each other's identity. Each page still fans out on its own
thread pool.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from incidents.store import Caller
from lambdas.routes import Group
from local.api_events import LocalLambdaContext, claims_of, match_route, proxy_event
from local.openapi import openapi_document, openapi_json, swagger_page

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
BODILESS = {HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED}


class LocalGateway(ThreadingHTTPServer):
    """An HTTP server whose requests go to the Lambda handlers of the route table."""

    daemon_threads = True
    request_queue_size = 128
    """Listen backlog; socketserver's default of 5 resets connections under modest load."""

    def __init__(
        self,
        address: tuple[str, int],
        handlers: Mapping[Group, Handler],
        tokens: Mapping[str, Caller],
    ) -> None:
        super().__init__(address, _RequestHandler)
        self.handlers = dict(handlers)
        self._one_event = threading.Lock()
        self.tokens = dict(tokens)
        document = openapi_document()
        self.openapi = openapi_json(document)
        self.swagger = swagger_page(document)

    def respond(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one request."""
        url = urlsplit(target)
        if method == "GET" and url.path == "/openapi.json":
            return 200, {"Content-Type": "application/json"}, self.openapi.encode()
        if method == "GET" and url.path in {"/docs", "/docs/"}:
            return 200, {"Content-Type": "text/html; charset=utf-8"}, self.swagger.encode()
        found = match_route(method, url.path)
        if found is None:
            return _error(HTTPStatus.NOT_FOUND, "not_found", "no such route")
        _, route, parameters = found
        caller = self.tokens.get(_token(headers))
        if caller is None:
            return _error(HTTPStatus.UNAUTHORIZED, "unauthorized", "missing or invalid token")
        event = proxy_event(
            route,
            {name: unquote(value) for name, value in parameters.items()},
            query=parse_qs(url.query, keep_blank_values=True),
            headers=headers,
            body=body.decode() if body else None,
            claims=claims_of(caller),
        )
        with self._one_event:
            response = self.handlers[route.group](event, LocalLambdaContext())
        return _from_proxy_response(response)


class _RequestHandler(BaseHTTPRequestHandler):
    server: LocalGateway
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status, headers, payload = self.server.respond(
            self.command, self.path, dict(self.headers.items()), body
        )
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status in BODILESS:
            payload = b""  # HTTP: no body and no Content-Length on these
        else:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """The access log line, with the request line clipped: a URL is no place for 10 KB."""
        line = self.requestline if len(self.requestline) <= 200 else self.requestline[:200] + "…"
        self.log_message('"%s" %s %s', line, str(code), str(size))

    # http.server dispatches on these names.
    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle  # noqa: N815


def _token(headers: Mapping[str, str]) -> str:
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), "")
    return value.removeprefix("Bearer ").strip()


def _error(status: HTTPStatus, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"code": code, "message": message}).encode()
    return status.value, {"Content-Type": "application/json"}, body


def _from_proxy_response(response: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes]:
    headers = {str(k): str(v) for k, v in (response.get("headers") or {}).items()}
    for name, values in (response.get("multiValueHeaders") or {}).items():
        headers[str(name)] = ", ".join(str(v) for v in values)
    raw = response.get("body") or ""
    body = base64.b64decode(raw) if response.get("isBase64Encoded") else str(raw).encode()
    return int(response["statusCode"]), headers, body
