"""What every handler shares: a resolver whose every error is JSON ``{"code", "message"}``,
the caller taken from the authorizer's claims, and routes registered from the route table."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler import (
    APIGatewayRestResolver,
    Response,
    content_types,
)
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.openapi.exceptions import (
    RequestUnsupportedContentType,
    RequestValidationError,
)
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel

from dynashard import DynashardError, InvalidCursorError, WriteThrottledError
from dynashard.errors import StreamFailedError
from dynashard.throttling import error_code, is_throttling
from incidents.errors import DomainError
from lambdas.http.admission import admit_request, admitted, release
from lambdas.http.conditional import NotModifiedError, not_modified
from lambdas.http.cors import request_header, with_cors
from lambdas.http.json_body import JsonBodiesOnly, strict_json
from lambdas.http.proxy import add_headers, clipped, error_headers, proxy_error
from lambdas.http.responses import (
    ErrorCode,
    documented_responses,
    limit_description,
    too_large_message,
)
from lambdas.http.statuses import CountedRefusalError, status_of
from lambdas.routes import ROUTE_OF, ROUTES, resolver_rule
from lambdas.runtime import logger, metrics, tracer
from lambdas.settings import allowed_origins

MAX_LOCATION_PART = 40

F = TypeVar("F", bound=Callable[..., Any])


def error_response(status: int, code: ErrorCode | str, message: str) -> Response[str]:
    """The API's one error shape; the message is clipped, so no error echoes a large input.
    A throttled or unavailable answer says when to try again (``Retry-After``)."""
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=json.dumps({"code": ErrorCode(code).value, "message": clipped(message)}),
        headers=error_headers(status) or None,
    )


M = TypeVar("M", bound=BaseModel)


def answer(
    app: APIGatewayRestResolver,
    body: M,
    *,
    status: int = 200,
    etag: str | None = None,
    location: str | None = None,
) -> Response[M]:
    """`body` with the headers a client reads instead of the body: ``ETag`` (quoted here)
    and, for what a 201 created, ``Location`` (below the stage's prefix, if any)."""
    headers = {}
    if etag is not None:
        headers["ETag"] = f'"{etag}"'
    if location is not None:
        headers["Location"] = _stage_prefix(app) + location
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=body,
        headers=headers,
    )


def _stage_prefix(app: APIGatewayRestResolver) -> str:
    """What precedes the route's path in the URL the client called (``/prod`` on an
    execute-api URL; nothing on a custom domain mapped at its root, or locally)."""
    event = app.current_event
    called, path = event.request_context.path or "", event.path
    return called[: -len(path)] if path and called.endswith(path) else ""


def public_url(app: APIGatewayRestResolver, path: str, scheme: str | None = None) -> str:
    """`path` of this API as a client outside reaches it: the scheme it called with (API
    Gateway says which), its host and the stage's prefix; `scheme` in place of the first."""
    event = app.current_event
    headers = event.headers or {}
    called = scheme or request_header(headers, "X-Forwarded-Proto") or "https"
    host = request_header(headers, "Host") or event.request_context.domain_name
    return f"{called}://{host}{_stage_prefix(app)}{path}"


def no_content() -> Response[None]:
    """A 204: no body, no Content-Type, as HTTP has it (a JSON ``null`` would be a body)."""
    return Response(status_code=204, body=None, content_type=None)


def _domain(error: DomainError) -> Response[str]:
    return error_response(status_of(error), error.code, str(error))


def _counted_refusal(refusal: CountedRefusalError) -> Response[str]:
    response = _domain(refusal.error)
    response.headers.update(refusal.headers)
    return response


def _invalid(error: RequestValidationError) -> Response[str]:
    return error_response(400, "validation_error", _describe(error))


def _cursor(error: InvalidCursorError) -> Response[str]:
    return error_response(400, "invalid_cursor", f"{error}; start again without a cursor")


def _throttled(_: Exception) -> Response[str]:
    return error_response(429, "throttled", "the table is busy; retry with back-off")


def _bad_input(error: DynashardError) -> Response[str]:
    return error_response(400, "bad_request", str(error))


def _dynamodb(error: ClientError) -> Response[str]:
    if is_throttling(error):
        return _throttled(error)
    if error_code(error) == "LimitExceededException":  # the engine refuses more work for now
        return error_response(503, "unavailable", "the table refuses writes for now; retry later")
    logger.exception("DynamoDB error")
    return error_response(500, "internal_error", "internal error")


def _no_answer(_: BotoCoreError) -> Response[str]:
    """A service the API calls (the table, the delivery queue) did not answer in time or
    could not be reached: nothing the client did wrong, and worth a retry."""
    logger.warning("a dependency did not answer", exc_info=True)
    return error_response(
        503, "unavailable", "a service behind the API did not answer; retry later"
    )


def _unexpected(_: Exception) -> Response[str]:
    logger.exception("unhandled error")
    return error_response(500, "internal_error", "internal error")


def _unsupported(_: Exception) -> Response[str]:
    return error_response(415, "unsupported_media_type", "send the body as application/json")


def _no_route(_: Exception) -> Response[str]:
    return error_response(404, "not_found", "no such route")


ERROR_HANDLERS: list[tuple[type[Exception] | list[type[Exception]], Callable[..., Any]]] = [
    (NotModifiedError, not_modified),
    (CountedRefusalError, _counted_refusal),
    (DomainError, _domain),
    (RequestUnsupportedContentType, _unsupported),
    (RequestValidationError, _invalid),
    (InvalidCursorError, _cursor),
    ([WriteThrottledError, StreamFailedError], _throttled),
    (DynashardError, _bad_input),
    (ClientError, _dynamodb),
    (BotoCoreError, _no_answer),
    (Exception, _unexpected),
]
"""Powertools picks the handler of the most specific class in the error's MRO."""


