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
import os
import sys
import threading
from collections.abc import Callable, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from incidents.store import Caller
from lambdas.routes import REQUEST_HEADERS, ROUTES, Group
from lambdas.settings import allowed_origins
from local.api_events import LocalLambdaContext, claims_of, match_route, proxy_event
from local.openapi import openapi_document, openapi_json, swagger_page

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
BODILESS = {HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED}
MAX_GATEWAY_PAYLOAD = 10 * 1024 * 1024
"""API Gateway's limit on a request: above it, 413 without reading the body."""
MAX_LAMBDA_PAYLOAD = 6 * 1024 * 1024
"""A synchronous Lambda invocation's payload limit (the body is most of the event)."""
TOO_LARGE = "the request body is above the API's limit (6 MB)"
PREFLIGHT_MAX_AGE = 3600
DRAIN_SECONDS = 5.0
JSON, HTML = "application/json", "text/html; charset=utf-8"


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
        self._stopping = False
        self.serving: Group | None = None
        """The group whose handler runs now (one at a time), for the call log."""
        self.tokens = dict(tokens)
        self.origins = allowed_origins(os.environ)
        document = openapi_document()
        openapi = (200, {"Content-Type": "application/json"}, openapi_json(document).encode())
        swagger = (
            200,
            {"Content-Type": "text/html; charset=utf-8"},
            swagger_page(document).encode(),
        )
        self.documents = {"/openapi.json": openapi, "/docs": swagger, "/docs/": swagger}

    def handle_error(self, request: object, client_address: tuple[str, int]) -> None:
        """A client that hangs up mid-response (as every client does when `make dev` stops
        under load) is normal: no traceback; anything else in one line."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            print(f"request from {client_address[0]} failed: {error!r}", file=sys.stderr)

    def drain(self, timeout: float) -> bool:
        """Stop serving events: the one in flight may finish (up to `timeout` seconds),
        queued ones get a 503. True if nothing is running any more."""
        self._stopping = True
        if not self._one_event.acquire(timeout=timeout):
            return False
        self._one_event.release()
        return True

    def respond(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one request; CORS as the deployed API adds it."""
        status, answer, payload = self._answer(method, target, headers, body)
        origin = _header(headers, "Origin")
        if origin in self.origins and "Access-Control-Allow-Origin" not in answer:
            answer = {**answer, "Access-Control-Allow-Origin": origin, "Vary": "Origin"}
        return status, answer, payload

    def _answer(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(target)
        if len(body) > MAX_LAMBDA_PAYLOAD:
            return _error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large", TOO_LARGE)
        if method == "OPTIONS":
            return _preflight(url.path)
        if method == "GET" and url.path in self.documents:
            return self.documents[url.path]
        return self._invoke(method, url, headers, body)

    def _invoke(
        self, method: str, url: SplitResult, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """The route's handler, behind the emulated authorizer."""
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
            body=body.decode(errors="replace") if body else None,  # as API Gateway passes it
            claims=claims_of(caller),
        )
        with self._one_event:
            if self._stopping:
                return _error(HTTPStatus.SERVICE_UNAVAILABLE, "stopping", "the API is stopping")
            self.serving = route.group
            try:
                response = self.handlers[route.group](event, LocalLambdaContext())
            finally:
                self.serving = None
        return _from_proxy_response(response)


class _RequestHandler(BaseHTTPRequestHandler):
    server: LocalGateway
    protocol_version = "HTTP/1.1"

    def _handle(self) -> None:
        length = _content_length(self.headers.get("Content-Length"))
        if length is None or length > MAX_GATEWAY_PAYLOAD:
            self.close_connection = True  # the body is not read: the connection cannot go on
            status, headers, payload = _error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large", TOO_LARGE
            )
        else:
            body = self.rfile.read(length) if length else b""
            status, headers, payload = self.server.respond(
                self.command, self.path, dict(self.headers.items()), body
            )
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status in BODILESS or self.command == "HEAD":
            payload = b""  # HTTP: no body on these (and no Content-Length on a 204)
        if status not in BODILESS:
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """The access log line, with the request line clipped: a URL is no place for 10 KB."""
        line = self.requestline if len(self.requestline) <= 200 else self.requestline[:200] + "…"
        self.log_message('"%s" %s %s', line, str(code), str(size))

    def __getattr__(self, name: str) -> Any:
        """http.server looks up ``do_<METHOD>``; every method goes through the route table, so
        HEAD, TRACE or a made-up method is a JSON 404 as on API Gateway, not a 501."""
        if name.startswith("do_"):
            return self._handle
        raise AttributeError(name)


def _header(headers: Mapping[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name.lower()), "")


def _token(headers: Mapping[str, str]) -> str:
    return _header(headers, "Authorization").removeprefix("Bearer ").strip()


def _content_length(value: str | None) -> int | None:
    """The declared body size; None if it is not a number (the request is refused)."""
    if value is None:
        return 0
    return int(value) if value.strip().isdecimal() else None


def _preflight(path: str) -> tuple[int, dict[str, str], bytes]:
    """A CORS preflight, answered by the gateway as API Gateway's mock integration does."""
    methods = sorted({r.method for r in ROUTES.values() if match_route(r.method, path)})
    if not methods:
        return _error(HTTPStatus.NOT_FOUND, "not_found", "no such route")
    return (
        204,
        {
            "Access-Control-Allow-Methods": ",".join([*methods, "OPTIONS"]),
            "Access-Control-Allow-Headers": ",".join(REQUEST_HEADERS),
            "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE),
        },
        b"",
    )


def _error(status: HTTPStatus, code: str, message: str) -> tuple[int, dict[str, str], bytes]:
    body = json.dumps({"code": code, "message": message}).encode()
    return status.value, {"Content-Type": JSON}, body


def _from_proxy_response(response: Mapping[str, Any]) -> tuple[int, dict[str, str], bytes]:
    headers = {str(k): str(v) for k, v in (response.get("headers") or {}).items()}
    for name, values in (response.get("multiValueHeaders") or {}).items():
        headers[str(name)] = ", ".join(str(v) for v in values)
    raw = response.get("body") or ""
    body = base64.b64decode(raw) if response.get("isBase64Encoded") else str(raw).encode()
    return int(response["statusCode"]), headers, body
