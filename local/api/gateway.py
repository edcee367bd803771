"""A local stand-in for API Gateway: requests in, proxy events to the real handlers, their
responses back out, as a WSGI application that `local.api.server` serves.

Requests are matched against the shared route table and pass the API's authorizer: an API
key (``mk_…``) goes through the real authorizer function, and a dev token stands in for a
Cognito ID token (``Authorization: <token>`` or ``Bearer <token>``); either becomes the
context the deployed authorizer passes on, cached per header value for the authorizer's
TTL as API Gateway caches it; anything else is a 401, as in the cloud.

Each worker process holds one `LocalGateway` and serves one event at a time, as a Lambda
container does: Powertools keeps the event being served on the ``BaseRouter`` class
(``current_event``, ``lambda_context``), so a process must never run two events at once.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from http import HTTPStatus
from typing import Any
from urllib.parse import SplitResult, parse_qs, unquote, urlsplit

from incidents.access.api_keys import KEY_PREFIX
from incidents.store import Caller
from lambdas import authorizer
from lambdas.http.cors import preflight_headers, request_header, response_headers
from lambdas.http.principal import context_of
from lambdas.http.responses import GATEWAY_TOO_LARGE
from lambdas.routes import ROUTES, Group
from lambdas.settings import allowed_origins, authorizer_cache_seconds
from local.api.call_log import RUNNING
from local.api.proxy_events import (
    LOCAL_API_ID,
    LOCAL_STAGE,
    LocalLambdaContext,
    match_route,
    proxy_event,
)
from local.openapi.document import openapi_document, swagger_page
from local.outbox import outbox_messages, outbox_page

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]
StartResponse = Callable[[str, Iterable[tuple[str, str]]], Any]
BODILESS = {HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED}
MAX_GATEWAY_PAYLOAD = 10 * 1024 * 1024
"""API Gateway's limit on a request: above it, 413 without reading the body."""
MAX_LAMBDA_PAYLOAD = 6 * 1024 * 1024
"""A synchronous Lambda invocation's payload limit (the body is most of the event)."""
JSON, HTML = "application/json", "text/html; charset=utf-8"
OUTBOX = "/outbox"
"""``make dev``'s outbox of pages sent (`local.outbox`); not a route of the deployed API."""
METHOD_ARN = f"arn:aws:execute-api:us-east-1:123456789012:{LOCAL_API_ID}/{LOCAL_STAGE}/GET/"