class StrictPathResolver(APIGatewayRestResolver):
    """Powertools' REST resolver with routes that must match the whole path: its patterns end
    in ``$``, which in Python also matches before a final newline, so ``/users/<id>%0A`` was
    served as ``/users/<id>`` (and a DELETE with one removed the participant)."""

    @staticmethod
    def _compile_regex(rule: str, base_regex: str = r"^{}/*\Z") -> re.Pattern[str]:
        pattern: re.Pattern[str] = ApiGatewayResolver._compile_regex(rule, base_regex)
        return pattern


def new_resolver(
    extra_handlers: list[tuple[type[Exception], Callable[..., Any]]] | None = None,
) -> APIGatewayRestResolver:
    """A REST API resolver with request/response validation and the API's error mapping."""
    app = StrictPathResolver(enable_validation=True, json_body_deserializer=strict_json)
    for exception, handle in [*ERROR_HANDLERS, *(extra_handlers or [])]:
        app.exception_handler(exception)(handle)
    app.not_found(_no_route)
    app._request_validation_middleware = JsonBodiesOnly()  # Powertools' slot for it
    return app


def route(app: APIGatewayRestResolver, name: str) -> Callable[[F], F]:
    """Register a function for the route table's entry `name`."""
    entry = ROUTES[name]
    decorator: Callable[[F], F] = app.route(
        resolver_rule(entry),
        entry.method,
        summary=entry.summary,
        description=limit_description(entry),
        operation_id=name,
        tags=[entry.group.value],
        status_code=entry.status,
        responses=documented_responses(entry),
    )
    return decorator


PLUS_HINT = " (a + in a query string means a space: write it as %2B, e.g. +01:00 as %2B01:00)"


def _query_hint(problem: Mapping[str, Any]) -> str:
    """What a query value's problem likely is: given twice, or a + read as a space."""
    given = problem.get("input")
    values = given if isinstance(given, list) else [given]
    if len(values) > 1 and problem.get("type") != "list_type":
        return f" (given {len(values)} times: it takes one value)"
    return PLUS_HINT if any(isinstance(v, str) and " " in v for v in values) else ""


def _describe(error: RequestValidationError) -> str:
    parts = []
    for problem in error.errors()[:5]:
        location = problem.get("loc", ())
        where = ".".join(str(part)[:MAX_LOCATION_PART] for part in location)
        hint = _query_hint(problem) if location[:1] == ("query",) else ""
        parts.append(f"{where}: {problem.get('msg', 'invalid')}{hint}")
    return "; ".join(parts) or "invalid request"


def _slash_in_path_parameter(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """API Gateway decodes ``%2F`` into a path parameter (``/incidents/by-number/1%2F`` is
    ``number = "1/"``) while the resolver matches the decoded path, where it reads as a
    separator: no parameter of this API holds a ``/``, so it is refused here, naming it."""
    for name, value in (event.get("pathParameters") or {}).items():
        if "/" in str(value):
            return proxy_error(400, "validation_error", f"path.{name}: must not contain '/'")
    return None


def _too_large(event: Mapping[str, Any]) -> dict[str, Any] | None:
    """A 413 for a body over its route's `max_body`, before it is parsed."""
    route = ROUTE_OF.get((str(event.get("httpMethod")), str(event.get("resource"))))
    body = event.get("body") or ""
    if route is None or route.max_body is None or len(body.encode()) <= route.max_body:
        return None
    return proxy_error(
        413, "payload_too_large", too_large_message(len(body.encode()), route.max_body)
    )


HANDLERS_BY_CLASS: dict[type[Exception], Callable[..., Any]] = {
    kind: handle
    for kinds, handle in ERROR_HANDLERS
    for kind in (kinds if isinstance(kinds, list) else [kinds])
}


def _handled(error: Exception) -> Response[Any]:
    """The answer the resolver would give `error` (an error outside it: admission's)."""
    for kind in type(error).__mro__:
        if kind in HANDLERS_BY_CLASS:
            response: Response[Any] = HANDLERS_BY_CLASS[kind](error)
            return response
    raise error


def _proxy_response(response: Response[Any]) -> dict[str, Any]:
    """`response` as API Gateway's proxy integration takes it."""
    multi: dict[str, list[str]] = {"Content-Type": [str(response.content_type)]}
    for name, value in response.headers.items():
        multi[name] = value if isinstance(value, list) else [value]
    return {
        "statusCode": response.status_code,
        "multiValueHeaders": multi,
        "body": response.body,
        "isBase64Encoded": False,
    }


def lambda_handler(
    app: APIGatewayRestResolver, before: Callable[[LambdaContext], None] | None = None
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """The Lambda entry point of a resolver: correlation id, tracing and metrics around it."""
    origins = allowed_origins(os.environ)

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @tracer.capture_lambda_handler
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        if before:
            before(context)
        try:
            token = admit_request(event)
        except Exception as refused:
            response = _proxy_response(_handled(refused))
        else:
            try:
                response = (
                    _slash_in_path_parameter(event)
                    or _too_large(event)
                    or app.resolve(event, context)
                )
                admission = admitted()
                if admission is not None:
                    add_headers(response, admission.headers)
            finally:
                release(token)
        if not origins:
            return response
        return with_cors(response, request_header(event.get("headers"), "Origin"), origins)

    return handler