class LocalGateway:
    """The handlers of the route table behind the emulated authorizer, CORS and the
    gateway's payload limits."""

    def __init__(
        self,
        handlers: Mapping[Group, Handler],
        tokens: Mapping[str, Caller],
        examples: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`tokens`: dev tokens and the people they sign in; `examples`: parameter examples
        of this table's data (Swagger UI prefills them)."""
        self.handlers = dict(handlers)
        self.clock = clock
        self.cache_seconds = authorizer_cache_seconds(os.environ)
        self._cache: dict[str, tuple[float, dict[str, str]]] = {}
        self.serving: Group | None = None
        """The group whose handler runs now, for the call log."""
        self.tokens = dict(tokens)
        self.origins = allowed_origins(os.environ)
        document = openapi_document(examples)
        compact = json.dumps(document, separators=(",", ":"))
        openapi = _served(JSON, compact.encode())
        swagger = _served(HTML, swagger_page(document).encode())
        self.documents = {"/openapi.json": openapi, "/docs": swagger, "/docs/": swagger}

    def respond(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """Status, headers and body for one request; CORS as the deployed API adds it (the
        handlers add their own; the gateway's answers get the same)."""
        if method == "OPTIONS":
            return _preflight(
                urlsplit(target).path, request_header(headers, "Origin"), self.origins
            )
        status, answer, payload = self._answer(method, target, headers, body)
        if self.origins:
            cors = response_headers(request_header(headers, "Origin"), self.origins)
            if "Vary" in answer and "Vary" in cors:  # the answer varies with each, once
                named = [*answer["Vary"].split(", "), *cors["Vary"].split(", ")]
                cors["Vary"] = ", ".join(dict.fromkeys(named))
            answer = {**answer, **cors}
        return status, answer, payload

    def _answer(
        self, method: str, target: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(target)
        if len(body) > MAX_LAMBDA_PAYLOAD:
            return _error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large", GATEWAY_TOO_LARGE
            )
        if method == "GET" and url.path in self.documents:
            path = url.path
            if parse_qs(url.query).get("format") == ["json"]:  # Swagger UI's link to it
                path = "/openapi.json"
            plain, packed = self.documents[path]
            accepted = request_header(headers, "Accept-Encoding").lower()
            return packed if "gzip" in accepted else plain
        if method == "GET" and url.path == OUTBOX:
            wants_json = "application/json" in request_header(headers, "Accept")
            kind, page = outbox_page(outbox_messages(), wants_json)
            return HTTPStatus.OK, {"Content-Type": kind, "Cache-Control": "no-store"}, page
        return self._invoke(method, url, headers, body)

    def _invoke(
        self, method: str, url: SplitResult, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        """The route's handler, behind the emulated authorizer."""
        found = match_route(method, url.path)
        if found is None:
            return _error(HTTPStatus.NOT_FOUND, "not_found", "no such route")
        _, route, parameters = found
        context = self._authorize(headers) if route.gateway_authorized else None
        if context is None and route.gateway_authorized:  # else its handler checks the key
            return _error(HTTPStatus.UNAUTHORIZED, "unauthorized", "missing or invalid token")
        try:
            text = body.decode() if body else None
        except UnicodeDecodeError as error:
            message = f"the body is not UTF-8 (byte {error.start})"
            return _error(HTTPStatus.BAD_REQUEST, "invalid_json", message)
        event = proxy_event(
            route,
            {name: unquote(value) for name, value in parameters.items()},
            query=parse_qs(url.query, keep_blank_values=True),
            headers={**headers, "X-Forwarded-Proto": "http"},  # as API Gateway adds it
            body=text,
            authorizer=context,
        )
        self.serving = route.group
        try:
            response = self.handlers[route.group](event, LocalLambdaContext())
        finally:
            self.serving = None
        return _from_proxy_response(response)

    def _authorize(self, headers: Mapping[str, str]) -> dict[str, str] | None:
        """The authorizer's context for the request's ``Authorization`` (None: a 401),
        from the cache while the header's last Allow is younger than the TTL."""
        header = request_header(headers, "Authorization")
        cached = self._cache.get(header)
        if cached and cached[0] > self.clock():
            return cached[1]
        context = self._identify(authorizer.credential(headers))
        if context is not None and self.cache_seconds:
            self._cache[header] = (self.clock() + self.cache_seconds, context)
        return context

    def _identify(self, token: str) -> dict[str, str] | None:
        person = self.tokens.get(token)
        if person is not None:
            return context_of(person)
        if not token.startswith(KEY_PREFIX):
            return None
        event = {"type": "REQUEST", "methodArn": METHOD_ARN, "headers": {"Authorization": token}}
        running = RUNNING.set("authorizer")
        try:
            allowed = authorizer.handler(event)
        except PermissionError:
            return None
        finally:
            RUNNING.reset(running)
        return {"principalId": allowed["principalId"], **allowed["context"]}

    def __call__(
        self, environ: MutableMapping[str, Any], start_response: StartResponse
    ) -> list[bytes]:
        """The WSGI application: the server has parsed the request (chunked bodies, one
        Content-Length, limits); the gateway's 10 MB limit is checked before the body is
        read."""
        length = environ.get("CONTENT_LENGTH") or ""
        stream = environ["wsgi.input"]
        if length.isdecimal() and int(length) > MAX_GATEWAY_PAYLOAD:
            status, headers, payload = _error(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "payload_too_large", GATEWAY_TOO_LARGE
            )
            headers = {**headers, "Connection": "close"}  # the body is not read
        else:
            body = stream.read(MAX_GATEWAY_PAYLOAD + 1)
            method = environ["REQUEST_METHOD"]
            target = environ.get("RAW_URI") or environ.get("PATH_INFO", "/")
            status, headers, payload = self.respond(method, target, _headers(environ), body)
        if status in BODILESS or environ["REQUEST_METHOD"] == "HEAD":
            payload = b""  # HTTP: no body on these (and no Content-Length on a 204)
        else:
            headers = {**headers, "Content-Length": str(len(payload))}
        start_response(f"{status} {HTTPStatus(status).phrase}", list(headers.items()))
        return [payload]


Served = tuple[int, dict[str, str], bytes]


def _served(content_type: str, body: bytes) -> tuple[Served, Served]:
    """A document's answers: as is, and gzipped for a client that accepts it (browsers and
    HTTP libraries do; the document is compact JSON, a tenth of that once compressed)."""
    headers = {"Content-Type": content_type, "Vary": "Accept-Encoding"}
    packed = gzip.compress(body, mtime=0)
    return (200, headers, body), (200, {**headers, "Content-Encoding": "gzip"}, packed)


def _headers(environ: Mapping[str, Any]) -> dict[str, str]:
    """The request's headers from a WSGI environ, named as clients usually write them."""
    headers = {
        name[5:].replace("_", "-").title(): str(value)
        for name, value in environ.items()
        if name.startswith("HTTP_")
    }
    for name in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(name):
            headers[name.replace("_", "-").title()] = str(environ[name])
    return headers


def _preflight(path: str, origin: str, origins: list[str]) -> tuple[int, dict[str, str], bytes]:
    """A CORS preflight, answered by the gateway as API Gateway's mock integration does. A
    path no route has gets the methods of every route: the browser then sends the request
    and shows its JSON 404, instead of failing the preflight with a network error."""
    methods = {r.method for r in ROUTES.values() if match_route(r.method, path)}
    methods = methods or {r.method for r in ROUTES.values()}
    return 204, preflight_headers(origin, origins, [*sorted(methods), "OPTIONS"]), b""


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
